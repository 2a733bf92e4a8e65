// eko-collect's output: CSV with ekotrace's columns, or NDJSON records (docs/design.md "The record") of the
// kinds EkoEvent and EkoClock whose data carries the same fields, so
// `trace-csv --preset ekotrace` turns them into the same CSV.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/batched_writer.hpp"
#include "ekotrace/compact_log.hpp"

namespace tp::ekotrace {

enum class OutputFormat : std::uint8_t { csv, ndjson };

class RowWriter {
 public:
  // Appends to `path` ("-" = stdout); the CSV header only when the output starts empty.
  // `labels` name the tracers (NDJSON's data.tracer).
  RowWriter(const std::string& path, OutputFormat format, std::uint32_t session_id, std::vector<std::string> labels);

  // Appends the rows of one poll and writes them out at once, so a killed collector
  // loses nothing it already read.
  void write(std::span<const Row> rows, std::int64_t receive_wall_us, std::uint64_t receive_monotonic_us);
  [[nodiscard]] std::uint64_t rows_written() const noexcept { return rows_written_; }

 private:
  void append_csv(const Row& row, std::string_view receive_time);
  void append_ndjson(const Row& row, std::string_view receive_time, std::uint64_t monotonic_us);

  BatchedWriter out_;
  OutputFormat format_;
  std::uint32_t session_id_;
  std::vector<std::string> labels_;
  std::uint64_t rows_written_ = 0;
};

}  // namespace tp::ekotrace
