// Paces a byte stream to a rate (the simulator's --rate, --file --realtime): how many
// bytes may go now, and how long to wait for the next one.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tp::swo {

class Pacer {
 public:
  // bytes_per_second == 0: no pacing.
  explicit Pacer(std::uint64_t bytes_per_second) : rate_(bytes_per_second) {}

  // Bytes allowed at `now_us` (at most `wanted`).
  [[nodiscard]] std::uint64_t allowance(std::uint64_t now_us, std::uint64_t wanted) noexcept {
    if (rate_ == 0) return wanted;
    if (start_us_ == 0) start_us_ = now_us;
    const std::uint64_t due = (now_us - start_us_) * rate_ / 1'000'000U + burst();
    return due > sent_ ? std::min(wanted, due - sent_) : 0;
  }
  void sent(std::uint64_t bytes) noexcept { sent_ += bytes; }
  // Microseconds until one more byte is allowed.
  [[nodiscard]] std::uint64_t wait_us(std::uint64_t now_us) const noexcept {
    if (rate_ == 0) return 0;
    const std::uint64_t next_due_us = (sent_ + 1 - std::min(sent_ + 1, burst())) * 1'000'000U / rate_;
    const std::uint64_t elapsed = now_us - start_us_;
    return next_due_us > elapsed ? next_due_us - elapsed : 0;
  }

 private:
  // A few ms worth of bytes may go at once, so a paced source does not wake per byte.
  [[nodiscard]] std::uint64_t burst() const noexcept { return std::max<std::uint64_t>(rate_ / 200U, 1); }
  std::uint64_t rate_;
  std::uint64_t start_us_ = 0;
  std::uint64_t sent_ = 0;
};

}  // namespace tp::swo
