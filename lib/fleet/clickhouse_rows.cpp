#include "fleet/clickhouse_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <optional>

#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "core/out_buffer.hpp"

namespace tp {
namespace {

constexpr std::string_view columns =
    "board, run, seq, host_us, day, timestamp, clock, port, source, time_exact, kind, data, extra";
constexpr std::size_t column_count = 13;

// The record's own fields and the fleet fields: columns of their own; any other top-level
// field goes into the extra column.
enum class Field : std::uint8_t { timestamp, port, event, source, clock, time_exact, board, run, seq, host_us };
constexpr std::array<std::string_view, 10> top_level_fields = {"timestamp",  "port",  "event", "source", "clock",
                                                               "time_exact", "board", "run",   "seq",    "host_us"};

std::optional<Field> top_level_field(std::string_view key) {
  for (std::size_t i = 0; i < top_level_fields.size(); ++i) {
    if (key == top_level_fields[i]) return static_cast<Field>(i);
  }
  return std::nullopt;
}

void append_number(std::string& out, std::uint64_t value) {
  std::array<char, 20> digits{};
  auto* const end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  out.append(digits.data(), static_cast<std::size_t>(end - digits.data()));
}

// host_us's UTC date, YYYY-MM-DD (the records of one message share it: cached).
void append_day(OutBuffer& out, std::uint64_t host_us) {
  thread_local std::uint64_t cached_day = ~std::uint64_t{0};
  thread_local std::array<char, 10> cached_text{};
  const std::uint64_t day = host_us / 86'400'000'000;
  if (day != cached_day) {
    const auto seconds = static_cast<std::time_t>(day * 86'400);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    fmt::format_to_n(cached_text.data(), cached_text.size(), "{:04}-{:02}-{:02}", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday);
    cached_day = day;
  }
  out.append(cached_text.data(), cached_text.size());
}

// TabSeparated's escapes (\t \n \\ \' \b \f \r \0) undone.
std::string unescape_tsv(std::string_view field) {
  std::string text;
  text.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      text += field[i];
      continue;
    }
    const char c = field[++i];
    switch (c) {
      case 't':
        text += '\t';
        break;
      case 'n':
        text += '\n';
        break;
      case 'r':
        text += '\r';
        break;
      case 'b':
        text += '\b';
        break;
      case 'f':
        text += '\f';
        break;
      case '0':
        text += '\0';
        break;
      default:
        text += c;  // \\ \' and any other escaped character
        break;
    }
  }
  return text;
}

}  // namespace

std::string_view clickhouse_columns() {
  return columns;
}

std::string create_table_sql(std::string_view database, std::string_view table) {
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {}.{} (board String, run String, seq UInt64, host_us UInt64, day Date, "
      "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, kind String, data String, "
      "extra String) ENGINE = ReplacingMergeTree() PARTITION BY day ORDER BY (board, run, seq)",
      database, table);
}

std::string create_distributed_sql(std::string_view database, std::string_view table, std::string_view cluster) {
  // With the column list, not AS table: a column copied that way can make every insert fail
  // (ClickHouse 18.16, MATERIALIZED columns).
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {0}.{1}_all (board String, run String, seq UInt64, host_us UInt64, day Date, "
      "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, kind String, data String, "
      "extra String) ENGINE = Distributed({2}, {0}, {1}, cityHash64(board))",
      database, table, cluster);
}

bool append_clickhouse_row(simdjson::dom::parser& parser, std::string_view line, std::string& rows,
                           std::string& problem) {
  simdjson::dom::object record;
  if (const auto error = parser.parse(line.data(), line.size()).get_object().get(record); error != simdjson::SUCCESS) {
    problem = simdjson::error_message(error);
    return false;
  }
  // One pass over the members (a lookup per column walked the object ten times); the first of
  // a repeated key counts, as a lookup would find it.
  std::array<simdjson::dom::element, top_level_fields.size()> found{};
  std::array<bool, top_level_fields.size()> seen{};
  thread_local std::string extra;
  extra.clear();
  for (const auto member : record) {
    if (const auto field = top_level_field(member.key)) {
      const auto index = static_cast<std::size_t>(*field);
      if (!seen[index]) found[index] = member.value;
      seen[index] = true;
      continue;
    }
    extra += extra.empty() ? '{' : ',';
    append_json_string(extra, member.key);
    extra += ':';
    extra += simdjson::minify(member.value);
  }
  if (!extra.empty()) extra += '}';
  const auto field = [&](Field f) {
    const auto index = static_cast<std::size_t>(f);
    return seen[index] ? simdjson::simdjson_result<simdjson::dom::element>(simdjson::dom::element(found[index]))
                       : simdjson::simdjson_result<simdjson::dom::element>(simdjson::NO_SUCH_FIELD);
  };
  std::string_view board;
  std::string_view run;
  std::string_view kind;
  std::string_view clock;
  std::string_view source;
  std::uint64_t seq = 0;
  std::uint64_t host_us = 0;
  std::uint64_t timestamp = 0;
  std::uint64_t port = 0;
  bool time_exact = true;
  simdjson::dom::element event;
  if (field(Field::board).get(board) != simdjson::SUCCESS || field(Field::run).get(run) != simdjson::SUCCESS ||
      field(Field::seq).get(seq) != simdjson::SUCCESS || field(Field::host_us).get(host_us) != simdjson::SUCCESS) {
    problem = "no fleet fields (board, run, seq, host_us)";
    return false;
  }
  if (field(Field::timestamp).get(timestamp) != simdjson::SUCCESS ||
      field(Field::port).get(port) != simdjson::SUCCESS || field(Field::event).get(event) != simdjson::SUCCESS ||
      event["kind"].get(kind) != simdjson::SUCCESS) {
    problem = "not a record (timestamp, port, event.kind)";
    return false;
  }
  if (field(Field::clock).get(clock) != simdjson::SUCCESS) clock = {};     // none
  if (field(Field::source).get(source) != simdjson::SUCCESS) source = {};  // none
  if (bool exact = true; field(Field::time_exact).get(exact) == simdjson::SUCCESS) time_exact = exact;
  thread_local std::string data;
  data.clear();
  if (simdjson::dom::element data_element; event["data"].get(data_element) == simdjson::SUCCESS) {
    data = simdjson::minify(data_element);
  }

  // The row is written into one buffer per thread, then appended whole (checked std::string
  // appends field by field were much of the malloc and memmove in trace-store's profile).
  thread_local OutBuffer row(1024);
  row.clear();
  row += R"({"board":)";
  append_json_string(row, board);
  row += R"(,"run":)";
  append_json_string(row, run);
  row += R"(,"seq":)";
  append_uint(row, seq);
  row += R"(,"host_us":)";
  append_uint(row, host_us);
  row += R"(,"day":")";
  append_day(row, host_us);
  row += R"(","timestamp":)";
  append_uint(row, timestamp);
  row += R"(,"clock":)";
  append_json_string(row, clock);
  row += R"(,"port":)";
  append_uint(row, port);
  row += R"(,"source":)";
  append_json_string(row, source);
  row += time_exact ? std::string_view(R"(,"time_exact":1,"kind":)") : std::string_view(R"(,"time_exact":0,"kind":)");
  append_json_string(row, kind);
  row += R"(,"data":)";
  append_json_string(row, data);
  row += R"(,"extra":)";
  append_json_string(row, extra);
  row += "}\n";
  rows += row.view();
  return true;
}

bool append_record_from_tsv(std::string_view row, std::string& out) {
  std::array<std::string_view, column_count> fields{};
  std::size_t count = 0;
  for (std::size_t start = 0;;) {
    const std::size_t tab = row.find('\t', start);
    if (count == column_count) return false;
    fields[count++] = row.substr(start, tab == std::string_view::npos ? tab : tab - start);
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (count != column_count) return false;
  const std::string board = unescape_tsv(fields[0]);
  const std::string run = unescape_tsv(fields[1]);
  const std::string clock = unescape_tsv(fields[6]);
  const std::string source = unescape_tsv(fields[8]);
  const std::string kind = unescape_tsv(fields[10]);
  const std::string data = unescape_tsv(fields[11]);
  const std::string extra = unescape_tsv(fields[12]);
  const auto seq = parse_whole_number<std::uint64_t>(fields[2]);
  const auto host_us = parse_whole_number<std::uint64_t>(fields[3]);
  const auto timestamp = parse_whole_number<std::uint64_t>(fields[5]);
  const auto port = parse_whole_number<std::uint64_t>(fields[7]);
  if (!seq || !host_us || !timestamp || !port || kind.empty()) return false;
  out += "{\"timestamp\":";
  append_number(out, *timestamp);
  out += ",\"port\":";
  append_number(out, *port);
  out += ",\"event\":{\"kind\":";
  append_json_string(out, kind);
  if (!data.empty()) {
    out += ",\"data\":";
    out += data;
  }
  out += '}';
  if (!source.empty()) {
    out += ",\"source\":";
    append_json_string(out, source);
  }
  if (!clock.empty()) {
    out += ",\"clock\":";
    append_json_string(out, clock);
  }
  if (fields[9] == "0") out += ",\"time_exact\":false";
  if (extra.size() > 2 && extra.front() == '{' && extra.back() == '}') {
    out += ',';
    out.append(extra, 1, extra.size() - 2);
  }
  out += ",\"board\":";
  append_json_string(out, board);
  out += ",\"run\":";
  append_json_string(out, run);
  out += ",\"seq\":";
  append_number(out, *seq);
  out += ",\"host_us\":";
  append_number(out, *host_us);
  out += "}\n";
  return true;
}

std::string like_pattern(std::string_view glob) {
  std::string pattern;
  for (const char c : glob) {
    if (c == '*') {
      pattern += '%';
    } else if (c == '?') {
      pattern += '_';
    } else {
      if (c == '%' || c == '_' || c == '\\') pattern += '\\';
      pattern += c;
    }
  }
  return sql_string(pattern);
}

std::string sql_string(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '\'';
  return quoted;
}

}  // namespace tp
