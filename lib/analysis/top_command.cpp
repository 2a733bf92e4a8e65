#include "analysis/top_command.hpp"

#include <unistd.h>

#include <cstdlib>

#include "analysis/live_stats.hpp"
#include "analysis/observation.hpp"

namespace tp::analysis {
namespace {

// Where the output goes decides its form unless --format says: a terminal gets the table.
bool wants_table(const TopOptions& o, const std::string& output) {
  if (o.format != "auto") return o.format == "table";
  return output == "-" && ::isatty(STDOUT_FILENO) == 1;
}

// The profile exports, written once at the end of input.
bool is_export(const TopOptions& o) {
  return o.format == "folded" || o.format == "callgrind";
}

// The statistics so far as the options ask; `final`: at the end of input.
void write_report(const TopOptions& o, const ReportOptions& report, bool table, const LiveStats& stats, bool final,
                  OutBuffer& out) {
  if (o.format == "folded") {
    out += folded_stacks(stats);
  } else if (o.format == "callgrind") {
    out += callgrind_profile(stats);
  } else if (table) {
    // Redrawn in place (cursor home, clear screen) when there are several; the last stays.
    if (!o.once) out += "\x1b[H\x1b[2J";
    out += render_table(stats, report);
  } else {
    write_snapshot(out, stats, report, final);
  }
}

}  // namespace

ExitCode report_top(const TopOptions& o, const std::string& output, bool append, const Logger& log) {
  const bool table = wants_table(o, output);
  ReportOptions report = o.report;
  report.colour = table && output == "-" && ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  RecordToolRun tool(o.input, output, append, log, false);
  BatchedWriter& writer = tool.writer();
  LiveStats stats(is_export(o), o.lines);
  LineStream stream(
      [&](NdjsonLine& line) {
        // The fields the statistics use, read and checked; frames lines carry none.
        return observe_line(line, [&](const Observation& observation) { stats.add(observation); });
      },
      log, o.input.strict);
  const auto emit = [&](bool final) {
    write_report(o, report, table, stats, final, writer.buffer());
    writer.commit();
    writer.flush();
  };
  StreamLoopOptions loop;
  if (!o.once && !is_export(o)) {
    loop.report_every_us = static_cast<std::uint64_t>(o.interval * 1e6);
    loop.on_report = [&] { emit(false); };
  }
  tool.read(stream, loop);
  emit(true);
  tool.finish(stream);
  return ExitCode::ok;
}

}  // namespace tp::analysis
