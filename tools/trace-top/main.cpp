// trace-top: live statistics over records (orbtop's job): where the PC samples fall, how
// long and how often each exception or ISR handler runs and how deeply they nest, the CPU
// load of each task. A table redrawn on a terminal, snapshot records in a pipe.
#include "analysis/top_command.hpp"
#include "cli/cli.hpp"
#include "cli/record_options.hpp"

namespace {

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
  tp::analysis::TopOptions o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  app.add_option("--interval", o.interval, "Seconds between redraws or snapshots")
      ->check(CLI::Range(0.05, 3600.0))
      ->default_val(o.interval);
  app.add_flag("--once", o.once, "Only the statistics at the end of input");
  app.add_option("--top", o.report.top, "Functions and handlers shown")
      ->check(CLI::Range(1, 100000))
      ->default_val(o.report.top);
  tp::add_cpu_hz_option(app, o.report.cpu_hz, "the table's times in seconds for cycle timestamps");
  app.add_option("--format", o.format,
                 "auto (table on a terminal, else ndjson), table, ndjson; at the end only: folded (flame graphs: "
                 "task;function count) or callgrind (KCacheGrind)")
      ->check(CLI::IsMember({"auto", "table", "ndjson", "folded", "callgrind"}))
      ->default_val(o.format);
  app.add_flag("--lines", o.lines, "Profile by function and source line (PcSample records that carry file and line)");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    return tp::analysis::report_top(o, common.output, common.append, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-top", [&] { return run_main(argc, argv); });
}
