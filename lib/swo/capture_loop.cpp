#include "swo/capture_loop.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "core/clock.hpp"
#include "core/signals.hpp"

namespace tp::swo {
namespace {

constexpr std::size_t chunk_size = std::size_t{64} * 1024;
constexpr int pull_timeout_ms = 20;
constexpr std::uint64_t report_every_us = 1'000'000;

}  // namespace

CaptureResult run_capture(SwoSource& source, BatchedWriter& out, const CaptureLimits& limits,
                          const std::function<void(const CaptureProgress&)>& on_report) {
  std::vector<std::uint8_t> buffer(chunk_size);
  const std::uint64_t start = monotonic_us();
  const std::uint64_t duration_us = static_cast<std::uint64_t>(limits.duration.count()) * 1000U;
  std::uint64_t next_report = start + report_every_us;
  CaptureResult result;
  auto& p = result.progress;
  const auto snapshot = [&](std::uint64_t now) {
    p.seconds = static_cast<double>(now - start) / 1e6;
    p.counters = source.counters();
  };
  try {
    for (;;) {
      const std::uint64_t now = monotonic_us();
      if (stop_requested() != 0) {
        result.end = CaptureEnd::stopped;
        break;
      }
      if ((duration_us != 0 && now - start >= duration_us) || (limits.max_bytes != 0 && p.bytes >= limits.max_bytes)) {
        result.end = CaptureEnd::limit_reached;
        break;
      }
      std::size_t want = buffer.size();
      if (limits.max_bytes != 0)
        want = static_cast<std::size_t>(std::min<std::uint64_t>(want, limits.max_bytes - p.bytes));
      int timeout = pull_timeout_ms;
      if (duration_us != 0) {
        timeout = static_cast<int>(std::min<std::uint64_t>(pull_timeout_ms, (start + duration_us - now) / 1000U + 1));
      }
      const PullResult pulled = source.pull(std::span(buffer).first(want), timeout);
      if (pulled.status == Pull::end) {
        result.end = CaptureEnd::input_ended;
        break;
      }
      if (pulled.size > 0) {
        out.write(std::string_view(reinterpret_cast<const char*>(buffer.data()), pulled.size));
        p.bytes += pulled.size;
      }
      const std::uint64_t after = monotonic_us();
      out.flush_if_stale(after);
      if (on_report && after >= next_report) {
        next_report = after + report_every_us;
        snapshot(after);
        on_report(p);
      }
    }
  } catch (...) {
    snapshot(monotonic_us());
    source.close();
    out.flush();  // what was captured before the failure is kept
    throw;
  }
  snapshot(monotonic_us());
  source.close();
  out.flush();
  return result;
}

std::string format_progress(const CaptureProgress& p) {
  const auto& c = p.counters;
  std::string text = fmt::format(
      "{} bytes in {:.1f} s ({:.1f} kB/s); lost {} bytes in {} gaps, {} duplicate bytes dropped, {} overruns", p.bytes,
      p.seconds, p.bytes_per_second() / 1000, c.lost_bytes, c.gaps, c.duplicate_bytes, c.overruns);
  if (c.lost_sync != 0) text += fmt::format(", lost sync {} times", c.lost_sync);
  if (c.malformed_replies != 0) text += fmt::format(", {} malformed replies", c.malformed_replies);
  if (c.reconnects != 0) text += fmt::format(", {} reconnects", c.reconnects);
  return text;
}

}  // namespace tp::swo
