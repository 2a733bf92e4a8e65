// trace-top's statistics over a view's records for the viewer's charts (CPU load, handler
// durations, the Statistics tab), one run at a time. A range of the fleet's records may span
// two runs of a board (a run is a capture start: the target's clock restarted); LiveStats takes
// a record older than the last one at the latest time seen (never backwards), so the second
// run's records would pile onto the first's last instant. A record of another run (its "run"
// field, stamped by trace-ship) than the one before starts the figures anew: they are the
// newest run's. Records without a run (trace-serve's own input) are one run.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>

#include "analysis/live_stats.hpp"

namespace tp::serve {

class RunStatistics {
 public:
  void add(simdjson::dom::object record);
  [[nodiscard]] const analysis::LiveStats& stats() const noexcept { return stats_; }
  // Records counted since construction, over every run (whether a snapshot has news).
  [[nodiscard]] std::uint64_t added() const noexcept { return added_; }
  [[nodiscard]] const std::string& run() const noexcept { return run_; }

 private:
  static analysis::LiveStats fresh() { return analysis::LiveStats{false, false, true}; }  // with time per interval

  analysis::LiveStats stats_ = fresh();
  std::string run_;
  std::uint64_t added_ = 0;
};

}  // namespace tp::serve
