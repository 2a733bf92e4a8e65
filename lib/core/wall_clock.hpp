// Wall-clock time for receive stamps (ekotrace's receive_time, trace-csv's time column).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

// Microseconds since the Unix epoch (CLOCK_REALTIME).
[[nodiscard]] std::int64_t realtime_us() noexcept;

// How far CLOCK_REALTIME is ahead of CLOCK_MONOTONIC, to place monotonic stamps on the wall clock.
[[nodiscard]] std::int64_t realtime_minus_monotonic_us() noexcept;

inline constexpr std::size_t rfc3339_length = 27;

// RFC 3339 in UTC with microseconds: "2026-11-21T10:15:42.123456Z" (rfc3339_length characters).
void write_rfc3339_utc(std::int64_t wall_us, std::array<char, rfc3339_length>& out);
[[nodiscard]] std::string format_rfc3339_utc(std::int64_t wall_us);

// The times the tools take on their command lines (--since, --until), parsed here only.
// An RFC 3339 time in UTC, "2026-11-27T10:00:00Z" (a fraction of up to 9 digits, kept to the
// microsecond; "+00:00" for Z), from 1970 to 9999, in microseconds since 1970. Each field is
// checked against the calendar (no month 13, no February 30, no 25:61:61): a time that does
// not exist is refused, never rolled over into another. Throws Error(usage) with the reason.
[[nodiscard]] std::int64_t parse_rfc3339_utc(std::string_view text);
// An RFC 3339 UTC time as above, or a duration (core/quantity: 90s, 30m, 2h, 1d) before
// now_us; one that reaches back before 1970 is refused. Throws Error(usage) naming `option`.
[[nodiscard]] std::int64_t parse_time_or_age(std::string_view option, std::string_view text, std::int64_t now_us);

}  // namespace tp
