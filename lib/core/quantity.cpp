#include "core/quantity.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.hpp"
#include "core/number.hpp"

namespace tp {
namespace {

constexpr double max_duration_ms = 9.2e15;

// The number at the start of `text` and the rest (the unit); nothing if there is none.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data()) return false;
  unit = text.substr(static_cast<std::size_t>(end - text.data()));
  return true;
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text) {
  double value = 0;
  std::string_view unit;
  const bool parsed = split_number(text, value, unit);
  const double scale = unit.empty() || unit == "s" ? 1000
                       : unit == "ms"              ? 1
                       : unit == "m"               ? 60'000
                       : unit == "h"               ? 3'600'000
                       : unit == "d"               ? 86'400'000
                                                   : -1;
  if (!parsed || scale < 0 || !(value > 0) || !std::isfinite(value)) {
    throw Error(ExitCode::usage, fmt::format("'{}' is not a duration (e.g. 500ms, 2s, 1m, 1h, 1d)", text));
  }
  // Its microseconds must fit in 64 bits (callers turn it into them): 292,000 years.
  if (value * scale > max_duration_ms) {
    throw Error(ExitCode::usage,
                fmt::format("'{}' is too long a duration (at most {:.0f} days)", text, max_duration_ms / 86'400'000));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(value * scale)));
}

std::uint64_t parse_byte_count(std::string_view text, std::uint64_t max) {
  double value = 0;
  std::string_view unit;
  const bool parsed = split_number(text, value, unit);
  const std::string_view number = text.substr(0, text.size() - unit.size());
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.remove_suffix(1);
  const std::uint64_t scale = unit.empty()                 ? 1
                              : unit == "K" || unit == "k" ? std::uint64_t{1} << 10U
                              : unit == "M"                ? std::uint64_t{1} << 20U
                              : unit == "G"                ? std::uint64_t{1} << 30U
                                                           : 0;
  if (!parsed || scale == 0 || value < 0 || !std::isfinite(value)) {
    throw Error(ExitCode::usage, fmt::format("'{}' is not a byte count (e.g. 4096, 64K, 10M, 1G)", text));
  }
  // A whole number is taken exactly (a double is not, past 2^53); a fraction (1.5M) rounds.
  const auto whole = parse_whole_number<std::uint64_t>(number);
  const bool fits = whole ? *whole <= max / scale : value * static_cast<double>(scale) <= static_cast<double>(max);
  if (!fits) throw Error(ExitCode::usage, fmt::format("'{}': at most {} bytes", text, max));
  return whole ? *whole * scale : static_cast<std::uint64_t>(std::llround(value * static_cast<double>(scale)));
}

}  // namespace tp
