// Record selection for trace-filter: by port, kind, source, time window and field
// values, on each line's one parse (its DOM). Lines are judged, never
// re-encoded: a selected line is passed through byte for byte by the caller.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "query/field_path.hpp"
#include "query/regex.hpp"
#include "records/record_check.hpp"

namespace tp {

struct FieldCondition {
  std::string path;  // as given, for messages
  FieldPath field;
  std::string value;           // --match: the text the field must equal
  std::optional<Regex> regex;  // --regex: the pattern it must contain
};

struct FilterCriteria {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ports;  // inclusive ranges
  std::vector<std::string> kinds;                              // "Itm" selects raw frame lines
  std::vector<std::string> sources;
  std::optional<std::uint64_t> since;  // timestamp >= since
  std::optional<std::uint64_t> until;  // timestamp < until
  std::vector<FieldCondition> conditions;
  bool invert = false;
};

// The criteria as the command line gives them (trace-filter's options, as text).
struct FilterArguments {
  std::string ports;    // "0,2-4"
  std::string kinds;    // "Text,Exception"
  std::string sources;  // "itm,dwt"
  std::optional<std::uint64_t> since;
  std::optional<std::uint64_t> until;
  std::vector<std::string> matches;  // FIELD=VALUE
  std::vector<std::string> regexes;  // FIELD=RE
  bool invert = false;
};

// The criteria of the arguments: throws tp::Error(usage) for a bad list or expression.
FilterCriteria criteria_from(const FilterArguments& arguments);

// A --kind name no record of the tracepipe tools carries selects nothing: a warning for each
// (producers may add kinds), with the case slip when it is one.
void warn_unknown_kinds(const FilterCriteria& criteria, const Logger& log);

// Parsers for the command-line forms; they throw tp::Error(usage) with the problem.
std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_port_list(std::string_view list);
std::vector<std::string> parse_name_list(std::string_view list);
// "event.data.message=Hello" (aliases allowed on the left).
FieldCondition parse_match(std::string_view expression);
FieldCondition parse_regex(std::string_view expression);

enum class Verdict : std::uint8_t { selected, rejected, bad };

class RecordFilter {
 public:
  explicit RecordFilter(FilterCriteria criteria) : criteria_(std::move(criteria)) {}

  // Judges one parsed line. For a bad line, `why` says what is wrong with it.
  Verdict judge(simdjson::dom::object root, std::string& why) const;
  // Whether the criteria read fields beyond what check_record_line reports (--match,
  // --regex): then only judge() can decide.
  [[nodiscard]] bool reads_fields() const noexcept { return !criteria_.conditions.empty(); }
  // Judges a good line by what check_record_line (or RecordShapes) reported of it, for
  // criteria that read no fields.
  [[nodiscard]] bool selects(const CheckedLine& line) const { return selected_by_header(line) != criteria_.invert; }

 private:
  [[nodiscard]] bool selected_by_header(const CheckedLine& line) const;
  [[nodiscard]] bool port_selected(std::uint64_t port) const;
  [[nodiscard]] static bool in(const std::vector<std::string>& names, std::string_view name);
  Verdict judge_conditions(simdjson::dom::object root, std::string& why) const;

  FilterCriteria criteria_;
};

}  // namespace tp
