// NDJSON from a regular file on several threads. The file is cut into chunks of bytes; a
// line belongs to the chunk it starts in (a thread reads on past its chunk's end to finish
// its last line, and skips the part of a line the chunk before owns). Each thread parses
// and handles its chunks' lines with its own NdjsonReader and handler into the chunk's
// output; the chunks come back on the calling thread in file order, with their line counts
// and bad lines (numbered within the chunk), so the caller can write and report exactly
// what reading the file line by line would. Memory stays bounded: at most two chunks per
// thread are in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
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

struct NdjsonChunkOptions {
  std::size_t chunk_size = std::size_t{1} << 20U;
  std::size_t max_line = NdjsonReader::default_max_line;
  bool mark_outputs = false;  // list the lines that wrote output (to stop after N of them)
};

// Reads bytes [begin, end) of the regular file `fd` with one thread per handler (pread:
// the file offset is left alone). on_chunk runs on the calling thread, in file order;
// returning false stops the reading. A handler's exception is rethrown here, after the
// chunks before it were handed over. An error reading the file throws tp::Error.
void read_ndjson_chunks(int fd, std::uint64_t begin, std::uint64_t end, std::vector<ChunkLineHandler> handlers,
                        const std::function<bool(NdjsonChunk&)>& on_chunk, const NdjsonChunkOptions& options = {});

}  // namespace tp
