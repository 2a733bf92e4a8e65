// Fuzz target: what trace-pull and trace-ship read that others wrote. The first byte picks:
//   even: a stream of messages for the reorder window (chunk_order), each a header range and
//         a payload, as any publisher on the subject could send them: the window never
//         releases a seq twice or backwards, holds at most its bound, and accounts for every
//         seq it saw (released, duplicate or missing);
//   odd:  a ship journal's text (ship_journal): parsed or refused with an Error, never a crash,
//         and what it resumes is in seq order after the acknowledged seq.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fleet/chunk_order.hpp"
#include "fleet/ship_journal.hpp"

namespace {

std::uint64_t take(std::string_view& bytes, std::size_t n) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < n && !bytes.empty(); ++i) {
    value = value << 8U | static_cast<unsigned char>(bytes.front());
    bytes.remove_prefix(1);
  }
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1U) != 0) {
    try {
      const tp::JournalState state = tp::parse_ship_journal(bytes, "fuzz");
      std::uint64_t previous = 0;
      for (const tp::PlannedChunk& chunk : state.published_after_acked) {
        const tp::SeqRange range = chunk.range;
        if (range.last < range.first || range.first < previous) std::abort();
        if (state.acked_through && range.last <= *state.acked_through) std::abort();
        previous = range.first;
      }
    } catch (const tp::Error&) {
    }
    return 0;
  }
  std::map<std::string, std::set<std::uint64_t>> released;  // per run
  const tp::ChunkOrder::Limits limits{4, 1000};
  // Each line is "RUN SEQ": a seq is released at most once within its run. Not always forwards:
  // what comes after its gap was told, or from before where the reader came in, is written late.
  tp::ChunkOrder order(
      limits,
      [&](std::string_view lines) {
        while (!lines.empty()) {
          const std::size_t newline = lines.find('\n');
          if (newline == std::string_view::npos) std::abort();  // whole lines only
          const std::string_view line = lines.substr(0, newline);
          const std::string run(line.substr(0, 1));
          const std::uint64_t seq = std::stoull(std::string(line.substr(2)));
          if (!released[run].insert(seq).second) std::abort();  // twice
          lines.remove_prefix(newline + 1);
        }
      },
      [&](std::string_view, std::string_view, tp::SeqRange missing) {
        if (missing.last < missing.first) std::abort();
      });
  std::int64_t now = 0;
  while (bytes.size() >= 4) {
    const auto run = std::string(1, static_cast<char>('a' + (take(bytes, 1) & 3U)));
    const std::uint64_t first = take(bytes, 1);
    const std::uint64_t count = take(bytes, 1) % 8 + 1;
    now += static_cast<std::int64_t>(take(bytes, 1)) * 10;
    std::string payload;
    for (std::uint64_t i = 0; i < count; ++i) payload += run + " " + std::to_string(first + i) + "\n";
    order.add("b", run, tp::SeqRange{first, first + count - 1}, payload, now);
    if (order.held() > limits.max_held) std::abort();
    order.tick(now);
  }
  order.flush();
  if (order.held() != 0) std::abort();
  return 0;
}
