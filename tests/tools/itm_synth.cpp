// itm-synth: writes a deterministic, realistic ITM stream made by the library's encoder
// (console text, RTOS records, markers, counters, DWT PC samples and exceptions, local
// timestamps), for the demo and the benchmarks. Not installed; swo-capture --simulate
// is the user-facing simulator.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <random>

#include "cli/cli.hpp"
#include "itm/encoder.hpp"
#include "itm/tpiu.hpp"

namespace {

using tp::itm::ItmStreamEncoder;

void emit_event(ItmStreamEncoder& enc, std::mt19937& rng, std::uint64_t n) {
  const auto pick = [&](std::uint32_t hi) { return std::uniform_int_distribution<std::uint32_t>(0, hi)(rng); };
  const std::uint32_t what = pick(99);
  if (what < 35) {
    enc.text(0, fmt::format("[{}] task {} sample={} status=ok\n", n, pick(7), pick(100000)));
  } else if (what < 55) {
    const std::uint32_t id = pick(15);
    const std::uint64_t value = n * 1000U + pick(999);
    const std::array<std::uint8_t, 12> record{static_cast<std::uint8_t>(id),
                                              0,
                                              0,
                                              0,
                                              static_cast<std::uint8_t>(value),
                                              static_cast<std::uint8_t>(value >> 8U),
                                              static_cast<std::uint8_t>(value >> 16U),
                                              static_cast<std::uint8_t>(value >> 24U),
                                              static_cast<std::uint8_t>(value >> 32U),
                                              0,
                                              0,
                                              0};
    enc.bytes(3, record, 4);
  } else if (what < 75) {
    enc.packet(tp::itm::make_pc_sample(0x08000000U + pick(0xFFFF) * 2U));
  } else if (what < 85) {
    const auto irq = static_cast<std::uint16_t>(16U + pick(31));
    enc.packet(tp::itm::make_exception(irq, tp::itm::ExceptionAction::enter));
    enc.timestamp(20U + pick(200));
    enc.packet(tp::itm::make_exception(irq, tp::itm::ExceptionAction::exit));
    enc.packet(tp::itm::make_exception(0, tp::itm::ExceptionAction::resume));
  } else if (what < 95) {
    const std::array<std::uint8_t, 9> record{
        1, static_cast<std::uint8_t>(pick(7)), 0, 0, 0, static_cast<std::uint8_t>(pick(7)), 0, 0, 0};
    enc.bytes(1, record, 1);
  } else if (what < 99) {
    enc.write(2, pick(63), 4);
  } else {
    enc.packet(tp::itm::make_overflow());
  }
  enc.timestamp(50U + pick(5000));
}

int run_main(int argc, char** argv) {
  CLI::App app{"Write a deterministic synthetic ITM stream to stdout", "itm-synth"};
  std::uint64_t size = 1U << 20U;
  std::uint32_t seed = 1;
  bool tpiu = false;
  app.add_option("--size", size, "Bytes to write (approximately: whole events)")->default_val(size);
  app.add_option("--seed", seed, "Random seed")->default_val(seed);
  app.add_flag("--tpiu", tpiu, "Wrap in TPIU frames (ITM on stream 1)");
  CLI11_PARSE(app, argc, argv);

  std::mt19937 rng(seed);
  std::vector<std::uint8_t> chunk;
  std::vector<std::uint8_t> framed;
  tp::itm::TpiuFramer framer;
  ItmStreamEncoder enc(chunk);
  enc.sync();
  std::uint64_t written = 0;
  std::uint64_t n = 0;
  while (written < size) {
    while (chunk.size() < (1U << 16U)) emit_event(enc, rng, n++);
    const std::vector<std::uint8_t>* out = &chunk;
    const bool last = written + chunk.size() >= size;
    if (tpiu) {
      framed.clear();
      framer.write(1, chunk, framed);
      if (last) framer.flush(framed);  // the final partial frame, padded
      out = &framed;
    }
    const std::size_t length = out->size();  // whole events only: never a cut packet
    std::size_t done = 0;
    while (done < length) {
      const ssize_t w = ::write(STDOUT_FILENO, out->data() + done, length - done);
      if (w <= 0) return 0;  // reader went away
      done += static_cast<std::size_t>(w);
    }
    written += chunk.size();
    chunk.clear();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("itm-synth", [&] { return run_main(argc, argv); });
}
