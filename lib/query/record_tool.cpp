#include "query/record_tool.hpp"

#include "core/error.hpp"
#include "core/signals.hpp"

namespace tp {

void check_time_window(const TimeWindow& window) {
  if (window.since && window.until && *window.since >= *window.until) {
    throw Error(ExitCode::usage, "--since must be before --until (nothing lies between them)");
  }
}

RecordToolRun::RecordToolRun(const RecordInput& input, const std::string& output, bool append, const Logger& log,
                             bool show_progress)
    : source_(ByteSource::open(input.file)),
      writer_(BatchedWriter::open(output, append, {input.file})),
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
