#include "core/wall_clock.hpp"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <optional>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/number.hpp"
#include "core/quantity.hpp"

namespace tp {
namespace {

constexpr std::int64_t us_per_day = 86'400'000'000;

constexpr bool is_leap_year(int year) noexcept {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

constexpr int days_in_month(int year, int month) noexcept {
  constexpr std::array<int, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : days[static_cast<std::size_t>(month - 1)];
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil): no timegm, which normalises what does not exist.
constexpr std::int64_t days_since_1970(int year, int month, int day) noexcept {
  const int y = month <= 2 ? year - 1 : year;
  const int era = y / 400;  // years from 1970 on: never negative
  const int year_of_era = y - era * 400;
  const int day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return std::int64_t{era} * 146'097 + day_of_era - 719'468;
}

// The `width` digits of text at `at`, within [low, high]; nothing otherwise.
std::optional<int> field_at(std::string_view text, std::size_t at, std::size_t width, int low, int high) {
  if (at + width > text.size()) return std::nullopt;
  const auto value = parse_whole_number<int>(text.substr(at, width));
  if (!value || *value < low || *value > high) return std::nullopt;
  return value;
}

// The microseconds of ".ddd" (1-9 digits; those past the microsecond are dropped).
std::optional<std::int64_t> fraction_us(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  std::int64_t micros = 0;
  std::int64_t scale = 100'000;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    micros += (c - '0') * scale;
    scale /= 10;
  }
  return micros;
}

[[noreturn]] void refuse_time(std::string_view text, std::string_view why) {
  throw Error(ExitCode::usage,
              fmt::format("'{}' is not a time: {} (RFC 3339 in UTC, e.g. 2026-11-27T10:00:00Z)", text, why));
}

}  // namespace

std::int64_t realtime_us() noexcept {
  timespec real{};
  clock_gettime(CLOCK_REALTIME, &real);
  return static_cast<std::int64_t>(real.tv_sec) * 1'000'000 + real.tv_nsec / 1'000;
}

std::int64_t realtime_minus_monotonic_us() noexcept {
  return realtime_us() - static_cast<std::int64_t>(monotonic_us());
}

void write_rfc3339_utc(std::int64_t wall_us, std::array<char, rfc3339_length>& out) {
  const auto seconds = static_cast<std::time_t>(wall_us / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  fmt::format_to_n(out.data(), out.size(), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", utc.tm_year + 1900,
                   utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, wall_us % 1'000'000);
}

std::string format_rfc3339_utc(std::int64_t wall_us) {
  std::array<char, rfc3339_length> text{};
  write_rfc3339_utc(wall_us, text);
  return {text.data(), text.size()};
}

std::int64_t parse_rfc3339_utc(std::string_view text) {
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':') {
    refuse_time(text, "not YYYY-MM-DDTHH:MM:SSZ");
  }
  const auto year = field_at(text, 0, 4, 1970, 9999);
  if (!year) refuse_time(text, "the year is not 1970-9999");
  const auto month = field_at(text, 5, 2, 1, 12);
  if (!month) refuse_time(text, "the month is not 01-12");
  const auto day = field_at(text, 8, 2, 1, days_in_month(*year, *month));
  if (!day) refuse_time(text, fmt::format("{:04}-{:02} has no such day", *year, *month));
  const auto hour = field_at(text, 11, 2, 0, 23);
  const auto minute = field_at(text, 14, 2, 0, 59);
  const auto second = field_at(text, 17, 2, 0, 59);
  if (!hour || !minute || !second) refuse_time(text, "the time of day is not 00:00:00-23:59:59");
  std::string_view rest = text.substr(19);
  std::int64_t micros = 0;
  if (rest.front() == '.') {
    const std::size_t zone = std::min(rest.find_first_not_of("0123456789", 1), rest.size());
    const auto fraction = fraction_us(rest.substr(1, zone - 1));
    if (!fraction) refuse_time(text, "a fraction of a second is 1-9 digits");
    micros = *fraction;
    rest.remove_prefix(zone);
  }
  if (rest != "Z" && rest != "+00:00") refuse_time(text, "it does not end with Z (UTC)");
  const std::int64_t seconds_of_day = *hour * 3600 + *minute * 60 + *second;
  return days_since_1970(*year, *month, *day) * us_per_day + seconds_of_day * 1'000'000 + micros;
}

std::int64_t parse_time_or_age(std::string_view option, std::string_view text, std::int64_t now_us) {
  try {
    if (text.size() >= 5 && text[4] == '-') return parse_rfc3339_utc(text);
    const auto age_ms = parse_duration(text).count();
    if (age_ms > now_us / 1000) {
      throw Error(ExitCode::usage, fmt::format("'{}' ago is before 1970", text));
    }
    return now_us - age_ms * 1000;
  } catch (const Error& error) {
    throw Error(ExitCode::usage, fmt::format("{} {}", option, error.what()));
  }
}

}  // namespace tp
