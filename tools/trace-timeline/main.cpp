// trace-timeline: the records as a timeline for ui.perfetto.dev, chrome://tracing and
// speedscope (Chrome Trace Event JSON): tasks, idle, exception and ISR handlers nested as
// they preempted each other, PC-sample functions, markers, console lines, counters, losses.
#include <fmt/format.h>

#include "analysis/observation.hpp"
#include "analysis/timeline.hpp"
#include "cli/cli.hpp"
#include "query/line_stream.hpp"

namespace {

struct Options {
  std::string input = "-";
  std::uint64_t cpu_hz = 0;
  std::optional<std::uint64_t> since;
  std::optional<std::uint64_t> until;
  bool strict = false;
};

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  if (o.since && o.until && *o.since >= *o.until) {
    throw tp::Error(tp::ExitCode::usage, "--since must be before --until");
  }
  tp::ByteSource source = tp::ByteSource::open(o.input);
  tp::BatchedWriter writer = tp::BatchedWriter::open(common.output, common.append, {o.input});
  tp::analysis::TimelineWriter timeline({o.cpu_hz, o.since, o.until});
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
      log, o.strict);
  tp::Progress progress(source.size(), log.verbosity() != tp::Verbosity::quiet);
  tp::run_stream_loop(source, *stream, writer, progress);
  timeline.finish(writer.buffer());
  writer.flush();
  if (timeline.unscaled()) {
    log.warn("timestamps are cycles or ticks: without --cpu-hz the timeline draws one as one microsecond");
  }
  log.verbose(fmt::format("{} trace events", timeline.events()));
  stream->report_summary(source.name());
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
  app.add_option("FILE", o.input, "Records ('-' or none = stdin)");
  app.add_option("--cpu-hz", o.cpu_hz, "Target clock: cycle timestamps become microseconds")->type_name("HZ");
  app.add_option("--since", o.since, "Only from timestamp T on (what runs at T starts there)")->type_name("T");
  app.add_option("--until", o.until, "Only before timestamp T (what still runs ends there; reading stops)")
      ->type_name("T");
  app.add_flag("--strict", o.strict, "A line that is not a record is an error (exit 6), not skipped");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-timeline", [&] { return run_main(argc, argv); });
}
