// Target time from ITM timestamps: a running sum of LTS deltas scaled by the ITM
// prescaler (TCR.TSPrescale), re-based whenever a global timestamp arrives (D4.2.4-5).
#pragma once

#include <cstdint>

#include "itm/packet.hpp"

namespace tp::itm {

class TargetClock {
 public:
  explicit TargetClock(std::uint32_t prescaler = 1) noexcept : prescaler_(prescaler == 0 ? 1 : prescaler) {}

  // Applies a local or global timestamp packet; returns false for other packets. A local
  // one (most of them) inline.
  bool apply(const Packet& packet) noexcept {
    if (packet.kind != PacketKind::local_timestamp) return apply_global(packet);
    now_ += packet.value * prescaler_;
    seen_ = true;
    return true;
  }
  [[nodiscard]] std::uint64_t now() const noexcept { return now_; }
  // True once any target timestamp was seen.
  [[nodiscard]] bool seen() const noexcept { return seen_; }
  [[nodiscard]] std::uint64_t clock_changes() const noexcept { return clock_changes_; }

 private:
  bool apply_global(const Packet& packet) noexcept;
  std::uint64_t prescaler_;
  std::uint64_t now_ = 0;
  std::uint64_t global_ = 0;
  std::uint64_t clock_changes_ = 0;
  bool seen_ = false;
};

}  // namespace tp::itm
