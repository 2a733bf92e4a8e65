#include "query/csv_sink.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "json/ndjson_reader.hpp"
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
      // An older trace-csv left a lone newline for an empty input: such a file counts as empty.
      write_header_(options.header && (writer.clear_if_blank(), writer.starts_empty())),
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

std::vector<ChunkHandler> CsvSink::chunk_handlers(unsigned threads, const ByteSource& source) {
  if (!rows_) infer_from_file(source);
  std::vector<ChunkHandler> handlers;
  for (unsigned i = 0; i < threads; ++i) {
    auto rows = std::make_shared<CsvRowWriter>(*rows_);
    thread_rows_.push_back(rows);
    handlers.emplace_back([rows](NdjsonLine& line, OutBuffer& out) {
      if (!check_record_line(line.root, line.problem)) return simdjson::INCORRECT_TYPE;
      return rows->row(line.root, out);
    });
  }
  return handlers;
}

// The columns on_line would infer: from the first infer_lines records (bad lines are left
// to the reading that follows, which reports them).
void CsvSink::infer_from_file(const ByteSource& source) {
  const auto [begin, end] = source.unread_range();
  std::size_t records = 0;
  NdjsonReader reader(
      [&](NdjsonLine& line) {
        if (!check_record_line(line.root, line.problem)) return simdjson::INCORRECT_TYPE;
        inference_.add(line.root);
        ++records;
        return simdjson::SUCCESS;
      },
      nullptr);
  std::string piece(std::size_t{1} << 20U, '\0');
  std::uint64_t offset = begin;
  while (offset < end && records < options_.infer_lines) {
    const std::size_t got = read_at(source.fd(), piece.data(), piece.size(), offset);
    if (got == 0) break;
    offset += got;
    // Line by line, to stop at exactly the record that completes the sample.
    std::string_view rest(piece.data(), got);
    while (!rest.empty() && records < options_.infer_lines) {
      const std::size_t line_end = std::min(rest.find('\n'), rest.size() - 1) + 1;
      reader.feed(rest.substr(0, line_end));
      rest.remove_prefix(line_end);
    }
  }
  if (records < options_.infer_lines) reader.finish();
  start(inference_.columns());
}

void CsvSink::finish(const Logger& log) {
  if (!rows_) finish_inference();
  for (const auto& rows : thread_rows_) rows_->add_unconverted_times(rows->unconverted_times());
  if (rows_->unconverted_times() != 0) {
    log.warn(
        fmt::format("{} timestamps were left unconverted (--time {} needs --cpu-hz for cycles; rfc3339 "
                    "works for host time only)",
                    rows_->unconverted_times(), options_.time_name));
  }
}

void CsvSink::start(std::vector<CsvColumn> columns) {
  rows_.emplace(std::move(columns), options_.delimiter, options_.time, options_.cpu_hz, options_.crlf);
  // No columns (inferred from no records): no header either, so an empty input writes
  // nothing and a later --append run still finds the file empty.
  if (write_header_ && !rows_->columns().empty()) {
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
