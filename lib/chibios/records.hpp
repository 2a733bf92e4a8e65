// chibi-pull's outputs: NDJSON records (docs/design.md "The record"), CSV and text, for each shell command
// and for reconstructed timelines. Timeline records are TaskSwitch (with thread names, so
// trace-serve's viewer draws ChibiOS threads as swimlanes) and ThreadExit, stamped in
// microseconds from the system tick (--tick-hz).
#pragma once

#include <cstdint>
#include <string>

#include "chibios/shell_output.hpp"
#include "chibios/timeline.hpp"

namespace tp::chibios {

enum class Format { ndjson, csv, text };

struct RecordContext {
  std::uint64_t host_us = 0;  // timestamp of records that have no target time
  double tick_hz = 1000;      // CH_CFG_ST_FREQUENCY
  double tick_offset = 0;     // added to timeline ticks (watch mode keeps one time line)
};

std::string format_stat(const std::vector<ThreadStat>& threads, Format format, const RecordContext& context);
std::string format_usage(const UsageReport& report, Format format, const RecordContext& context);
std::string format_list(const ThreadList& list, Format format, const RecordContext& context);
std::string format_log(const TimestampLog& log, Format format, const RecordContext& context);
std::string format_trigger(const TriggerReply& reply, Format format, const RecordContext& context);

// One switch as an NDJSON record (TaskSwitch or ThreadExit), names from `threads`.
void append_switch_record(std::string& out, const Switch& change, const std::vector<TimelineThread>& threads,
                          const RecordContext& context);
// One run as a CSV row of format_timeline's CSV.
void append_run_row(std::string& out, const TimelineThread& thread, const Run& run, const RecordContext& context);
// from_log_start: running when the log began (start is the log's first tick, not an IN);
// to_read_time: still running when the log was read (end is its last tick, not an OUT).
inline constexpr std::string_view runs_csv_header =
    "thread,name,prio,logged,start_tick,end_tick,start_us,end_us,from_log_start,to_read_time\n";

// Switches [first, end) of the timeline: NDJSON TaskSwitch/ThreadExit records; CSV: run
// intervals per thread; text: a per-thread summary.
std::string format_timeline(const Timeline& timeline, Format format, const RecordContext& context,
                            std::size_t first_switch = 0);

}  // namespace tp::chibios
