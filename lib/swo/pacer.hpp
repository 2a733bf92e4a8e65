// Paces a byte stream to a rate (the simulator's --rate, --file --realtime): how many
// bytes may go now, and waiting until some may. A source that fell behind (descheduled on a
// busy host) catches up by at most 100 ms of its rate, as a link whose probe buffers that
// much: past that it goes on at the rate from where it is, later, rather than in a burst
// faster than the rate it was asked for.
#pragma once

#include <cstdint>

namespace tp::swo {

class Pacer {
 public:
  // bytes_per_second == 0: no pacing.
  explicit Pacer(std::uint64_t bytes_per_second) : rate_(bytes_per_second) {}

  // Bytes allowed at `now_us` (at most `wanted`). `at_least`: what the caller must send in one
  // piece (a whole event); a source behind may always catch up that much.
  [[nodiscard]] std::uint64_t allowance(std::uint64_t now_us, std::uint64_t wanted,
                                        std::uint64_t at_least = 1) noexcept;
  void sent(std::uint64_t bytes) noexcept { sent_ += bytes; }
  // Microseconds from `now_us` until `bytes` more are allowed.
  [[nodiscard]] std::uint64_t wait_us(std::uint64_t now_us, std::uint64_t bytes) const noexcept;
  // Waits, at most timeout_ms, until at least `at_least` bytes are allowed; returns the
  // allowance (at most `wanted`), or 0 when the time is up first.
  std::uint64_t await(std::uint64_t wanted, std::uint64_t at_least, int timeout_ms);

 private:
  // A few ms worth of bytes may go at once, so a paced source does not wake per byte.
  [[nodiscard]] std::uint64_t burst() const noexcept;
  // The most it may owe and still send at once (at least `at_least`).
  [[nodiscard]] std::uint64_t catch_up(std::uint64_t at_least) const noexcept;
  std::uint64_t rate_;
  std::uint64_t start_us_ = 0;
  std::uint64_t sent_ = 0;
};

}  // namespace tp::swo
