// Wall-clock time for receive stamps (ekotrace's receive_time, trace-csv's time column).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tp {

// Microseconds since the Unix epoch (CLOCK_REALTIME).
[[nodiscard]] std::int64_t realtime_us() noexcept;

// How far CLOCK_REALTIME is ahead of CLOCK_MONOTONIC, to place monotonic stamps on the wall clock.
[[nodiscard]] std::int64_t realtime_minus_monotonic_us() noexcept;

inline constexpr std::size_t rfc3339_length = 27;

// RFC 3339 in UTC with microseconds: "2026-11-21T10:15:42.123456Z" (rfc3339_length characters).
void write_rfc3339_utc(std::int64_t wall_us, std::array<char, rfc3339_length>& out);
[[nodiscard]] std::string format_rfc3339_utc(std::int64_t wall_us);

}  // namespace tp
