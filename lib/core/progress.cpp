#include "core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/clock.hpp"

namespace tp {

Progress::Progress(std::optional<std::uint64_t> total, bool enabled)
    : total_(total.value_or(0)),
      start_us_(monotonic_us()),
      active_(enabled && total.has_value() && *total > 0 && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  finish();
}

void Progress::redraw(std::uint64_t done) {
  last_done_ = done;
  const std::uint64_t now = monotonic_us();
  if (now - last_draw_us_ < 200'000) return;
  last_draw_us_ = now;
  const double seconds = static_cast<double>(now - start_us_) / 1e6;
  const double mb = static_cast<double>(done) / 1e6;
  const double rate = seconds > 0 ? mb / seconds : 0.0;
  const double percent = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  const std::string line =
      fmt::format("\r{:5.1f}%  {:.1f}/{:.1f} MB  {:.0f} MB/s ", percent, mb, static_cast<double>(total_) / 1e6, rate);
  drawn_ = ::write(STDERR_FILENO, line.data(), line.size()) > 0;
}

void Progress::finish() {
  if (!drawn_) return;
  static constexpr char clear_line[] = "\r\x1b[K";
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, clear_line, sizeof clear_line - 1);
  drawn_ = false;
}

}  // namespace tp
