#include "cli/record_tool.hpp"

#include "core/signals.hpp"

namespace tp {

void add_record_input(CLI::App& app, RecordInput& input) {
  app.add_option("FILE", input.file, "Records to read ('-' or none = stdin)");
  app.add_flag("--strict", input.strict, "A line that is not a record is an error (exit 6), not skipped");
}

void add_time_window(CLI::App& app, TimeWindow& window) {
  app.add_option("--since", window.since, "Only records with timestamp >= T")->type_name("T");
  app.add_option("--until", window.until, "Only records with timestamp < T")->type_name("T");
}

void check_time_window(const TimeWindow& window) {
  if (window.since && window.until && *window.since >= *window.until) {
    throw Error(ExitCode::usage, "--since must be before --until (nothing lies between them)");
  }
}

RecordToolRun::RecordToolRun(const RecordInput& input, const CommonOptions& common, const Logger& log,
                             bool show_progress)
    : source_(ByteSource::open(input.file)),
      writer_(BatchedWriter::open(common.output, common.append, {input.file})),
      progress_(source_.size(), show_progress && log.verbosity() != Verbosity::quiet) {}

void RecordToolRun::read(LineStream& stream, const StreamLoopOptions& loop) {
  run_stream_loop(source_, stream, writer_, progress_, loop);
}

void RecordToolRun::read(LineStream& stream, const ThreadedRead& threaded) {
  if (threaded.threads <= 1) return read(stream);
  if (source_.seekable()) {
    if (stream.run_chunks(source_, threaded.handlers(), writer_, progress_, threaded.max_output_lines)) read(stream);
    return;
  }
  if (threaded.ready) {
    stream.hand_over_when(threaded.ready);
    if (!threaded.ready()) read(stream);
    if (!threaded.ready() || stop_requested() != 0) return;
  }
  stream.run_stream_chunks(source_, threaded.handlers(), writer_, progress_, threaded.max_output_lines);
}

void RecordToolRun::finish(const LineStream& stream) {
  writer_.flush();
  stream.report_summary(source_.name());
}

}  // namespace tp
