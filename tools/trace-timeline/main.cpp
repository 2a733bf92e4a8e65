// trace-timeline: the records as a timeline for ui.perfetto.dev, chrome://tracing and
// speedscope (Chrome Trace Event JSON): tasks, idle, exception and ISR handlers nested as
// they preempted each other, PC-sample functions, markers, console lines, counters, losses.
#include <fmt/format.h>

#include "analysis/observation.hpp"
#include "analysis/timeline.hpp"
#include "cli/cli.hpp"
#include "cli/record_tool.hpp"

namespace {

struct Options {
  tp::RecordInput input;
  std::uint64_t cpu_hz = 0;
  tp::TimeWindow window;
};

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  tp::check_time_window(o.window);
  tp::RecordToolRun tool(o.input, common, log);
  tp::BatchedWriter& writer = tool.writer();
  tp::analysis::TimelineWriter timeline({o.cpu_hz, o.window.since, o.window.until});
  timeline.begin(writer.buffer());
  std::optional<tp::LineStream> stream;
  stream.emplace(
      [&](tp::NdjsonLine& line) {
        return tp::analysis::observe_line(line, [&](const tp::analysis::Observation& observation) {
          timeline.add(observation, writer.buffer());
          writer.commit();
          if (timeline.done()) stream->stop();
        });
      },
      log, o.input.strict);
  tool.read(*stream);
  timeline.finish(writer.buffer());
  writer.flush();
  if (timeline.unscaled()) {
    log.warn("timestamps are cycles or ticks: without --cpu-hz the timeline draws one as one microsecond");
  }
  log.verbose(fmt::format("{} trace events", timeline.events()));
  tool.finish(*stream);
  return tp::ExitCode::ok;
}

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
  Options o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  tp::add_cpu_hz_option(app, o.cpu_hz, "cycle timestamps become microseconds");
  tp::add_time_window(app, o.window);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-timeline", [&] { return run_main(argc, argv); });
}
