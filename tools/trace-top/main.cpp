// trace-top: live statistics over records (orbtop's job): where the PC samples fall, how
// long and how often each exception or ISR handler runs and how deeply they nest, the CPU
// load of each task. A table redrawn on a terminal, snapshot records in a pipe.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "analysis/live_stats.hpp"
#include "analysis/observation.hpp"
#include "analysis/top_report.hpp"
#include "cli/cli.hpp"
#include "cli/record_tool.hpp"

namespace {

struct Options {
  tp::RecordInput input;
  double interval = 1.0;
  bool once = false;
  std::size_t top = 10;
  std::uint64_t cpu_hz = 0;
  std::string format = "auto";
  bool lines = false;
};

// Where the output goes decides its form unless --format says: a terminal gets the table.
bool wants_table(const Options& o, const tp::CommonOptions& common) {
  if (o.format != "auto") return o.format == "table";
  return common.output == "-" && ::isatty(STDOUT_FILENO) == 1;
}

// The profile exports, written once at the end of input.
bool is_export(const Options& o) {
  return o.format == "folded" || o.format == "callgrind";
}

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  const bool table = wants_table(o, common);
  tp::analysis::ReportOptions report;
  report.top = o.top;
  report.cpu_hz = o.cpu_hz;
  report.colour = table && common.output == "-" && ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  tp::RecordToolRun tool(o.input, common, log, false);
  tp::BatchedWriter& writer = tool.writer();
  tp::analysis::LiveStats stats(is_export(o), o.lines);
  tp::LineStream stream(
      [&](tp::NdjsonLine& line) {
        // The fields the statistics use, read and checked; frames lines carry none.
        return tp::analysis::observe_line(
            line, [&](const tp::analysis::Observation& observation) { stats.add(observation); });
      },
      log, o.input.strict);
  const auto emit = [&](bool final) {
    tp::OutBuffer& out = writer.buffer();
    if (o.format == "folded") {
      out += tp::analysis::folded_stacks(stats);
    } else if (o.format == "callgrind") {
      out += tp::analysis::callgrind_profile(stats);
    } else if (table) {
      // Redrawn in place (cursor home, clear screen) when there are several; the last stays.
      if (!o.once) out += "\x1b[H\x1b[2J";
      out += tp::analysis::render_table(stats, report);
    } else {
      tp::analysis::write_snapshot(out, stats, report, final);
    }
    writer.commit();
    writer.flush();
  };
  tp::StreamLoopOptions loop;
  if (!o.once && !is_export(o)) {
    loop.report_every_us = static_cast<std::uint64_t>(o.interval * 1e6);
    loop.on_report = [&] { emit(false); };
  }
  tool.read(stream, loop);
  emit(true);
  tool.finish(stream);
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Live statistics over tracepipe records: PC-sample profile by function, exception and ISR\n"
      "handlers (count, rate, total/min/avg/max time, nesting, CPU share), CPU load per task.\n"
      "On a terminal a table redrawn every --interval; in a pipe snapshot records (TopSummary,\n"
      "TopFunction, TopHandler, TopTask) every interval and at the end.\n\n"
      "Examples:\n"
      "  swo-capture --simulate | itm-decode | trace-top\n"
      "  itm-decode --elf fw.elf swo.bin | trace-top --once --cpu-hz 64000000\n"
      "  itm-decode swo.bin | trace-top --once | trace-csv --columns kind,name,count,max\n"
      "  itm-decode --elf fw.elf swo.bin | trace-top --format folded > samples.folded",
      "trace-top"};
  Options o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  app.add_option("--interval", o.interval, "Seconds between redraws or snapshots")
      ->check(CLI::Range(0.05, 3600.0))
      ->default_val(1.0);
  app.add_flag("--once", o.once, "Only the statistics at the end of input");
  app.add_option("--top", o.top, "Functions and handlers shown")->check(CLI::Range(1, 100000))->default_val(10);
  tp::add_cpu_hz_option(app, o.cpu_hz, "the table's times in seconds for cycle timestamps");
  app.add_option("--format", o.format,
                 "auto (table on a terminal, else ndjson), table, ndjson; at the end only: folded (flame graphs: "
                 "task;function count) or callgrind (KCacheGrind)")
      ->check(CLI::IsMember({"auto", "table", "ndjson", "folded", "callgrind"}))
      ->default_val("auto");
  app.add_flag("--lines", o.lines, "Profile by function and source line (PcSample records that carry file and line)");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-top", [&] { return run_main(argc, argv); });
}
