#include "core/wall_clock.hpp"

#include <fmt/format.h>

#include <ctime>

#include "core/clock.hpp"

namespace tp {

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

}  // namespace tp
