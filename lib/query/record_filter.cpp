#include "query/record_filter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/number.hpp"
#include "query/field_path.hpp"
#include "query/value_text.hpp"
#include "records/record_check.hpp"
#include "records/vocabulary.hpp"

namespace tp {
namespace {

std::uint32_t parse_port(std::string_view text, std::string_view list) {
  const auto value = parse_whole_number<std::uint32_t>(text);
  if (!value || *value > 255)
    throw Error(ExitCode::usage, fmt::format("--port '{}': '{}' is not a port 0-255", list, text));
  return *value;
}

std::vector<std::string_view> split(std::string_view list) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) parts.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

FieldCondition parse_condition(std::string_view expression, std::string_view option) {
  const std::size_t eq = expression.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw Error(ExitCode::usage,
                fmt::format("{} '{}': expected FIELD=VALUE, e.g. event.data.message=boot", option, expression));
  }
  const std::string_view field = resolve_field_alias(expression.substr(0, eq));
  return FieldCondition{std::string(field), FieldPath(field), std::string(expression.substr(eq + 1)), {}};
}

}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_port_list(std::string_view list) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  for (const std::string_view part : split(list)) {
    const std::size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      const std::uint32_t port = parse_port(part, list);
      ranges.emplace_back(port, port);
    } else {
      const std::uint32_t first = parse_port(part.substr(0, dash), list);
      const std::uint32_t last = parse_port(part.substr(dash + 1), list);
      if (first > last) throw Error(ExitCode::usage, fmt::format("--port '{}': empty range {}", list, part));
      ranges.emplace_back(first, last);
    }
  }
  if (ranges.empty()) throw Error(ExitCode::usage, "--port needs a list such as 0,2-4");
  return ranges;
}

std::vector<std::string> parse_name_list(std::string_view list) {
  std::vector<std::string> names;
  for (const std::string_view part : split(list)) names.emplace_back(part);
  if (names.empty()) throw Error(ExitCode::usage, "an empty list was given");
  return names;
}

FieldCondition parse_match(std::string_view expression) {
  return parse_condition(expression, "--match");
}

FieldCondition parse_regex(std::string_view expression) {
  FieldCondition condition = parse_condition(expression, "--regex");
  condition.regex.emplace(condition.value);
  return condition;
}

bool RecordFilter::port_selected(std::uint64_t port) const {
  return std::any_of(criteria_.ports.begin(), criteria_.ports.end(),
                     [port](const auto& range) { return port >= range.first && port <= range.second; });
}

FilterCriteria criteria_from(const FilterArguments& arguments) {
  FilterCriteria criteria;
  if (!arguments.ports.empty()) criteria.ports = parse_port_list(arguments.ports);
  if (!arguments.kinds.empty()) criteria.kinds = parse_name_list(arguments.kinds);
  if (!arguments.sources.empty()) criteria.sources = parse_name_list(arguments.sources);
  criteria.since = arguments.since;
  criteria.until = arguments.until;
  for (const auto& m : arguments.matches) criteria.conditions.push_back(parse_match(m));
  for (const auto& r : arguments.regexes) criteria.conditions.push_back(parse_regex(r));
  criteria.invert = arguments.invert;
  return criteria;
}

void warn_unknown_kinds(const FilterCriteria& criteria, const Logger& log) {
  for (const std::string& name : criteria.kinds) {
    if (is_known_record_kind(name)) continue;
    const auto spelled = kind_spelled_differently(name);
    log.warn(fmt::format("--kind {}: no record of the tracepipe tools has this kind{}; known kinds: {}", name,
                         spelled ? fmt::format(" (kinds are case-sensitive: {}?)", *spelled) : "",
                         fmt::join(known_record_kinds(), ", ")));
  }
}

bool RecordFilter::in(const std::vector<std::string>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& wanted) { return same_text(wanted, name); });
}

bool RecordFilter::selected_by_header(const CheckedLine& line) const {
  bool selected = true;
  if (line.frames) {
    // Raw frame lines carry no port, kind or source: only frames_kind_name ("Itm") as a kind selects them.
    if (!criteria_.ports.empty()) selected = false;
    if (!criteria_.kinds.empty()) selected = selected && in(criteria_.kinds, frames_kind_name);
  } else {
    if (!criteria_.ports.empty()) selected = port_selected(line.port);
    if (!criteria_.kinds.empty()) selected = selected && in(criteria_.kinds, line.kind);
  }
  // A record without "source" has none of the sources asked for.
  if (!criteria_.sources.empty() && !(line.source && in(criteria_.sources, *line.source))) selected = false;
  if (criteria_.since && line.timestamp < *criteria_.since) selected = false;
  if (criteria_.until && line.timestamp >= *criteria_.until) selected = false;
  return selected;
}

Verdict RecordFilter::judge(simdjson::dom::object root, std::string& why) const {
  const std::optional<CheckedLine> line = check_record_line(root, why);
  if (!line) return Verdict::bad;
  bool selected = selected_by_header(*line);
  if (selected && !criteria_.conditions.empty()) {
    const Verdict verdict = judge_conditions(root, why);
    if (verdict == Verdict::bad) return verdict;
    selected = verdict == Verdict::selected;
  }
  return selected != criteria_.invert ? Verdict::selected : Verdict::rejected;
}

Verdict RecordFilter::judge_conditions(simdjson::dom::object root, std::string& why) const {
  for (const FieldCondition& condition : criteria_.conditions) {
    ValueText value;
    const simdjson::error_code error = field_text(root, condition.field, value);
    if (is_missing_field(error)) return Verdict::rejected;
    if (error != simdjson::SUCCESS) {
      why = fmt::format("{}: {}", condition.path, simdjson::error_message(error));
      return Verdict::bad;
    }
    bool match = value.text == condition.value;
    if (condition.regex) {
      std::string problem;
      const std::optional<bool> found = condition.regex->search(value.text, problem);
      if (!found) {  // PCRE2 gave up: neither selected nor rejected, so a bad line (counted; --strict fails)
        why = fmt::format("{}: the regular expression '{}' could not finish ({})", condition.path,
                          condition.regex->pattern(), problem);
        return Verdict::bad;
      }
      match = *found;
    }
    if (!match) return Verdict::rejected;
  }
  return Verdict::selected;
}

}  // namespace tp
