// trace-top's output: snapshot records (TopSummary, TopFunction, TopHandler, TopTask in
// record.schema.json) for pipes, and a table for a terminal.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/live_stats.hpp"
#include "core/out_buffer.hpp"

namespace tp::analysis {

struct ReportOptions {
  std::size_t top = 10;      // functions and handlers shown
  std::uint64_t cpu_hz = 0;  // cycles to seconds in the table
  bool colour = false;
  // Snapshot records carry each task's, idle's and handler's time per interval ("load":
  // trace-serve's CPU load chart), all on one grid.
  bool load = false;
};

// One snapshot as records, all stamped with the newest record's time.
void write_snapshot(OutBuffer& out, const LiveStats& stats, const ReportOptions& options, bool final);
// The same as a table.
std::string render_table(const LiveStats& stats, const ReportOptions& options);

// The PC samples as folded stacks for flame-graph tools (flamegraph.pl, speedscope,
// inferno): "task;function count" per line, the task being what had the CPU at the sample.
// Needs LiveStats(places = true).
std::string folded_stacks(const LiveStats& stats);
// The PC samples in the Callgrind format (KCacheGrind, QCachegrind): one "Samples" event per
// file, function and line (line 0 without DWARF). Needs LiveStats(places = true).
std::string callgrind_profile(const LiveStats& stats);

}  // namespace tp::analysis
