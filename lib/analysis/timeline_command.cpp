#include "analysis/timeline_command.hpp"

#include <fmt/format.h>

#include <optional>

#include "analysis/observation.hpp"
#include "analysis/timeline.hpp"

namespace tp::analysis {

ExitCode write_timeline(const TimelineCommandOptions& o, const std::string& output, bool append, const Logger& log) {
  check_time_window(o.window);
  RecordToolRun tool(o.input, output, append, log);
  BatchedWriter& writer = tool.writer();
  TimelineWriter timeline({o.cpu_hz, o.window.since, o.window.until});
  timeline.begin(writer.buffer());
  std::optional<LineStream> stream;
  stream.emplace(
      [&](NdjsonLine& line) {
        return observe_line(line, [&](const Observation& observation) {
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
  return ExitCode::ok;
}

}  // namespace tp::analysis
