#include "swo/pacer.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/clock.hpp"

namespace tp::swo {
namespace {

constexpr std::uint64_t us_per_s = 1'000'000U;

// Bytes at `rate` in `us`, and microseconds for `bytes`, split so that no product overflows
// (a soak run's microseconds times a rate would, after weeks).
std::uint64_t bytes_in(std::uint64_t us, std::uint64_t rate) noexcept {
  return us / us_per_s * rate + us % us_per_s * rate / us_per_s;
}

std::uint64_t us_for(std::uint64_t bytes, std::uint64_t rate) noexcept {
  return bytes / rate * us_per_s + bytes % rate * us_per_s / rate;
}

}  // namespace

std::uint64_t Pacer::burst() const noexcept {
  return std::max<std::uint64_t>(rate_ / 200U, 1);
}

std::uint64_t Pacer::catch_up(std::uint64_t at_least) const noexcept {
  return std::max({rate_ / 10U, burst(), at_least});
}

std::uint64_t Pacer::allowance(std::uint64_t now_us, std::uint64_t wanted, std::uint64_t at_least) noexcept {
  if (rate_ == 0) return wanted;
  if (start_us_ == 0) start_us_ = now_us;
  std::uint64_t earned = bytes_in(now_us - start_us_, rate_);
  if (earned > sent_ + catch_up(at_least)) {  // behind by more than it may catch up: its schedule moves on
    earned = sent_ + catch_up(at_least);
    start_us_ = now_us - us_for(earned, rate_);
  }
  const std::uint64_t due = earned + burst();
  return due > sent_ ? std::min(wanted, due - sent_) : 0;
}

std::uint64_t Pacer::wait_us(std::uint64_t now_us, std::uint64_t bytes) const noexcept {
  if (rate_ == 0) return 0;
  const std::uint64_t needed = sent_ + bytes;
  const std::uint64_t due_at_us = us_for(needed - std::min(needed, burst()), rate_);
  const std::uint64_t elapsed = now_us - start_us_;
  return due_at_us > elapsed ? due_at_us - elapsed : 0;
}

std::uint64_t Pacer::await(std::uint64_t wanted, std::uint64_t at_least, int timeout_ms) {
  std::uint64_t now = monotonic_us();
  std::uint64_t allowed = allowance(now, wanted, at_least);
  if (allowed >= at_least) return allowed;
  const std::uint64_t wait = std::min(wait_us(now, at_least), static_cast<std::uint64_t>(timeout_ms) * 1000U);
  std::this_thread::sleep_for(std::chrono::microseconds(wait));
  now = monotonic_us();
  allowed = allowance(now, wanted, at_least);
  return allowed >= at_least ? allowed : 0;
}

}  // namespace tp::swo
