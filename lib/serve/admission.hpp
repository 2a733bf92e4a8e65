// Who may hold a WebSocket connection to trace-serve, independent of I/O:
// - ClientSlots: authenticated clients up to --max-clients, and connections that have not
//   shown the token yet in a small pool of their own, so that idle strangers can never lock
//   the real user out. A slot is taken when the upgrade is accepted, before the 101 is sent,
//   so the cap is exact however many upgrades are in flight.
// - FailedTokenLimiter: per peer address, a few wrong tokens are free; after that each one
//   doubles a period during which that peer's tokens are refused unseen (1 s up to 60 s),
//   so guessing runs at a handful of tries a minute instead of thousands a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tp::serve {

enum class Slot { client, unauthenticated };

class ClientSlots {
 public:
  ClientSlots(std::size_t max_clients, std::size_t max_unauthenticated)
      : max_clients_(max_clients), max_unauthenticated_(max_unauthenticated) {}

  // Takes a slot of that kind; false when that pool is full.
  bool take(Slot slot) noexcept;
  void give_back(Slot slot) noexcept;
  // An unauthenticated connection showed the token: it moves to the client pool. False
  // (and its unauthenticated slot is kept) when the client pool is full.
  bool promote() noexcept;

  [[nodiscard]] std::size_t clients() const noexcept { return clients_; }
  [[nodiscard]] std::size_t unauthenticated() const noexcept { return unauthenticated_; }

 private:
  std::size_t max_clients_;
  std::size_t max_unauthenticated_;
  std::size_t clients_ = 0;
  std::size_t unauthenticated_ = 0;
};

class FailedTokenLimiter {
 public:
  static constexpr unsigned free_failures = 3;
  static constexpr std::uint64_t first_block_us = 1'000'000;
  static constexpr std::uint64_t longest_block_us = 60'000'000;
  static constexpr std::uint64_t forget_after_us = 600'000'000;  // a quiet peer starts afresh
  static constexpr std::size_t max_peers = 4096;                 // memory bound

  // Microseconds until this peer may present a token again (0: now).
  [[nodiscard]] std::uint64_t blocked_for(const std::string& peer, std::uint64_t now_us) const;
  // A wrong token from peer: returns the block now in force for it (0 while still free).
  std::uint64_t failed(const std::string& peer, std::uint64_t now_us);
  void succeeded(const std::string& peer) { peers_.erase(peer); }
  [[nodiscard]] std::size_t peers() const noexcept { return peers_.size(); }

 private:
  struct Record {
    unsigned failures = 0;
    std::uint64_t blocked_until_us = 0;
    std::uint64_t last_failure_us = 0;
  };
  void forget_quiet_peers(std::uint64_t now_us);

  std::unordered_map<std::string, Record> peers_;
};

}  // namespace tp::serve
