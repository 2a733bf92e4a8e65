// trace-csv's sink: record lines in (checked by the record's one validator), CSV rows out. Until the columns are known
// (given, a preset, or inferred from the first lines), lines wait; a waiting line whose row cannot be written is
// reported as a bad line like any other, never dropped silently.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/log.hpp"
#include "json/ndjson_chunks.hpp"
#include "json/ndjson_reader.hpp"
#include "query/csv_table.hpp"

namespace tp {

struct CsvOptions {
  std::string columns;  // --columns: aliases or header=dotted.path
  std::string preset;   // --preset
  bool header = true;
  TimeFormat time = TimeFormat::raw;
  std::string time_name = "raw";  // as the user wrote it, for messages
  std::uint64_t cpu_hz = 0;
  char delimiter = ',';
  bool crlf = false;
  std::size_t infer_lines = 1000;
};

// Throws Error(usage) for a name that is not raw, seconds or rfc3339.
TimeFormat parse_time_format(std::string_view name);
// Throws Error(usage) for options that contradict each other; the sink checks too, but a
// tool calls this before it opens (and truncates) its output.
void check_csv_options(const CsvOptions& options);

class CsvSink {
 public:
  // A bad line found after its turn (a row of a line that waited for the columns): its
  // line number and why.
  using BadLine = std::function<void(std::uint64_t, std::string_view)>;

  // The header is written only when `writer` starts empty (a new file, or not a file).
  CsvSink(const CsvOptions& options, BatchedWriter& writer, BadLine on_bad_line);

  simdjson::error_code on_line(NdjsonLine& line);
  // For a file read on several threads (LineStream::run_chunks) instead of on_line: the
  // columns are decided first (given, a preset, or inferred from the records that start the
  // file's bytes [begin, end), read here), then each thread writes rows with its own copy of
  // the row writer. The rows are those on_line would write.
  std::vector<ChunkHandler> chunk_handlers(unsigned threads, const ByteSource& source);
  // The columns were given (--columns, --preset): chunk_handlers needs no file to infer them
  // from, so a pipe can be read on several threads too (LineStream::run_stream_chunks).
  [[nodiscard]] bool columns_known() const noexcept { return rows_.has_value(); }
  // End of input: the lines still waiting are written; what could not be converted is
  // reported.
  void finish(const Logger& log);

 private:
  struct Waiting {
    std::uint64_t number;
    std::string text;
  };
  void start(std::vector<CsvColumn> columns);
  void finish_inference();
  void infer_from_file(const ByteSource& source);
  simdjson::error_code write(simdjson::dom::object root);

  CsvOptions options_;
  bool write_header_;
  BatchedWriter& writer_;
  BadLine on_bad_line_;
  std::optional<CsvRowWriter> rows_;
  ColumnInference inference_;
  std::deque<Waiting> waiting_;
  std::vector<std::shared_ptr<CsvRowWriter>> thread_rows_;  // chunk_handlers' copies
};

}  // namespace tp
