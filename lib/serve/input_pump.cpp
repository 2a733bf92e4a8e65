#include "serve/input_pump.hpp"

#include <array>
#include <vector>

#include "analysis/top_report.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/out_buffer.hpp"

namespace tp::serve {
namespace {

[[noreturn]] void not_a_record(std::string_view problem) {
  throw Error(ExitCode::internal, "trace-serve's own statistics record is not a record: " + std::string(problem));
}

}  // namespace

InputPump::InputPump(ByteSource source, KindTable& kinds, PumpCallbacks callbacks, PumpOptions options)
    : source_(std::move(source)),
      classifier_(kinds),
      callbacks_(std::move(callbacks)),
      options_(std::move(options)),
      statistics_(options_.statistics ? std::move(*options_.statistics) : RunStatistics{}),
      records_at_snapshot_(statistics_.added()),
      thread_([this] { run(); }) {}

InputPump::~InputPump() {
  stop();
  if (thread_.joinable()) thread_.join();
}

std::optional<RunStatistics> InputPump::statistics_at_end() {
  stop();
  if (thread_.joinable()) thread_.join();
  if (options_.top_interval_s <= 0) return std::nullopt;
  return std::move(statistics_);
}

// One good line: classified, named (--elf), counted for the statistics, batched.
simdjson::error_code InputPump::take(NdjsonLine& line, std::uint64_t now) {
  problem_.clear();
  const auto route = classifier_.classify(line.root, problem_);
  if (!route) {
    line.problem = problem_;
    return simdjson::INCORRECT_TYPE;
  }
  if (routes_without_dom() && !shapes_.full()) shapes_.learn(line.text);
  if (options_.keep && !options_.keep(line.text)) return simdjson::SUCCESS;
  const std::optional<std::string> named = options_.symbols ? options_.symbols->named(line.root) : std::nullopt;
  if (options_.top_interval_s > 0) statistics_.add(line.root);
  publish_routed(named ? std::string_view(*named) : line.text, *route, now);
  return simdjson::SUCCESS;
}

bool InputPump::take_quick(std::string_view text, std::uint64_t now) {
  const CheckedLine* line = shapes_.match(text);
  if (line == nullptr) return false;
  if (options_.keep && !options_.keep(text)) return true;
  publish_routed(text, classifier_.route(*line), now);
  return true;
}

void InputPump::publish_routed(std::string_view text, const RecordRoute& route, std::uint64_t now) {
  if (route.cycles_clock && !cycles_clock_.load(std::memory_order_relaxed)) cycles_clock_.store(true);
  builder_.add(text, route, now);
  records_.fetch_add(1, std::memory_order_relaxed);
  if (builder_.bytes() >= options_.batch_bytes) callbacks_.publish(builder_.take());
}

// trace-top's snapshot records, routed and batched like the input's (kinds Top*, port 0).
void InputPump::add_snapshot(std::uint64_t now, bool final) {
  if (options_.top_interval_s <= 0 || now < next_snapshot_us_ || statistics_.added() == records_at_snapshot_) return;
  next_snapshot_us_ = now + static_cast<std::uint64_t>(options_.top_interval_s * 1e6);
  records_at_snapshot_ = statistics_.added();
  OutBuffer snapshot;
  analysis::write_snapshot(snapshot, statistics_.stats(), analysis::ReportOptions{.load = true}, final);
  // Read back as the input is (our own records: one that is not a record is a bug, said).
  NdjsonReader reader(
      [&](NdjsonLine& line) {
        problem_.clear();
        const auto route = classifier_.classify(line.root, problem_);
        if (!route) not_a_record(problem_);
        builder_.add(line.text, *route, now);
        return simdjson::SUCCESS;
      },
      [&](std::uint64_t /*number*/, std::string_view message) { not_a_record(message); });
  reader.feed(snapshot.view());
  reader.finish();
}

void InputPump::run() {
  std::uint64_t now = 0;
  const auto publish = [this] {
    if (!builder_.empty()) callbacks_.publish(builder_.take());
  };
  NdjsonReader reader([&](NdjsonLine& line) { return take(line, now); },
                      [&](std::uint64_t number, std::string_view message) {
                        bad_lines_.fetch_add(1, std::memory_order_relaxed);
                        callbacks_.bad_line(number, message);
                      });
  if (routes_without_dom()) {
    reader.set_quick_handler([&](std::string_view text, std::uint64_t /*number*/) { return take_quick(text, now); });
  }
  std::vector<std::uint8_t> buffer(1U << 20U);
  std::string error;
  try {
    while (!stop_.load(std::memory_order_relaxed)) {
      const ReadResult result = source_.read(buffer, 20);
      if (result.status == ReadStatus::end_of_input) break;
      now = monotonic_us();
      if (result.status == ReadStatus::data) {
        reader.feed(std::span<const char>(reinterpret_cast<const char*>(buffer.data()), result.size));
      }
      add_snapshot(now, false);
      publish();
    }
    reader.finish();
    next_snapshot_us_ = 0;  // the last statistics, whatever the interval
    add_snapshot(monotonic_us(), true);
    publish();
  } catch (const Error& e) {
    publish();
    error = e.what();
  }
  callbacks_.ended(error);
}

}  // namespace tp::serve
