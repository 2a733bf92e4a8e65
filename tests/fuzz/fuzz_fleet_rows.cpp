// Fuzz target: ClickHouse rows. A stamped record line (from a JetStream message, which any
// publisher may fill) becomes a row, and a TSV row (from ClickHouse, or whatever answers on its
// port) becomes a record line: neither crashes; a row is made only of a valid record, and is
// valid JSON; a record line made of a row is one valid record line with its fleet fields, and a
// row refused leaves the output as it was and says why.
#include <simdjson.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "clickhouse/clickhouse_rows.hpp"
#include "records/record_check.hpp"

namespace {

// Whether `line` (without its newline) is one valid record with fleet fields.
bool valid_record(simdjson::dom::parser& parser, std::string_view line) {
  simdjson::dom::object record;
  if (parser.parse(line.data(), line.size()).get_object().get(record) != simdjson::SUCCESS) return false;
  std::string problem;
  const auto checked = tp::check_record_line(record, problem);
  return checked && !checked->frames && checked->has_fleet_fields;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  simdjson::dom::parser parser;
  std::string rows;
  std::string problem;
  if (tp::append_clickhouse_row(parser, text, rows, problem)) {
    if (rows.empty() || rows.back() != '\n') std::abort();
    simdjson::dom::element row;
    if (parser.parse(rows.data(), rows.size() - 1).get(row) != simdjson::SUCCESS) std::abort();  // valid JSON
    if (!valid_record(parser, text)) std::abort();  // only a valid record becomes a row
  } else if (!rows.empty() || problem.empty()) {
    std::abort();
  }
  std::string out = "before\n";
  problem.clear();
  if (tp::append_record_from_tsv(parser, text, out, problem)) {
    const std::string_view line = std::string_view(out).substr(7);
    if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1) std::abort();
    if (!valid_record(parser, line.substr(0, line.size() - 1))) std::abort();
  } else if (out != "before\n" || problem.empty()) {
    std::abort();
  }
  return 0;
}
