#include "ekotrace/report_finish.hpp"

#include <limits>

#include "ekotrace/compact_log.hpp"

namespace tp::ekotrace {
namespace {

// history.rs write_clocks_to_log: nothing when full; a clock pair only while the log holds
// fewer than capacity - 2 items, so there is always room left for the overflow notice.
void write_clocks_to_log(std::vector<std::uint32_t>& log, std::span<const LogicalClock> clocks,
                         std::uint64_t capacity) {
  if (log.size() >= capacity) return;
  bool overflowed = false;
  for (const auto& clock : clocks) {
    if (log.size() + 2 >= capacity) {  // not `len < capacity - 2`
      overflowed = true;
      break;
    }
    log.push_back(clock_flag | clock.id);
    log.push_back(clock.count);
  }
  if (overflowed && log.size() < capacity) log.push_back(log_overflowed_event);
}

}  // namespace

FinishedReport finished_report_logging(std::span<const LogicalClock> clocks, std::uint64_t log_capacity) {
  FinishedReport after;
  after.clocks.assign(clocks.begin(), clocks.end());
  if (!after.clocks.empty() && after.clocks[0].count != std::numeric_limits<std::uint32_t>::max()) {
    ++after.clocks[0].count;
  }
  write_clocks_to_log(after.log, after.clocks, log_capacity);
  if (after.log.size() < log_capacity) {
    after.log.push_back(produced_report_event);
    after.event_count = 1;
  }
  return after;
}

}  // namespace tp::ekotrace
