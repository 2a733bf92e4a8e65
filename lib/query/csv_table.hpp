// Records flattened to CSV rows (RFC 4180): columns are JSON Pointers into each record.
// Strings are always quoted and numbers never, as jq's @csv does; null and missing
// fields are empty cells; objects and arrays become their (minified) JSON text.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/csv_field.hpp"
#include "core/out_buffer.hpp"
#include "query/field_path.hpp"

namespace tp {

struct CsvColumn {
  std::string header;
  FieldPath field;
};

enum class TimeFormat : std::uint8_t { raw, seconds, rfc3339 };

// "time,port,kind,message" or "name=path,...": aliases and dotted paths.
std::vector<CsvColumn> parse_columns(std::string_view list);
// Named column sets: basic, counters, exceptions, ekotrace. Throws tp::Error(usage).
std::vector<CsvColumn> preset_columns(std::string_view name);
std::vector<std::string_view> preset_names();

class CsvRowWriter {
 public:
  CsvRowWriter(std::vector<CsvColumn> columns, char delimiter, TimeFormat time, std::uint64_t cpu_hz,
               bool crlf = false);

  void header(OutBuffer& out) const;
  // Appends one row; on a bad line returns the error and leaves `out` as it was.
  simdjson::error_code row(simdjson::dom::object root, OutBuffer& out);
  [[nodiscard]] const std::vector<CsvColumn>& columns() const noexcept { return columns_; }
  // Timestamps that could not be converted (e.g. cycles without --cpu-hz): left raw.
  [[nodiscard]] std::uint64_t unconverted_times() const noexcept { return unconverted_times_; }
  // Those of a copy that wrote rows on another thread.
  void add_unconverted_times(std::uint64_t count) noexcept { unconverted_times_ += count; }

 private:
  bool append_time(OutBuffer& out, std::string_view timestamp, std::string_view clock);

  std::vector<CsvColumn> columns_;
  char delimiter_;
  std::string_view line_end_;
  TimeFormat time_;
  std::uint64_t cpu_hz_;
  std::int64_t realtime_minus_monotonic_us_;  // to place host monotonic times on the wall clock
  std::string clock_;
  std::uint64_t unconverted_times_ = 0;
};

// Columns inferred from sample records: every leaf path, in order of first appearance.
class ColumnInference {
 public:
  void add(simdjson::dom::object root);
  [[nodiscard]] std::vector<CsvColumn> columns() const;

 private:
  void walk(simdjson::dom::element value, std::string& path);
  void add_path(const std::string& path);

  std::vector<std::string> paths_;
  std::unordered_set<std::string> seen_;
};

}  // namespace tp
