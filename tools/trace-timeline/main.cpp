// trace-timeline: the records as a timeline for ui.perfetto.dev, chrome://tracing and
// speedscope (Chrome Trace Event JSON): tasks, idle, exception and ISR handlers nested as
// they preempted each other, PC-sample functions, markers, console lines, counters, losses.
#include "analysis/timeline_command.hpp"
#include "cli/cli.hpp"
#include "cli/record_options.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Write tracepipe records as a timeline (Chrome Trace Event JSON) for ui.perfetto.dev,\n"
      "chrome://tracing and speedscope: one track per task and per exception or ISR handler,\n"
      "handlers nested as they preempted each other, idle, PC-sample functions (with symbols),\n"
      "markers and console lines as instant events, counters as counter tracks, overflows.\n\n"
      "Examples:\n"
      "  itm-decode --elf fw.elf swo.bin | trace-timeline --cpu-hz 64000000 -o trace.json\n"
      "  swo-capture --simulate --duration 2 | itm-decode | trace-timeline -o sim.json\n"
      "  trace-timeline --since 64000000 --until 128000000 --cpu-hz 64000000 records.ndjson > second.json",
      "trace-timeline"};
  tp::analysis::TimelineCommandOptions o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  tp::add_cpu_hz_option(app, o.cpu_hz, "cycle timestamps become microseconds");
  tp::add_time_window(app, o.window);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    return tp::analysis::write_timeline(o, common.output, common.append, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-timeline", [&] { return run_main(argc, argv); });
}
