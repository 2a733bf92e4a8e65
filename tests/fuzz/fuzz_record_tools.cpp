// Fuzz target: what trace-filter and trace-csv do with each line (filter verdicts with
// every criterion, CSV rows, column inference) on arbitrary NDJSON bytes.
#include <cstdlib>
#include <string_view>

#include "json/ndjson_reader.hpp"
#include "query/csv_table.hpp"
#include "query/record_filter.hpp"

namespace {
tp::FilterCriteria criteria() {
  tp::FilterCriteria c;
  c.ports = tp::parse_port_list("0,2-9");
  c.kinds = {"Text", "Itm", "Counter"};
  c.sources = {"itm"};
  c.since = 1;
  c.until = 1ULL << 60U;
  c.conditions.push_back(tp::parse_match("message=x"));
  c.conditions.push_back(tp::parse_regex("event.data.name=^[A-Z]+\\d*$"));
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tp::RecordFilter filter(criteria());
  tp::CsvRowWriter rows(tp::parse_columns("time,port,kind,message,data,event.data.data.0"), ',',
                        tp::TimeFormat::seconds, 1000);
  tp::ColumnInference inference;
  tp::OutBuffer out;
  std::string why;
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) -> simdjson::error_code {
        why.clear();
        const tp::Verdict verdict = filter.judge(line.root, why);
        if (verdict == tp::Verdict::bad && why.empty()) std::abort();  // a bad line always says why
        if (auto error = rows.row(line.root, out); error != simdjson::SUCCESS) return error;
        inference.add(line.root);
        return simdjson::SUCCESS;
      },
      nullptr, false, 1 << 16);
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  reader.finish();
  (void)inference.columns();
  return 0;
}
