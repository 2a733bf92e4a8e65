// Command-line quantities shared by the tools: durations ("500ms", "2s", "1m", "1h") and
// byte counts ("4096", "64K", "10M", "1G"; binary multiples).
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace tp {

// Throws Error(usage) naming the text when it is not a positive duration, or one whose
// microseconds would not fit in 64 bits.
std::chrono::milliseconds parse_duration(std::string_view text);
// Throws Error(usage) when it is not a byte count, or one over `max` (whole numbers exact).
std::uint64_t parse_byte_count(std::string_view text, std::uint64_t max = std::uint64_t{1} << 62U);

}  // namespace tp
