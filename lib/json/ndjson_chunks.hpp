// NDJSON from a regular file on several threads. The file is cut into chunks of bytes; a
// line belongs to the chunk it starts in (a thread reads on past its chunk's end to finish
// its last line, and skips the part of a line the chunk before owns). Each thread parses
// and handles its chunks' lines with its own NdjsonReader and handler into the chunk's
// output; the chunks come back on the calling thread in file order, with their line counts
// and bad lines (numbered within the chunk), so the caller can write and report exactly
// what reading the file line by line would. Memory stays bounded: at most two chunks per
// thread are in flight. A stream (a pipe) cannot be read at offsets: NdjsonStreamChunks, below,
// has the calling thread read it and cut it into pieces of whole lines for the threads.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/out_buffer.hpp"
#include "json/ndjson_reader.hpp"

namespace tp {

struct NdjsonChunk {
  struct BadLine {
    std::uint64_t line;  // 1-based within the chunk
    std::string message;
    std::size_t output_size;  // how much of `output` the lines before it wrote
  };
  struct OutputMark {
    std::uint64_t line;      // a line whose handler wrote output
    std::size_t output_end;  // where its output ends
  };
  OutBuffer output;
  std::vector<OutputMark> marks;  // with NdjsonChunkOptions::mark_outputs only
  std::uint64_t lines = 0;        // lines that start in the chunk, blank and bad ones too
  std::uint64_t end_offset = 0;   // where the chunk's byte range ends in the file
  std::vector<BadLine> bad_lines;
};

// Handles one good line on a worker thread, writing into that chunk's output.
using ChunkLineHandler = std::function<simdjson::error_code(NdjsonLine&, OutBuffer&)>;
// Takes a line without a parse, writing into that chunk's output (NdjsonReader::QuickHandler).
using ChunkQuickHandler = std::function<bool(std::string_view, std::uint64_t, OutBuffer&)>;

// One worker thread's handlers: the quick one, if any, sees each line first.
struct ChunkHandler {
  template <class LineHandler>
  requires std::convertible_to<LineHandler, ChunkLineHandler> ChunkHandler(LineHandler line)
      : on_line(std::move(line)) {}  // NOLINT(google-explicit-constructor)
  ChunkHandler(ChunkLineHandler line, ChunkQuickHandler quick)
      : on_line(std::move(line)), on_quick_line(std::move(quick)) {}
  ChunkLineHandler on_line;
  ChunkQuickHandler on_quick_line;
};

struct NdjsonChunkOptions {
  std::size_t chunk_size = std::size_t{1} << 20U;
  std::size_t max_line = NdjsonReader::default_max_line;
  bool mark_outputs = false;  // list the lines that wrote output (to stop after N of them)
  std::string name = {};      // read_ndjson_chunks: the file's, for its errors
  // NdjsonStreamChunks: whole lines wait at most this long for more to fill a chunk.
  std::uint64_t max_gather_us = 10'000;
};

// What a worker of NdjsonStreamChunks parses (its own bookkeeping): whole lines (the usual), the start of a line
// longer than max_line (one bad line; the cutter skips the rest of it), or the input's last
// line, which has no newline.
struct StreamPiece {
  enum class Kind : std::uint8_t { whole_lines, over_long, last_line };
  OutBuffer bytes;  // the first `size` are the piece's; the capacity keeps SIMDJSON_PADDING more
  std::size_t size = 0;
  Kind kind = Kind::whole_lines;
  std::uint64_t end_offset = 0;  // bytes of the stream up to the piece's end
};

// Reads bytes [begin, end) of the regular file `fd` with one thread per handler (pread:
// the file offset is left alone). on_chunk runs on the
// calling thread, in file order; returning false stops the reading. A handler's exception
// is rethrown here, after the chunks before it were handed over. An error reading the file,
// or its end found before `end` (it shrank), throws tp::Error(io_error).
void read_ndjson_chunks(int fd, std::uint64_t begin, std::uint64_t end, std::vector<ChunkHandler> handlers,
                        const std::function<bool(NdjsonChunk&)>& on_chunk, const NdjsonChunkOptions& options = {});

// NDJSON from a stream (a pipe) on several threads. The caller reads and passes the bytes in
// as they come; whole lines are gathered into pieces of chunk_size bytes (less when they have
// waited max_gather_us, or when the caller says the input paused) that the workers parse, each
// with its own handler, into NdjsonChunks handed back through on_chunk in stream order, with
// their line counts and bad lines as read_ndjson_chunks gives them: the same output and
// reports as one NdjsonReader fed the same reads. Memory stays bounded: at most two pieces per
// worker in flight (feed waits for the oldest) and a partial line of at most max_line bytes.
// Every call below returns false once on_chunk returned false (and does nothing after that);
// an exception of a handler or of on_chunk is thrown by the call that hands its chunk back.
class NdjsonStreamChunks {
 public:
  using OnChunk = std::function<bool(NdjsonChunk&)>;
  NdjsonStreamChunks(std::vector<ChunkHandler> handlers, OnChunk on_chunk, const NdjsonChunkOptions& options = {});
  NdjsonStreamChunks(const NdjsonStreamChunks&) = delete;
  NdjsonStreamChunks& operator=(const NdjsonStreamChunks&) = delete;
  NdjsonStreamChunks(NdjsonStreamChunks&&) = delete;
  NdjsonStreamChunks& operator=(NdjsonStreamChunks&&) = delete;
  ~NdjsonStreamChunks();  // the workers finish the piece they parse and are joined

  // Bytes read at now_us; hands back the chunks done so far without waiting for others.
  bool feed(std::string_view bytes, std::uint64_t now_us);
  // The same without a copy: read into room(n) (at most n bytes, 64 KiB or more when n is),
  // then say how many bytes came.
  [[nodiscard]] std::span<char> room(std::size_t at_most);
  bool feed_room(std::size_t size, std::uint64_t now_us);
  // What comes next is the rest of a line already reported too long: skip to its end.
  // Before the first feed (a reader hands over its pending state).
  void skip_rest_of_line() noexcept { skipping_ = true; }
  // The input paused: the lines gathered go to a worker now and every chunk comes back.
  bool catch_up();
  // End of input: the last line (without a newline) too, then every chunk comes back.
  bool finish();
  // Nothing gathered and nothing in flight.
  [[nodiscard]] bool idle() const noexcept;

 private:
  class Workers;
  bool hand_over(StreamPiece::Kind kind, std::size_t size);
  bool hand_over_whole_lines();

  std::unique_ptr<Workers> workers_;
  NdjsonChunkOptions options_;
  OutBuffer gathered_;  // whole lines up to whole_end_, then the start of a line
  std::size_t whole_end_ = 0;
  std::uint64_t offset_ = 0;  // stream bytes before gathered_
  std::uint64_t gathered_since_us_ = 0;
  std::uint64_t now_us_ = 0;  // of the last feed
  bool skipping_ = false;     // inside the rest of an over-long line
  bool stopped_ = false;
};

}  // namespace tp
