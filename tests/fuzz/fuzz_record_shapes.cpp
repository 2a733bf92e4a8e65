// Fuzz target: RecordShapes against the full check. Every line of the input that passes
// simdjson's DOM parse and check_record_line teaches its shape; then every line that a
// learnt shape matches must pass the full check too, with the same kind, clock, port,
// timestamp and source. A match the full check rejects (or reads differently) aborts.
#include <simdjson.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/record_check.hpp"
#include "records/record_shapes.hpp"

namespace {

// The names a checked line reports, in one string.
std::string describe(const tp::CheckedLine& line) {
  std::string names(line.kind);
  names += '\n';
  names += line.clock;
  names += line.source ? '+' : '-';
  if (line.source) names += *line.source;
  return names;
}

// The full check of one line, as NdjsonReader and the record tools make it.
std::optional<tp::CheckedLine> full_check(simdjson::dom::parser& parser, std::string_view line, std::string& kept) {
  const simdjson::padded_string padded(line);
  simdjson::dom::object root;
  if (parser.parse(padded).get_object().get(root) != simdjson::SUCCESS) return std::nullopt;
  std::string problem;
  auto checked = tp::check_record_line(root, problem);
  if (!checked) return std::nullopt;
  kept = describe(*checked);  // its views point into the parser's strings
  return checked;
}

std::vector<std::string_view> lines_of(std::string_view input) {
  std::vector<std::string_view> lines;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    std::string_view line = input.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // as NdjsonReader hands it over
    lines.push_back(line);
    if (newline == std::string_view::npos) break;
    input.remove_prefix(newline + 1);
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::dom::parser parser;
  const std::vector<std::string_view> lines = lines_of(std::string_view(reinterpret_cast<const char*>(data), size));
  tp::RecordShapes shapes;
  std::string kept;
  for (const std::string_view line : lines) {
    if (!full_check(parser, line, kept)) continue;
    if (shapes.learn(line) && shapes.match(line) == nullptr) std::abort();  // learnt, yet not matched
  }
  for (const std::string_view line : lines) {
    const tp::CheckedLine* quick = shapes.match(line);
    if (quick == nullptr) continue;
    const tp::CheckedLine matched = *quick;
    const std::string matched_names = describe(matched);
    const std::optional<tp::CheckedLine> full = full_check(parser, line, kept);
    if (!full) std::abort();  // a shape vouched for a line the full check rejects
    if (full->frames || matched.frames || full->timestamp != matched.timestamp || full->port != matched.port ||
        kept != matched_names || full->frame_port_bits != 0 || full->frame_high_port) {
      std::abort();  // ... or reads it differently
    }
  }
  return 0;
}
