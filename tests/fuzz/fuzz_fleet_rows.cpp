// Fuzz target: ClickHouse rows. A stamped record line (from a JetStream message, which any
// publisher may fill) becomes a row, and a TSV row (from ClickHouse) becomes a record line:
// neither crashes, a record line it accepts is valid JSON whose fleet fields survive the way
// back, and the TSV parser only writes whole lines.
#include <simdjson.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "fleet/clickhouse_rows.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  simdjson::dom::parser parser;
  std::string rows;
  std::string problem;
  if (tp::append_clickhouse_row(parser, text, rows, problem)) {
    if (rows.empty() || rows.back() != '\n') std::abort();
    simdjson::dom::element row;
    if (parser.parse(rows.data(), rows.size() - 1).get(row) != simdjson::SUCCESS) std::abort();  // valid JSON
  } else if (!rows.empty() || problem.empty()) {
    std::abort();
  }
  std::string out;
  if (tp::append_record_from_tsv(text, out)) {
    if (out.empty() || out.back() != '\n') std::abort();
  } else if (!out.empty()) {
    std::abort();
  }
  return 0;
}
