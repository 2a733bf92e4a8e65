// trace-filter's judging on each thread that reads lines: the filter (a regular
// expression's match data is its own) and the shapes of the good lines seen so far
// (records/record_shapes), which judge most later lines without a parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/out_buffer.hpp"
#include "json/ndjson_chunks.hpp"
#include "json/ndjson_reader.hpp"
#include "query/record_filter.hpp"
#include "records/record_shapes.hpp"

namespace tp {

class ThreadFilter {
 public:
  explicit ThreadFilter(FilterCriteria criteria) : filter_(std::move(criteria)) {}

  // Whether quick() can take lines: the criteria read no field the shapes do not give.
  [[nodiscard]] bool quick_enabled() const noexcept { return !filter_.reads_fields(); }
  // A parsed line, judged whole; a good one teaches its shape.
  Verdict judge(NdjsonLine& line);
  // A line not parsed: whether it is selected, when it has a learnt shape.
  std::optional<bool> quick(std::string_view text);

 private:
  RecordFilter filter_;
  RecordShapes shapes_;
  std::string why_;
};

// A selected line as the output has it: its bytes, then a newline.
inline void pass_line(std::string_view text, OutBuffer& out) {
  out += text;
  out += '\n';
}

// One reading thread's handlers (read_ndjson_chunks, NdjsonStreamChunks) over its own
// ThreadFilter: give each thread criteria of its own.
ChunkHandler chunk_filter(FilterCriteria criteria);

}  // namespace tp
