// The input side of the line tools (trace-filter, trace-csv): NDJSON from a byte
// stream, one handler call per line, bad lines counted and reported with their line
// numbers (the first few one by one, then only counted), fatal with --strict.
#pragma once

#include <cstdint>
#include <functional>

#include "core/log.hpp"
#include "core/stream_loop.hpp"
#include "json/ndjson_chunks.hpp"
#include "json/ndjson_reader.hpp"

namespace tp {

class LineStream final : public StreamHandler {
 public:
  static constexpr std::uint64_t reported_bad_lines = 10;

  LineStream(NdjsonReader::LineHandler on_line, const Logger& logger, bool strict,
             std::size_t max_line = NdjsonReader::default_max_line);

  // Lines go to `quick` first (NdjsonReader::QuickHandler), on the one-thread path.
  void set_quick_handler(NdjsonReader::QuickHandler quick) { reader_.set_quick_handler(std::move(quick)); }

  void on_data(std::span<const std::uint8_t> bytes, std::uint64_t now_us) override;
  void on_end(std::uint64_t now_us) override;
  // Instead of the stream loop, for a seekable source: its whole lines as they were when it
  // was opened are read on one thread per handler (read_ndjson_chunks; a handler gets line
  // numbers within its chunk), the outputs written in file order and bad lines reported with
  // their numbers in the file, exactly as reading line by line would. Stops after
  // `max_output_lines` lines of output (0: never), on SIGINT/SIGTERM between chunks, or on a
  // bad line with --strict. A file that shrank meanwhile is Error(io_error). Returns true when
  // the rest is to be read line by line (run_stream_loop with this stream): a last line
  // without its newline yet, and whatever was added since the file was opened, as one thread
  // reading to the end would see them; the source is positioned there.
  [[nodiscard]] bool run_chunks(ByteSource& source, std::vector<ChunkHandler> handlers, BatchedWriter& writer,
                                Progress& progress, std::uint64_t max_output_lines = 0);
  // Instead of the stream loop, for a stream (a pipe) on one thread per handler
  // (NdjsonStreamChunks): reads `source` itself, and writes the handlers' output in input
  // order. Lines wait at most 10 ms to be handed on; when the input pauses for the stream
  // loop's idle poll every line read so far is handled and the output flushed. Stops as
  // run_chunks does; on SIGINT/SIGTERM the whole lines already read are handled first.
  void run_stream_chunks(ByteSource& source, std::vector<ChunkHandler> handlers, BatchedWriter& writer,
                         Progress& progress, std::uint64_t max_output_lines = 0);
  // For input that can go on threads only once something is known (trace-csv's inferred
  // columns): the stream loop stops as soon as `ready` holds, leaving the start of a line
  // not complete yet for run_stream_chunks, which goes on from there.
  void hand_over_when(std::function<bool()> ready) { ready_ = std::move(ready); }
  [[nodiscard]] bool done() const override { return done_ || handing_over(); }
  // No more input is wanted (e.g. --limit reached).
  void stop() noexcept {
    done_ = true;
    reader_.stop();
  }

  // A line found bad after its turn: counted and reported like the others.
  void report_bad_line(std::uint64_t number, std::string_view message) { reader_.report_bad_line(number, message); }

  // How many threads to parse with: `requested`, or 0: one per core, at most max_threads.
  static constexpr unsigned max_threads = 8;
  [[nodiscard]] static unsigned threads_for(unsigned requested) noexcept;
  // Output lines run_chunks wrote (the lines whose handler wrote output, with a limit):
  // counted with a limit, or once asked for.
  void count_output_lines() noexcept { counting_output_ = true; }
  [[nodiscard]] std::uint64_t output_lines() const noexcept { return output_lines_; }

  [[nodiscard]] std::uint64_t lines() const noexcept { return reader_.lines(); }
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return reader_.bad_lines(); }
  // One warning summing up the bad lines, if there were any.
  void report_summary(std::string_view source_name) const;

 private:
  [[nodiscard]] bool handing_over() const { return ready_ && ready_(); }
  // Writes a chunk's output and reports its bad lines; false: stop (the limit, or with
  // stop_on_signal a SIGINT/SIGTERM).
  bool take_chunk(const NdjsonChunk& chunk, BatchedWriter& writer, bool stop_on_signal = true);

  const Logger& logger_;
  std::size_t max_line_;
  NdjsonReader reader_;
  bool done_ = false;
  std::uint64_t max_output_lines_ = 0;
  std::uint64_t output_lines_ = 0;
  bool counting_output_ = false;
  std::function<bool()> ready_;
};

}  // namespace tp
