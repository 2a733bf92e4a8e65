// Host monotonic time, the fallback clock for records without a target timestamp.
#pragma once

#include <cstdint>
#include <ctime>

namespace tp {

[[nodiscard]] inline std::uint64_t monotonic_us() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000U + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000U;
}

[[nodiscard]] inline std::uint64_t monotonic_ms() noexcept {
  return monotonic_us() / 1000U;
}

}  // namespace tp
