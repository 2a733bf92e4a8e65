#include "serve/input_pump.hpp"

#include <array>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "json/ndjson_reader.hpp"

namespace tp::serve {

InputPump::InputPump(ByteSource source, KindTable& kinds, PumpCallbacks callbacks, std::size_t batch_bytes)
    : source_(std::move(source)),
      classifier_(kinds),
      callbacks_(std::move(callbacks)),
      batch_bytes_(batch_bytes),
      thread_([this] { run(); }) {}

InputPump::~InputPump() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void InputPump::run() {
  std::uint64_t now = 0;
  std::string problem;
  const auto publish = [this] {
    if (!builder_.empty()) callbacks_.publish(builder_.take());
  };
  NdjsonReader reader(
      [&](NdjsonLine& line) {
        problem.clear();
        const auto route = classifier_.classify(line.root, problem);
        if (!route) {
          line.problem = problem;
          return simdjson::INCORRECT_TYPE;
        }
        if (route->cycles_clock && !cycles_clock_.load(std::memory_order_relaxed)) cycles_clock_.store(true);
        builder_.add(line.text, *route, now);
        records_.fetch_add(1, std::memory_order_relaxed);
        if (builder_.bytes() >= batch_bytes_) publish();
        return simdjson::SUCCESS;
      },
      [&](std::uint64_t number, std::string_view message) {
        bad_lines_.fetch_add(1, std::memory_order_relaxed);
        callbacks_.bad_line(number, message);
      });
  std::vector<std::uint8_t> buffer(1U << 20U);
  std::string error;
  try {
    while (!stop_.load(std::memory_order_relaxed)) {
      const ReadResult result = source_.read(buffer, 20);
      if (result.status == ReadStatus::end_of_input) break;
      if (result.status != ReadStatus::data) continue;
      now = monotonic_us();
      reader.feed(std::span<const char>(reinterpret_cast<const char*>(buffer.data()), result.size));
      publish();
    }
    reader.finish();
    publish();
  } catch (const Error& e) {
    publish();
    error = e.what();
  }
  callbacks_.ended(error);
}

}  // namespace tp::serve
