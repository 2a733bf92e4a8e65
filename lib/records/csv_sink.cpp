#include "records/csv_sink.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "records/record_check.hpp"

namespace tp {

TimeFormat parse_time_format(std::string_view name) {
  if (name == "raw") return TimeFormat::raw;
  if (name == "seconds") return TimeFormat::seconds;
  if (name == "rfc3339") return TimeFormat::rfc3339;
  throw Error(ExitCode::usage, fmt::format("--time '{}': expected raw, seconds or rfc3339", name));
}

void check_csv_options(const CsvOptions& options) {
  if (!options.columns.empty() && !options.preset.empty()) {
    throw Error(ExitCode::usage, "--columns and --preset exclude each other");
  }
}

CsvSink::CsvSink(const CsvOptions& options, BatchedWriter& writer, BadLine on_bad_line)
    : options_(options),
      write_header_(options.header && writer.starts_empty()),
      writer_(writer),
      on_bad_line_(std::move(on_bad_line)) {
  check_csv_options(options_);
  if (!options_.preset.empty()) start(preset_columns(options_.preset));
  if (!options_.columns.empty()) start(parse_columns(options_.columns));
}

simdjson::error_code CsvSink::on_line(NdjsonLine& line) {
  // Only records and frames lines become rows: the record's one validator decides.
  if (!check_record_line(line.root, line.problem)) return simdjson::INCORRECT_TYPE;
  if (rows_) return write(line.root);
  inference_.add(line.root);
  waiting_.push_back({line.number, std::string(line.text)});
  if (waiting_.size() >= options_.infer_lines) finish_inference();
  return simdjson::SUCCESS;
}

void CsvSink::finish(const Logger& log) {
  if (!rows_) finish_inference();
  if (rows_->unconverted_times() != 0) {
    log.warn(
        fmt::format("{} timestamps were left unconverted (--time {} needs --cpu-hz for cycles; rfc3339 "
                    "works for host time only)",
                    rows_->unconverted_times(), options_.time_name));
  }
}

void CsvSink::start(std::vector<CsvColumn> columns) {
  rows_.emplace(std::move(columns), options_.delimiter, options_.time, options_.cpu_hz, options_.crlf);
  if (write_header_) {
    rows_->header(writer_.buffer());
    writer_.commit();
  }
}

void CsvSink::finish_inference() {
  start(inference_.columns());
  simdjson::dom::parser parser;
  for (const Waiting& line : waiting_) {
    simdjson::dom::object root;
    simdjson::error_code error = parser.parse(line.text).get(root);
    if (error == simdjson::SUCCESS) error = write(root);
    if (error != simdjson::SUCCESS) on_bad_line_(line.number, simdjson::error_message(error));
  }
  waiting_.clear();
}

simdjson::error_code CsvSink::write(simdjson::dom::object root) {
  const simdjson::error_code error = rows_->row(root, writer_.buffer());
  writer_.commit();
  return error;
}

}  // namespace tp
