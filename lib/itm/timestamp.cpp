#include "itm/timestamp.hpp"

namespace tp::itm {

bool TargetClock::apply_global(const Packet& p) noexcept {
  switch (p.kind) {
    case PacketKind::global_timestamp1: {
      // A GTS1 shorter than 4 bytes omits high-order bits that did not change.
      const unsigned bits = p.length >= 4 ? 26U : 7U * p.length;
      const std::uint64_t mask = (1ULL << bits) - 1U;
      global_ = (global_ & ~mask) | (p.value & mask);
      if (p.clock_changed()) ++clock_changes_;
      now_ = global_;
      seen_ = true;
      return true;
    }
    case PacketKind::global_timestamp2:
      global_ = (global_ & ((1ULL << 26U) - 1U)) | (p.value << 26U);
      now_ = global_;
      seen_ = true;
      return true;
    default:
      return false;
  }
}

}  // namespace tp::itm
