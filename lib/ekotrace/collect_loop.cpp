#include "ekotrace/collect_loop.hpp"

#include <fmt/format.h>
#include <poll.h>

#include "core/clock.hpp"
#include "core/signals.hpp"
#include "core/wall_clock.hpp"

namespace tp::ekotrace {
namespace {

// Sleeps until `until_us` (monotonic) unless a stop signal comes first.
void sleep_until(std::uint64_t until_us) {
  while (stop_requested() == 0) {
    const std::uint64_t now = monotonic_us();
    if (now >= until_us) return;
    ::poll(nullptr, 0, static_cast<int>(std::min<std::uint64_t>((until_us - now + 999) / 1000, 100)));
  }
}

// The first poll could read none of the tracers: every address is wrong, so say so and stop.
void check_first_poll(const Collector& collector) {
  std::string problems;
  for (const auto& t : collector.tracers()) {
    if (t.counters.unreadable == 0) return;
    problems += fmt::format("{}{}", problems.empty() ? "" : "; ", t.last_problem);
  }
  throw Error(ExitCode::bad_input, fmt::format("no tracer could be read ({})", problems),
              ErrorCode::memory_access_error);
}

void report(const Collector& collector, const target::TargetMemory& memory, const LoopSummary& summary,
            const Logger& log, bool stats) {
  const auto line = [&](const std::string& text) { stats ? log.report(text) : log.verbose(text); };
  if (const auto link = memory.link_statistics(); !link.empty()) line(link);
  line(fmt::format(
      "{} polls, {} round trips ({:.1f} per poll), {:.3f} ms per poll on average, longest {:.3f} ms, "
      "{} late",
      summary.polls, summary.round_trips,
      summary.polls ? static_cast<double>(summary.round_trips) / static_cast<double>(summary.polls) : 0.0,
      summary.polls ? static_cast<double>(summary.busy_us) / 1000.0 / static_cast<double>(summary.polls) : 0.0,
      static_cast<double>(summary.longest_poll_us) / 1000.0, summary.late_polls));
  for (const auto& t : collector.tracers()) {
    const auto& c = t.counters;
    line(
        fmt::format("tracer {}: {} entries in {} polls; skipped: {} in use, {} NULL, {} unreadable, {} invalid; "
                    "{} truncated logs, {} malformed entries, {} overflow events",
                    t.spec.label, c.entries, c.collected_polls, c.skipped_in_use, c.null_reference, c.unreadable,
                    c.invalid, c.truncated, c.malformed, c.overflows));
  }
}

}  // namespace

LoopSummary run_collect_loop(Collector& collector, target::TargetMemory& memory, RowWriter& writer,
                             const LoopSettings& settings, const Logger& log) {
  LoopSummary summary;
  const std::uint64_t started = monotonic_us();
  const auto interval_us = static_cast<std::uint64_t>(settings.interval.count()) * 1000U;
  const auto duration_us = static_cast<std::uint64_t>(settings.duration.count()) * 1000U;
  std::uint64_t next = started;
  try {
    while (stop_requested() == 0) {
      const std::uint64_t poll_start = monotonic_us();
      const std::uint64_t trips_before = memory.round_trips();
      const auto rows = collector.collect();
      writer.write(rows, realtime_us(), poll_start);  // on disk before the target's log is cleared
      collector.finish();
      const std::uint64_t took = monotonic_us() - poll_start;
      ++summary.polls;
      summary.round_trips += memory.round_trips() - trips_before;
      summary.busy_us += took;
      summary.longest_poll_us = std::max(summary.longest_poll_us, took);
      if (took > interval_us) ++summary.late_polls;
      for (const auto& warning : collector.take_warnings()) log.warn(warning);
      if (summary.polls == 1) check_first_poll(collector);
      log.verbose(fmt::format("poll {}: {} rows, {} round trips, {:.3f} ms", summary.polls, rows.size(),
                              memory.round_trips() - trips_before, static_cast<double>(took) / 1000.0));
      if (settings.polls != 0 && summary.polls >= settings.polls) break;
      if (duration_us != 0 && monotonic_us() - started >= duration_us) break;
      next += interval_us;
      if (next < monotonic_us()) next = monotonic_us();  // late: do not try to catch up in a burst
      sleep_until(next);
    }
  } catch (...) {
    memory.release();
    report(collector, memory, summary, log, settings.stats);
    throw;
  }
  memory.release();
  report(collector, memory, summary, log, settings.stats);
  return summary;
}

}  // namespace tp::ekotrace
