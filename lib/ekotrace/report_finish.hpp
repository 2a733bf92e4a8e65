// What ekotrace's own end of a report does to a tracer (history.rs, finished_report_logging,
// mid-2020), as a function of the tracer's state, so eko-collect's clear after a poll leaves
// the target exactly as the tracer itself would have after sending that report:
//   1. the log is cleared;
//   2. the tracer's local clock (clocks[0], always its own) is incremented, saturating, and
//      event_count reset;
//   3. the current clocks are written to the log as clock pairs while fewer than
//      capacity - 2 items are in it; a clock that does not fit ends the writing with a
//      "log overflowed" event (if one item still fits);
//   4. the reserved "produced report" event is recorded if the log has room, which counts
//      as an event (event_count 1).
// Without step 2, successive reports carry the same (tracer, local clock) and ekotrace's
// readers (util lib.rs, LCIndex keyed by local clock) fold them into one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tp::ekotrace {

struct LogicalClock {
  std::uint32_t id = 0;
  std::uint32_t count = 0;
};

struct FinishedReport {
  std::vector<LogicalClock> clocks;  // the clocks afterwards (only clocks[0] changes)
  std::vector<std::uint32_t> log;    // the log's items afterwards
  std::uint32_t event_count = 0;
};

[[nodiscard]] FinishedReport finished_report_logging(std::span<const LogicalClock> clocks, std::uint64_t log_capacity);

}  // namespace tp::ekotrace
