// The epoch bookkeeping of the LPC-Link2's poll replies (NXP's LPC-Link2 SWO interface;
// docs/design.md "Peers and their protocols"), independent of USB so it can be tested and fuzzed on its own. The
// commands and the other replies are probes/lpclink2_protocol.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "swo/swo_source.hpp"

namespace tp::swo::lpclink2 {

// Turns poll replies into the stream of captured bytes, each exactly once.
//
// `04 epoch p0 p1 p2 data`: fill levels before = packed[11:0], after = packed[23:12] are
// positions in the epoch's 1022-byte buffer; the data is [before, after). `82 epoch
// data[1022]`: the buffer is full; it repeats what `04` replies of the same epoch already
// delivered, so only [last_after, 1022) is new. The next epoch starts at position 0.
class PollTracker {
 public:
  // Appends the new bytes of `reply` to `out`; returns how many. Malformed replies,
  // gaps and lost sync are counted in `counters` (never thrown: the stream goes on).
  std::size_t on_reply(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out, SourceCounters& counters);
  // Whether the last reply suggests more is waiting (data or a flush): poll again at once.
  [[nodiscard]] bool more_expected() const noexcept { return more_expected_; }
  [[nodiscard]] std::optional<std::uint8_t> epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  [[nodiscard]] std::uint64_t flushes() const noexcept { return flushes_; }

 private:
  std::size_t on_incremental(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out,
                             SourceCounters& counters);
  std::size_t on_flush(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out, SourceCounters& counters);
  // Moves to `epoch`, counting what the jump cost. Returns false when it is not the
  // expected successor (lost sync).
  bool enter_epoch(std::uint8_t epoch, SourceCounters& counters);

  std::optional<std::uint8_t> epoch_;  // none until the first reply with data
  std::size_t position_ = 0;           // fill level delivered so far in this epoch
  bool flushed_ = false;               // the current epoch ended with an 82
  bool more_expected_ = false;
  std::uint64_t flushes_ = 0;
};

}  // namespace tp::swo::lpclink2
