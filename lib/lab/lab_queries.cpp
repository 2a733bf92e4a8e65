#include "lab/lab_queries.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/number.hpp"
#include "records/vocabulary.hpp"
#include "serve/handshake.hpp"

namespace tp::lab {
namespace {

constexpr std::string_view cursor_separator = ".";

// The tab-separated fields of one row.
std::vector<std::string_view> split_fields(std::string_view row) {
  std::vector<std::string_view> fields;
  while (true) {
    const std::size_t tab = row.find('\t');
    fields.push_back(row.substr(0, tab));
    if (tab == std::string_view::npos) return fields;
    row.remove_prefix(tab + 1);
  }
}

std::uint64_t number_field(std::string_view field, std::string_view what) {
  const auto value = parse_whole_number<std::uint64_t>(field);
  if (!value) throw Error(ExitCode::bad_input, fmt::format("ClickHouse answered {} that is not a number", what));
  return *value;
}

// Each line of a TabSeparated answer with `columns` fields, to `row`.
template <typename Row>
void for_each_row(std::string_view tsv, std::size_t columns, Row row) {
  while (!tsv.empty()) {
    const std::size_t newline = tsv.find('\n');
    const std::string_view line = tsv.substr(0, newline);
    tsv.remove_prefix(newline == std::string_view::npos ? tsv.size() : newline + 1);
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.size() != columns) {
      throw Error(ExitCode::bad_input, fmt::format("ClickHouse answered a row of {} fields where {} were asked for",
                                                   fields.size(), columns));
    }
    row(fields);
  }
}

std::optional<BadParameter> take_glob(std::string_view target, std::string_view name, std::string& glob) {
  const auto value = query_value(target, name);
  if (const auto* bad = std::get_if<BadParameter>(&value)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(value); text && !text->empty()) {
    if (!is_board_glob(*text)) return BadParameter{std::string(name), "not a glob of boards (A-Z a-z 0-9 _ - * ?)"};
    glob = *text;
  }
  return std::nullopt;
}

std::optional<BadParameter> take_optional_time(std::string_view target, std::string_view name, std::int64_t now_us,
                                               std::optional<std::int64_t>& out) {
  const auto value = query_value(target, name);
  if (const auto* bad = std::get_if<BadParameter>(&value)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(value)) {
    const auto time = parse_time(name, *text, now_us, true);
    if (const auto* bad = std::get_if<BadParameter>(&time)) return *bad;
    out = std::get<std::int64_t>(time);
  }
  return std::nullopt;
}

std::optional<BadParameter> take_limit(std::string_view target, std::size_t& limit) {
  const auto value = query_value(target, "limit");
  if (const auto* bad = std::get_if<BadParameter>(&value)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(value)) {
    const auto n = parse_whole_number<std::size_t>(*text);
    if (!n || *n == 0 || *n > max_search_limit) {
      return BadParameter{"limit", fmt::format("a number from 1 to {}", max_search_limit)};
    }
    limit = *n;
  }
  return std::nullopt;
}

std::optional<BadParameter> take_kinds(std::string_view target, std::vector<std::string>& kinds) {
  for (std::string& kind : serve::query_parameters(target, "kind")) {
    if (!is_known_record_kind(kind)) return BadParameter{"kind", "not a record kind"};
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(std::move(kind));
  }
  return std::nullopt;
}

std::optional<BadParameter> take_search_text(std::string_view target, SearchRequest& request) {
  const auto text = query_value(target, "text");
  if (const auto* bad = std::get_if<BadParameter>(&text)) return *bad;
  if (const auto& value = std::get<std::optional<std::string>>(text)) {
    if (value->size() > max_search_text)
      return BadParameter{"text", fmt::format("longer than {} bytes", max_search_text)};
    request.text = *value;
  }
  return std::nullopt;
}

std::optional<BadParameter> take_cursor(std::string_view target, SearchRequest& request) {
  const auto before = query_value(target, "before");
  if (const auto* bad = std::get_if<BadParameter>(&before)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(before)) {
    request.before = parse_cursor(*text);
    if (!request.before) return BadParameter{"before", "not a cursor this server gave"};
  }
  return std::nullopt;
}

// Rows strictly before the cursor in (host_us, board, run, seq) order, spelled out: no tuple
// comparison is assumed of ClickHouse 18.16.
std::string before_condition(const SearchCursor& c) {
  return fmt::format(
      "(host_us < {0} OR (host_us = {0} AND (board < {1} OR (board = {1} AND (run < {2} OR (run = {2} AND seq < "
      "{3}))))))",
      c.host_us, sql_string(c.board), sql_string(c.run), c.seq);
}

// A UTC date as the store's `day` column holds it (trace-store writes the UTC date of host_us).
std::string utc_date_literal(std::int64_t us) {
  const std::chrono::sys_days day{std::chrono::days{std::max<std::int64_t>(us, 0) / 86'400'000'000}};
  const std::chrono::year_month_day date{day};
  return fmt::format("toDate('{:04}-{:02}-{:02}')", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                     static_cast<unsigned>(date.day()));
}

// The days a time range covers, for the partitions (PARTITION BY day) ClickHouse skips whole.
// ClickHouse's Date ends in 2105: a later time bounds nothing (toDate would read it as 1970).
std::string day_conditions(std::optional<std::int64_t> from_us, std::optional<std::int64_t> to_us) {
  constexpr std::int64_t last_date_us = 4'291'747'200'000'000;  // 2106-01-01, past the Date range
  std::string conditions;
  if (from_us && *from_us < last_date_us) conditions = "day >= " + utc_date_literal(*from_us);
  if (to_us && *to_us < last_date_us) {
    conditions += (conditions.empty() ? "" : " AND ") + ("day <= " + utc_date_literal(*to_us));
  }
  return conditions;
}

// FROM the store FINAL with the conditions on its small columns as PREWHERE and those on
// `data` as WHERE. Under FINAL, ClickHouse 18.16 otherwise reads every column of every row of
// the table and merges them all before it filters (a window of an hour over 10M rows of a day
// cost as much as all of them); PREWHERE filters first, so FINAL merges and `data` is read for
// the rows kept only. Filtering before the merge is exact here: the rows FINAL folds (same
// board, run, seq) are one record inserted again, equal in every column.
std::string final_from(const StoreTable& table, const std::vector<std::string>& prewhere,
                       const std::vector<std::string>& where) {
  std::string sql = fmt::format(" FROM {} FINAL", qualified_table(table.database, table.table));
  for (std::size_t i = 0; i < prewhere.size(); ++i) sql += (i == 0 ? " PREWHERE " : " AND ") + prewhere[i];
  for (std::size_t i = 0; i < where.size(); ++i) sql += (i == 0 ? " WHERE " : " AND ") + where[i];
  return sql;
}

}  // namespace

std::string board_glob_condition(std::string_view glob) {
  if (!is_board_glob(glob)) throw Error(ExitCode::internal, "a board glob reached SQL unchecked");
  return "board LIKE " + like_pattern(glob);
}

std::variant<BoardsRequest, BadParameter> parse_boards_request(std::string_view target) {
  BoardsRequest request;
  const auto window = query_value(target, "window");
  if (const auto* bad = std::get_if<BadParameter>(&window)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(window)) {
    const auto seconds = parse_whole_number<std::int64_t>(*text);
    if (!seconds || *seconds <= 0 || *seconds > max_window_s) {
      return BadParameter{"window", fmt::format("seconds from 1 to {}", max_window_s)};
    }
    request.window_s = *seconds;
  }
  if (auto bad = take_glob(target, "boards", request.glob)) return *bad;
  return request;
}

std::string boards_sql(const StoreTable& table, const BoardsRequest& request, std::int64_t now_us) {
  const std::int64_t from_us = std::max<std::int64_t>(now_us - request.window_s * 1'000'000, 0);
  std::vector<std::string> prewhere{day_conditions(from_us, now_us),
                                    fmt::format("host_us >= {} AND host_us <= {}", from_us, now_us)};
  if (!request.glob.empty()) prewhere.push_back(board_glob_condition(request.glob));
  // Per run: the seqs missing between its first and last in the window, less those its Loss
  // records' ranges (clipped to that span) account for, are its gaps: holes nobody told of.
  return fmt::format(
      "SELECT board, sum(n), sum(lost), sum(gaps), sum(exceptions), sum(overflows), sum(malformed), max(last_us), "
      "argMax(run, last_us), argMax(last_text, last_text_us), max(last_text_us) FROM ("
      "SELECT *, greatest(toInt64(max_seq - min_seq + 1 - n) - arraySum(arrayMap(r -> greatest(toInt64(0), "
      "toInt64(least(tupleElement(r, 2), max_seq)) - toInt64(greatest(tupleElement(r, 1), min_seq)) + 1), "
      "told)), toInt64(0)) AS gaps FROM ("
      "SELECT board, run, count() AS n, min(seq) AS min_seq, max(seq) AS max_seq, "
      "sumIf(visitParamExtractUInt(data, 'records'), kind = 'Loss') AS lost, "
      "groupArrayIf((visitParamExtractUInt(data, 'first_seq'), visitParamExtractUInt(data, 'last_seq')), "
      "kind = 'Loss') AS told, countIf(kind = 'Exception') AS exceptions, "
      "countIf(kind = 'Overflow') AS overflows, countIf(kind = 'Malformed') AS malformed, max(host_us) AS last_us, "
      "argMaxIf(visitParamExtractString(data, 'message'), (host_us, seq), kind = 'Text') AS last_text, "
      "maxIf(host_us, kind = 'Text') AS last_text_us{} GROUP BY board, run)) "
      "GROUP BY board ORDER BY board LIMIT {} FORMAT TabSeparated",
      final_from(table, prewhere, {}), max_boards);
}

std::vector<StoredBoard> parse_boards_answer(std::string_view tsv) {
  std::vector<StoredBoard> boards;
  for_each_row(tsv, 11, [&](const std::vector<std::string_view>& f) {
    StoredBoard b;
    b.board = unescape_tsv(f[0]);
    b.records = number_field(f[1], "a count");
    b.lost = number_field(f[2], "a loss");
    b.gaps = number_field(f[3], "a gap count");
    b.exceptions = number_field(f[4], "a count");
    b.overflows = number_field(f[5], "a count");
    b.malformed = number_field(f[6], "a count");
    b.last_us = number_field(f[7], "a time");
    b.last_run = unescape_tsv(f[8]);
    if (const std::uint64_t text_us = number_field(f[10], "a time"); text_us != 0) {
      b.last_text = unescape_tsv(f[9]);
      if (b.last_text->size() > max_last_text) b.last_text->resize(max_last_text);
      b.last_text_us = text_us;
    }
    boards.push_back(std::move(b));
  });
  return boards;
}

std::string format_cursor(const SearchCursor& cursor) {
  return fmt::format("{1}{0}{2}{0}{3}{0}{4}", cursor_separator, cursor.host_us, cursor.board, cursor.run, cursor.seq);
}

std::optional<SearchCursor> parse_cursor(std::string_view text) {
  std::vector<std::string_view> parts;
  while (parts.size() < 5) {
    const std::size_t dot = text.find(cursor_separator);
    parts.push_back(text.substr(0, dot));
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  if (parts.size() != 4) return std::nullopt;
  const auto host_us = parse_whole_number<std::uint64_t>(parts[0]);
  const auto seq = parse_whole_number<std::uint64_t>(parts[3]);
  if (!host_us || !seq || !is_board_name(parts[1]) || !is_run_name(parts[2])) return std::nullopt;
  return SearchCursor{*host_us, std::string(parts[1]), std::string(parts[2]), *seq};
}

std::variant<SearchRequest, BadParameter> parse_search_request(std::string_view target, std::int64_t now_us) {
  SearchRequest request;
  if (auto bad = take_search_text(target, request)) return *bad;
  if (auto bad = take_kinds(target, request.kinds)) return *bad;
  if (request.kinds.empty() && !request.text.empty()) request.kinds.emplace_back("Text");
  if (auto bad = take_glob(target, "boards", request.glob)) return *bad;
  if (auto bad = take_optional_time(target, "from", now_us, request.from_us)) return *bad;
  if (auto bad = take_optional_time(target, "to", now_us, request.to_us)) return *bad;
  if (request.from_us && request.to_us && *request.to_us <= *request.from_us) {
    return BadParameter{"to", "not after from"};
  }
  if (auto bad = take_limit(target, request.limit)) return *bad;
  if (auto bad = take_cursor(target, request)) return *bad;
  return request;
}

std::string search_sql(const StoreTable& table, const SearchRequest& request) {
  std::vector<std::string> prewhere;
  if (std::string days = day_conditions(request.from_us, request.to_us); !days.empty()) prewhere.push_back(days);
  if (request.from_us) prewhere.push_back(fmt::format("host_us >= {}", std::max<std::int64_t>(*request.from_us, 0)));
  if (request.to_us) prewhere.push_back(fmt::format("host_us < {}", std::max<std::int64_t>(*request.to_us, 0)));
  if (!request.glob.empty()) prewhere.push_back(board_glob_condition(request.glob));
  if (!request.kinds.empty()) {
    std::string list;
    for (const std::string& kind : request.kinds) list += (list.empty() ? "" : ", ") + sql_string(kind);
    prewhere.push_back("kind IN (" + list + ")");
  }
  std::vector<std::string> where;
  if (!request.text.empty()) {
    prewhere.emplace_back("kind = 'Text'");
    where.push_back(
        fmt::format("position(visitParamExtractString(data, 'message'), {}) > 0", sql_string(request.text)));
  }
  if (request.before) prewhere.push_back(before_condition(*request.before));
  return fmt::format("SELECT {}{} ORDER BY host_us DESC, board DESC, run DESC, seq DESC LIMIT {} FORMAT TabSeparated",
                     clickhouse_columns(), final_from(table, prewhere, where), request.limit + 1);
}

std::variant<std::string, BadParameter> parse_runs_request(std::string_view target) {
  const auto board = query_value(target, "board");
  if (const auto* bad = std::get_if<BadParameter>(&board)) return *bad;
  const auto& name = std::get<std::optional<std::string>>(board);
  if (!name) return BadParameter{"board", "missing"};
  if (!is_board_name(*name)) return BadParameter{"board", "not a board name (1-64 of A-Z a-z 0-9 _ -)"};
  return *name;
}

std::string runs_sql(const StoreTable& table, std::string_view board) {
  if (!is_board_name(board)) throw Error(ExitCode::internal, "a board name reached SQL unchecked");
  return fmt::format(
      "SELECT run, min(host_us), max(host_us), count() FROM {} FINAL WHERE board = {} GROUP BY run "
      "ORDER BY max(host_us) DESC, run DESC LIMIT {} FORMAT TabSeparated",
      qualified_table(table.database, table.table), sql_string(board), max_runs);
}

std::vector<StoredRun> parse_runs_answer(std::string_view tsv) {
  std::vector<StoredRun> runs;
  for_each_row(tsv, 4, [&](const std::vector<std::string_view>& f) {
    runs.push_back(StoredRun{unescape_tsv(f[0]), number_field(f[1], "a time"), number_field(f[2], "a time"),
                             number_field(f[3], "a count")});
  });
  return runs;
}

}  // namespace tp::lab
