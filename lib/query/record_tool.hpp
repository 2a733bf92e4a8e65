// What the record tools (trace-filter, trace-csv, trace-top, trace-timeline) share: their
// input (a file or stdin, --strict, threads), their time window, and the driver that reads
// records into a LineStream (a file on threads when the tool can, else line by line), writes
// through one BatchedWriter and reports the summary at the end. Their options are defined in
// lib/cli (record_options).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/stream_loop.hpp"
#include "query/line_stream.hpp"

namespace tp {

struct RecordInput {
  std::string file = "-";
  bool strict = false;
  unsigned threads = 0;  // used by the tools that read on threads (add_threads_option)
};

// --since T and --until T: records with since <= timestamp < until.
struct TimeWindow {
  std::optional<std::uint64_t> since;
  std::optional<std::uint64_t> until;
};
// Throws a usage error when nothing can lie between --since and --until.
void check_time_window(const TimeWindow& window);

// How a tool reads on threads: its handlers for the chunks (made when the threads start) and,
// for a pipe, when it is ready to hand over to them (trace-csv: once its columns are known).
struct ThreadedRead {
  unsigned threads = 1;
  std::function<std::vector<ChunkHandler>()> handlers;
  std::function<bool()> ready;  // none: ready at once
  std::uint64_t max_output_lines = 0;
};

// One run of a record tool: the input opened, `output` opened (a file, '-': stdout; never the
// input itself), progress on stderr unless quiet.
class RecordToolRun {
 public:
  RecordToolRun(const RecordInput& input, const std::string& output, bool append, const Logger& log,
                bool show_progress = true);

  [[nodiscard]] ByteSource& source() noexcept { return source_; }
  [[nodiscard]] BatchedWriter& writer() noexcept { return writer_; }

  // Reads every line into `stream`, one by one.
  void read(LineStream& stream, const StreamLoopOptions& loop = {});
  // Reads on threads as `threaded` says when there are several (a file: its whole lines in
  // chunks, then what remains line by line; a pipe: line by line until ready, then chunks).
  void read(LineStream& stream, const ThreadedRead& threaded);
  // Flushes the output and reports the stream's summary (bad lines, the end).
  void finish(const LineStream& stream);

 private:
  ByteSource source_;
  BatchedWriter writer_;
  Progress progress_;
};

}  // namespace tp
