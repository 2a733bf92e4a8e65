#include "clickhouse/clickhouse_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <optional>
#include <utility>

#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "core/out_buffer.hpp"
#include "records/fleet_fields.hpp"
#include "records/record_check.hpp"
#include "records/record_line.hpp"

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

}  // namespace

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

namespace {

// A name for a report: as it is when it is a fleet name, else as a JSON string (cut).
std::string printable(std::string_view text) {
  if (is_fleet_name(text)) return std::string(text);
  std::string quoted;
  append_json_string(quoted, text.substr(0, 2 * fleet_name_max));
  return quoted;
}

// "board B run R seq N" of a record, with what it has of them ("?" for the rest).
std::string identity_of(simdjson::dom::object record) {
  std::string_view board = "?";
  std::string_view run = "?";
  std::string seq = "?";
  if (std::string_view text; record["board"].get(text) == simdjson::SUCCESS) board = text;
  if (std::string_view text; record["run"].get(text) == simdjson::SUCCESS) run = text;
  if (std::uint64_t number = 0; record["seq"].get(number) == simdjson::SUCCESS) seq = std::to_string(number);
  return fmt::format("board {} run {} seq {}", printable(board), printable(run), seq);
}

// The members of event beside kind and data, as "k":v,... (empty when none).
void append_event_members(simdjson::dom::object event, std::string& members) {
  for (const auto member : event) {
    if (member.key == "kind" || member.key == "data") continue;
    if (!members.empty()) members += ',';
    append_json_string(members, member.key);
    members += ':';
    members += simdjson::minify(member.value);
  }
}

// The checks of a record beyond the validator's: a record (no frames line) with the four fleet
// fields, that the columns hold as it is.
bool fits_columns(const CheckedLine& checked, bool has_fleet_fields, std::uint64_t host_us, std::string& problem) {
  if (checked.frames) {
    problem = "a frames line, not a record";
  } else if (!has_fleet_fields) {
    problem = "no fleet fields (board, run, seq, host_us)";
  } else if (host_us > max_stored_host_us) {
    problem =
        fmt::format("host_us {} is after 2105-12-31, the last day ClickHouse's Date (the day column) holds", host_us);
  } else if (checked.source && checked.source->empty()) {
    problem = "\"source\" is \"\" (the store keeps no source as \"\"; the schema names the sources)";
  } else {
    return true;
  }
  return false;
}

// The top-level members of a record in one pass (a lookup per column walked the object ten
// times; the validator refused a field given twice): the known fields by name, the others
// gathered as the extra column's JSON object, to which the event's own members are added.
struct TopLevelMembers {
  std::array<simdjson::dom::element, top_level_fields.size()> found{};
  std::array<bool, top_level_fields.size()> seen{};
  std::string extra;

  void take(simdjson::dom::object record) {
    found = {};
    seen = {};
    extra.clear();
    for (const auto member : record) {
      if (const auto field = top_level_field(member.key)) {
        const auto index = static_cast<std::size_t>(*field);
        found[index] = member.value;
        seen[index] = true;
        continue;
      }
      extra += extra.empty() ? '{' : ',';
      append_json_string(extra, member.key);
      extra += ':';
      extra += simdjson::minify(member.value);
    }
  }
  [[nodiscard]] bool has(Field f) const { return seen[static_cast<std::size_t>(f)]; }
  [[nodiscard]] simdjson::dom::element at(Field f) const { return found[static_cast<std::size_t>(f)]; }
  // The event's members beyond the columns join extra, which is then closed.
  void close_extra(simdjson::dom::object event) {
    thread_local std::string event_members;
    event_members.clear();
    append_event_members(event, event_members);
    if (!event_members.empty()) {
      extra += extra.empty() ? R"({"event":{)" : R"(,"event":{)";
      extra += event_members;
      extra += '}';
    }
    if (!extra.empty()) extra += '}';
  }
};

// One row's columns.
struct RowValues {
  std::string_view board;
  std::string_view run;
  std::uint64_t seq = 0;
  std::uint64_t host_us = 0;
  std::uint64_t timestamp = 0;
  std::string_view clock;
  std::uint64_t port = 0;
  std::string_view source;
  bool time_exact = true;
  std::string_view kind;
  std::string_view data;
  std::string_view extra;
};

// The row is written into one buffer per thread, then appended whole (checked std::string
// appends field by field were much of the malloc and memmove in trace-store's profile).
void append_row(std::string& rows, const RowValues& v) {
  thread_local OutBuffer row(1024);
  row.clear();
  row += R"({"board":)";
  append_json_string(row, v.board);
  row += R"(,"run":)";
  append_json_string(row, v.run);
  row += R"(,"seq":)";
  append_uint(row, v.seq);
  row += R"(,"host_us":)";
  append_uint(row, v.host_us);
  row += R"(,"day":")";
  append_day(row, v.host_us);
  row += R"(","timestamp":)";
  append_uint(row, v.timestamp);
  row += R"(,"clock":)";
  append_json_string(row, v.clock);
  row += R"(,"port":)";
  append_uint(row, v.port);
  row += R"(,"source":)";
  append_json_string(row, v.source);
  row += v.time_exact ? std::string_view(R"(,"time_exact":1,"kind":)") : std::string_view(R"(,"time_exact":0,"kind":)");
  append_json_string(row, v.kind);
  row += R"(,"data":)";
  append_json_string(row, v.data);
  row += R"(,"extra":)";
  append_json_string(row, v.extra);
  row += "}\n";
  rows += row.view();
}

// ClickHouse's escaping inside a quoted token (a string literal, a backquoted identifier): the
// quote and the backslash take a backslash; a control byte (NUL among them) is written \xHH, so
// the statement is printable text whatever the value (and a log or an HTTP parameter of it
// never cut at a NUL). Other bytes, invalid UTF-8 too, are the value's own: ClickHouse's
// strings are bytes.
std::string quoted_token(std::string_view text, char quote) {
  constexpr std::string_view hex = "0123456789ABCDEF";
  std::string quoted(1, quote);
  quoted.reserve(text.size() + 2);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte == 0x7FU) {
      quoted += "\\x";
      quoted += hex[byte >> 4U];
      quoted += hex[byte & 0xFU];
      continue;
    }
    if (c == quote || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += quote;
  return quoted;
}

}  // namespace

std::string_view clickhouse_columns() {
  return columns;
}

std::string create_table_sql(std::string_view database, std::string_view table) {
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {} (board String, run String, seq UInt64, host_us UInt64, day Date, "
      "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, kind String, data String, "
      "extra String) ENGINE = ReplacingMergeTree() PARTITION BY day ORDER BY (board, run, seq)",
      qualified_table(database, table));
}

std::string create_distributed_sql(std::string_view database, std::string_view table, std::string_view cluster) {
  // With the column list, not AS table: a column copied that way can make every insert fail
  // (ClickHouse 18.16, MATERIALIZED columns).
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {0} (board String, run String, seq UInt64, host_us UInt64, day Date, "
      "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, kind String, data String, "
      "extra String) ENGINE = Distributed({1}, {2}, {3}, cityHash64(board))",
      qualified_table(database, std::string(table) + "_all"), sql_string(cluster), sql_string(database),
      sql_string(table));
}

bool append_clickhouse_row(simdjson::dom::parser& parser, std::string_view line, std::string& rows,
                           std::string& problem) {
  simdjson::dom::object record;
  if (const auto error = parser.parse(line.data(), line.size()).get_object().get(record); error != simdjson::SUCCESS) {
    problem = fmt::format("not a JSON object ({})", simdjson::error_message(error));
    return false;
  }
  // The one validator first: a record not valid under the schema is refused, never altered.
  std::string why;
  const std::optional<CheckedLine> checked = check_record_line(record, why);
  thread_local TopLevelMembers members;
  members.take(record);
  const bool has_fleet_fields =
      members.has(Field::board) && members.has(Field::run) && members.has(Field::seq) && members.has(Field::host_us);
  const std::uint64_t host_us = has_fleet_fields ? members.at(Field::host_us).get_uint64().value_unsafe() : 0;
  if (!checked || !fits_columns(*checked, has_fleet_fields, host_us, why)) {
    problem = fmt::format("{}: {}", identity_of(record), why);
    return false;
  }
  const simdjson::dom::object event = members.at(Field::event).get_object().value_unsafe();
  members.close_extra(event);
  thread_local std::string data;
  data.clear();
  if (simdjson::dom::element data_element; event["data"].get(data_element) == simdjson::SUCCESS) {
    data = simdjson::minify(data_element);
  }
  const RowValues values{.board = members.at(Field::board).get_string().value_unsafe(),
                         .run = members.at(Field::run).get_string().value_unsafe(),
                         .seq = members.at(Field::seq).get_uint64().value_unsafe(),
                         .host_us = host_us,
                         .timestamp = checked->timestamp,
                         .clock = checked->clock,
                         .port = checked->port,
                         .source = checked->source.value_or(std::string_view()),
                         .time_exact = !members.has(Field::time_exact),  // present only as false
                         .kind = checked->kind,
                         .data = data,
                         .extra = members.extra};
  append_row(rows, values);
  return true;
}

std::string row_identity(std::string_view row) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(row.data(), row.size()).get_object().get(object) != simdjson::SUCCESS) return "a row";
  return identity_of(object);
}

namespace {

// A row's columns, unescaped, before they are checked.
struct StoredRow {
  std::string board;
  std::string run;
  std::uint64_t seq = 0;
  std::uint64_t host_us = 0;
  std::uint64_t timestamp = 0;
  std::uint64_t port = 0;
  std::string clock;
  std::string source;
  bool exact = true;
  std::string kind;
  std::string data;
  std::string extra;
};

bool split_row(std::string_view row, StoredRow& stored, std::string& problem) {
  std::array<std::string_view, column_count> fields{};
  std::size_t count = 0;
  for (std::size_t start = 0;;) {
    const std::size_t tab = row.find('\t', start);
    if (count == column_count) break;
    fields[count++] = row.substr(start, tab == std::string_view::npos ? tab : tab - start);
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (count != column_count || std::count(row.begin(), row.end(), '\t') != column_count - 1) {
    problem = fmt::format("not the store's {} columns", column_count);
    return false;
  }
  stored.board = unescape_tsv(fields[0]);
  stored.run = unescape_tsv(fields[1]);
  const auto seq = parse_whole_number<std::uint64_t>(fields[2]);
  const auto host_us = parse_whole_number<std::uint64_t>(fields[3]);
  const auto timestamp = parse_whole_number<std::uint64_t>(fields[5]);
  const auto port = parse_whole_number<std::uint64_t>(fields[7]);
  stored.clock = unescape_tsv(fields[6]);
  stored.source = unescape_tsv(fields[8]);
  stored.kind = unescape_tsv(fields[10]);
  stored.data = unescape_tsv(fields[11]);
  stored.extra = unescape_tsv(fields[12]);
  if (!seq || !host_us || !timestamp || !port || (fields[9] != "0" && fields[9] != "1")) {
    problem = fmt::format("board {} run {} seq {}: a number column that is not a number", printable(stored.board),
                          printable(stored.run), printable(unescape_tsv(fields[2])));
    return false;
  }
  stored.seq = *seq;
  stored.host_us = *host_us;
  stored.timestamp = *timestamp;
  stored.port = *port;
  stored.exact = fields[9] == "1";
  return true;
}

// A JSON object kept as text in a column, parsed (exactly one object, nothing after it) and
// minified into `out`; false with the problem otherwise.
bool stored_object(simdjson::dom::parser& parser, const std::string& text, std::string_view column, std::string& out,
                   std::string& problem) {
  simdjson::dom::object object;
  if (const auto error = parser.parse(text).get_object().get(object); error != simdjson::SUCCESS) {
    problem = fmt::format("its {} is not one JSON object ({})", column, simdjson::error_message(error));
    return false;
  }
  out = simdjson::minify(object);
  return true;
}

// extra's members: the record's other members, and under "event" event's beside kind and data.
// A key the record defines (but that one "event") would be a second of it: refused.
bool split_extra(simdjson::dom::parser& parser, const std::string& extra, std::string& members,
                 std::string& event_members, std::string& problem) {
  std::string minified;
  if (!stored_object(parser, extra, "extra", minified, problem)) return false;
  const simdjson::dom::object object = parser.parse(minified).get_object().value_unsafe();
  bool event_seen = false;
  for (const auto member : object) {
    const auto field = top_level_field(member.key);
    if (field == Field::event && !event_seen) {
      event_seen = true;
      simdjson::dom::object event;
      if (member.value.get_object().get(event) != simdjson::SUCCESS || !event["kind"].error() ||
          !event["data"].error()) {
        problem = "its extra's \"event\" is not an object of event members beside kind and data";
        return false;
      }
      append_event_members(event, event_members);
      continue;
    }
    if (field || member.key == "frames") {
      problem = fmt::format("its extra holds \"{}\", a member the record has already", printable(member.key));
      return false;
    }
    if (!members.empty()) members += ',';
    append_json_string(members, member.key);
    members += ':';
    members += simdjson::minify(member.value);
  }
  return true;
}

// The record line of a checked row (with its newline) through the one writer, then checked by
// the one validator.
bool write_record(simdjson::dom::parser& parser, const StoredRow& stored, std::string& out, std::string& problem) {
  std::string data;
  std::string members;
  std::string event_members;
  if (!stored.data.empty() && !stored_object(parser, stored.data, "data", data, problem)) return false;
  if (!stored.extra.empty() && !split_extra(parser, stored.extra, members, event_members, problem)) return false;
  thread_local OutBuffer line(1024);
  line.clear();
  write_stored_record(
      line, StoredRecord{stored.timestamp,
                         static_cast<std::uint32_t>(std::min<std::uint64_t>(stored.port, ~std::uint32_t{0})),
                         stored.kind, data, event_members, stored.source, stored.clock, stored.exact, members});
  const std::size_t at = out.size();
  append_stamped(out, line.view().substr(0, line.size() - 1),
                 FleetStamp{stored.board, stored.run, stored.seq, stored.host_us});
  simdjson::dom::object record;
  std::optional<CheckedLine> checked;
  if (parser.parse(out.data() + at, out.size() - at - 1).get_object().get(record) == simdjson::SUCCESS) {
    checked = check_record_line(record, problem);
    if (checked && checked->frames) problem = "a frames line";
  } else {
    problem = "not JSON";
  }
  if (!checked || checked->frames) {
    out.resize(at);
    problem = fmt::format("it is no valid record ({})", problem);
    return false;
  }
  return true;
}

}  // namespace

bool append_record_from_tsv(simdjson::dom::parser& parser, std::string_view row, std::string& out,
                            std::string& problem) {
  thread_local StoredRow stored;
  if (!split_row(row, stored, problem)) return false;
  std::string why;
  if (!is_fleet_name(stored.board) || !is_fleet_name(stored.run)) {
    why = "its board or run is not a fleet name";
  } else if (stored.host_us > max_stored_host_us) {
    why = "its host_us is after the last day the store holds";
  } else if (stored.kind.empty()) {
    why = "it has no kind";
  } else if (write_record(parser, stored, out, why)) {
    return true;
  }
  problem = fmt::format("board {} run {} seq {}: {}", printable(stored.board), printable(stored.run), stored.seq, why);
  return false;
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

std::string quote_identifier(std::string_view name) {
  return quoted_token(name, '`');
}

std::string qualified_table(std::string_view database, std::string_view table) {
  return quote_identifier(database) + '.' + quote_identifier(table);
}

std::string insert_sql(std::string_view database, std::string_view table) {
  return fmt::format("INSERT INTO {} ({}) FORMAT JSONEachRow", qualified_table(database, table), columns);
}

std::string table_columns_sql(std::string_view database, std::string_view table) {
  return fmt::format("SELECT name, type FROM system.columns WHERE database = {} AND table = {} FORMAT TabSeparated",
                     sql_string(database), sql_string(table));
}

namespace {

// The types a column may have for the rows to be stored as they are: the ones created, a
// wider unsigned number, or (text) an Enum, which refuses a value it does not list (the row
// is reported) rather than altering it.
bool column_fits(std::string_view name, std::string_view type) {
  const auto any_of = [&](std::initializer_list<std::string_view> types) {
    return std::find(types.begin(), types.end(), type) != types.end();
  };
  if (name == "seq" || name == "host_us" || name == "timestamp") return type == "UInt64";
  if (name == "port") return any_of({"UInt8", "UInt16", "UInt32", "UInt64"});  // 0-255 (schema)
  if (name == "time_exact") return any_of({"UInt8", "UInt16", "UInt32", "UInt64"});
  if (name == "day") return type == "Date";
  return any_of({"String", "LowCardinality(String)"}) || type.starts_with("Enum8(") || type.starts_with("Enum16(");
}

}  // namespace

std::string unfit_columns(std::string_view columns_tsv) {
  std::string problems;
  std::string_view rest = columns;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    std::optional<std::string_view> type;
    for (std::string_view lines = columns_tsv; !lines.empty() && !type;) {
      const std::string_view line = lines.substr(0, lines.find('\n'));
      lines.remove_prefix(std::min(lines.size(), line.size() + 1));
      if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == '\t') {
        type = line.substr(name.size() + 1);
      }
    }
    if (type && column_fits(name, *type)) continue;
    if (!problems.empty()) problems += "; ";
    problems += type ? fmt::format("column {} is {}", name, *type) : fmt::format("no column {}", name);
  }
  return problems;
}

std::string sql_string(std::string_view text) {
  return quoted_token(text, '\'');
}

}  // namespace tp
