// trace-lab's questions to the store (docs/tools/trace-lab.md "JSON APIs"): the parameters of
// /api/boards, /api/search and /api/runs parsed and checked, the SQL built from them over the
// store's base columns only (board, run, seq, host_us, kind, data: another table layout, a
// skip index or a materialized view leaves them right), every literal through
// clickhouse/sql_string or like_pattern; and ClickHouse's TabSeparated answers read back.
// Functions available in ClickHouse 18.16 only (visitParamExtract*, position, argMaxIf).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lab/lab_view.hpp"

namespace tp::lab {

// Where the store is: database.table (TABLE_all for trace-store's Distributed table).
struct StoreTable {
  std::string database = "default";
  std::string table = "trace";
};

// ---- /api/boards -------------------------------------------------------------------------

inline constexpr std::int64_t default_window_s = 3600;
inline constexpr std::int64_t max_window_s = 30LL * 86'400;
inline constexpr std::size_t max_boards = 10'000;
inline constexpr std::size_t max_last_text = 1024;  // bytes of a board's last Text line shown

struct BoardsRequest {
  std::int64_t window_s = default_window_s;
  std::string glob;  // empty: every board
};
[[nodiscard]] std::variant<BoardsRequest, BadParameter> parse_boards_request(std::string_view target);

// One board's figures over the window, from the store.
struct StoredBoard {
  std::string board;
  std::uint64_t records = 0;
  std::uint64_t lost = 0;  // the sum of Loss records' `records`
  std::uint64_t gaps = 0;  // seqs missing within its runs' first and last in the window
  std::uint64_t exceptions = 0;
  std::uint64_t overflows = 0;
  std::uint64_t malformed = 0;
  std::uint64_t last_us = 0;
  std::string last_run;
  std::optional<std::string> last_text;  // the latest by (host_us, seq): a read stamps many records alike
  std::optional<std::uint64_t> last_text_us;
};
[[nodiscard]] std::string boards_sql(const StoreTable& table, const BoardsRequest& request, std::int64_t now_us);
// The rows of boards_sql's answer; throws Error(bad_input) for one that is not.
[[nodiscard]] std::vector<StoredBoard> parse_boards_answer(std::string_view tsv);

// ---- /api/search -------------------------------------------------------------------------

inline constexpr std::size_t default_search_limit = 100;
inline constexpr std::size_t max_search_limit = 500;
inline constexpr std::size_t max_search_text = 4096;

// Where a page of hits ends: the next page starts after it (newest first).
struct SearchCursor {
  std::uint64_t host_us = 0;
  std::string board;
  std::string run;
  std::uint64_t seq = 0;
};
[[nodiscard]] std::string format_cursor(const SearchCursor& cursor);
[[nodiscard]] std::optional<SearchCursor> parse_cursor(std::string_view text);

struct SearchRequest {
  std::string text;                // a substring of a Text record's message; empty: none
  std::vector<std::string> kinds;  // checked record kinds
  std::string glob;
  std::optional<std::int64_t> from_us;
  std::optional<std::int64_t> to_us;
  std::size_t limit = default_search_limit;
  std::optional<SearchCursor> before;
};
[[nodiscard]] std::variant<SearchRequest, BadParameter> parse_search_request(std::string_view target,
                                                                             std::int64_t now_us);
// The SELECT of the store's columns (a row as trace-query reads it), one more than the limit
// (so the answer knows whether there is a next page).
[[nodiscard]] std::string search_sql(const StoreTable& table, const SearchRequest& request);

// ---- /api/runs ---------------------------------------------------------------------------

inline constexpr std::size_t max_runs = 1000;

struct StoredRun {
  std::string run;
  std::uint64_t first_us = 0;
  std::uint64_t last_us = 0;
  std::uint64_t records = 0;
};
[[nodiscard]] std::variant<std::string, BadParameter> parse_runs_request(std::string_view target);
[[nodiscard]] std::string runs_sql(const StoreTable& table, std::string_view board);
[[nodiscard]] std::vector<StoredRun> parse_runs_answer(std::string_view tsv);

// The boards of a glob as a SQL condition on `board` (a LIKE pattern; the glob checked first).
[[nodiscard]] std::string board_glob_condition(std::string_view glob);

}  // namespace tp::lab
