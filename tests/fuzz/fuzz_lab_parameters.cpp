// Fuzz target: trace-lab's parameters from a browser (lib/lab): a request target as views and
// as the APIs parse it, and the SQL built from what they accept. Input: the target
// ("/ws?board=...", "/api/search?text=..."). Properties: an accepted view names a valid board
// (and run, and a range that is not empty); an accepted search, boards or runs request builds
// SQL with no raw control byte and with its text as exactly one string literal; a cursor
// survives a round trip; sql_string of any bytes is one literal.
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "clickhouse/clickhouse_rows.hpp"
#include "lab/lab_queries.hpp"
#include "lab/lab_view.hpp"

namespace {

constexpr std::int64_t now_us = 1'795'900'000'000'000;

void check(bool condition) {
  if (!condition) std::abort();
}

// One ClickHouse string literal: its quotes escaped, no raw control byte.
bool one_literal(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '\'' || literal.back() != '\'') return false;
  for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
    const auto c = static_cast<unsigned char>(literal[i]);
    if (c < 0x20U || c == 0x7FU) return false;
    if (literal[i] == '\\') {
      if (++i + 1 >= literal.size()) return false;
    } else if (literal[i] == '\'') {
      return false;
    }
  }
  return true;
}

bool printable_sql(std::string_view sql) {
  for (const char c : sql) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte == 0x7FU) return false;
  }
  return true;
}

void views(std::string_view target) {
  const auto parsed = tp::lab::parse_view(target, now_us);
  if (const auto* view = std::get_if<tp::lab::View>(&parsed)) {
    check(tp::lab::is_board_name(view->board));
    if (view->mode == tp::lab::ViewMode::range) check(view->from_us < view->to_us);
    if (view->mode == tp::lab::ViewMode::run) check(tp::lab::is_run_name(view->run));
  }
}

void apis(std::string_view target) {
  const tp::lab::StoreTable table;
  const auto search = tp::lab::parse_search_request(target, now_us);
  if (const auto* request = std::get_if<tp::lab::SearchRequest>(&search)) {
    const std::string sql = tp::lab::search_sql(table, *request);
    check(printable_sql(sql));
    if (!request->text.empty()) check(sql.find(tp::sql_string(request->text)) != std::string::npos);
    check(request->limit >= 1 && request->limit <= tp::lab::max_search_limit);
  }
  const auto boards = tp::lab::parse_boards_request(target);
  if (const auto* request = std::get_if<tp::lab::BoardsRequest>(&boards)) {
    check(printable_sql(tp::lab::boards_sql(table, *request, now_us)));
  }
  const auto runs = tp::lab::parse_runs_request(target);
  if (const auto* board = std::get_if<std::string>(&runs)) check(printable_sql(tp::lab::runs_sql(table, *board)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  views(input);
  apis(input);
  check(one_literal(tp::sql_string(input)));
  if (const auto cursor = tp::lab::parse_cursor(input)) {
    const auto again = tp::lab::parse_cursor(tp::lab::format_cursor(*cursor));
    check(again && again->host_us == cursor->host_us && again->board == cursor->board && again->run == cursor->run &&
          again->seq == cursor->seq);
  }
  return 0;
}
