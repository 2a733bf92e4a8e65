#include "serve/admission.hpp"

#include <algorithm>

namespace tp::serve {

bool ClientSlots::take(Slot slot) noexcept {
  if (slot == Slot::client) {
    if (clients_ >= max_clients_) return false;
    ++clients_;
    return true;
  }
  if (unauthenticated_ >= max_unauthenticated_) return false;
  ++unauthenticated_;
  return true;
}

void ClientSlots::give_back(Slot slot) noexcept {
  std::size_t& count = slot == Slot::client ? clients_ : unauthenticated_;
  if (count > 0) --count;
}

bool ClientSlots::promote() noexcept {
  if (clients_ >= max_clients_) return false;
  give_back(Slot::unauthenticated);
  ++clients_;
  return true;
}

std::uint64_t FailedTokenLimiter::blocked_for(const std::string& peer, std::uint64_t now_us) const {
  const auto found = peers_.find(peer);
  if (found == peers_.end() || found->second.blocked_until_us <= now_us) return 0;
  return found->second.blocked_until_us - now_us;
}

std::uint64_t FailedTokenLimiter::failed(const std::string& peer, std::uint64_t now_us) {
  if (peers_.size() >= max_peers && !peers_.contains(peer)) forget_quiet_peers(now_us);
  if (peers_.size() >= max_peers && !peers_.contains(peer)) {
    // Still full: every known peer failed recently. Forget the one that failed longest ago.
    const auto oldest = std::min_element(peers_.begin(), peers_.end(), [](const auto& a, const auto& b) {
      return a.second.last_failure_us < b.second.last_failure_us;
    });
    peers_.erase(oldest);
  }
  Record& record = peers_[peer];
  if (record.failures > 0 && now_us - record.last_failure_us > forget_after_us) record = Record{};
  ++record.failures;
  record.last_failure_us = now_us;
  if (record.failures <= free_failures) return 0;
  const unsigned doublings = std::min(record.failures - free_failures - 1, 16U);
  const std::uint64_t block = std::min(first_block_us << doublings, longest_block_us);
  record.blocked_until_us = now_us + block;
  return block;
}

void FailedTokenLimiter::forget_quiet_peers(std::uint64_t now_us) {
  std::erase_if(peers_, [&](const auto& entry) {
    const Record& r = entry.second;
    return r.blocked_until_us <= now_us && now_us - r.last_failure_us > forget_after_us;
  });
}

}  // namespace tp::serve
