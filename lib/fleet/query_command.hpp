// trace-query: records stored in ClickHouse back out as NDJSON records (docs/design.md "The
// fleet"), so trace-top, trace-timeline and trace-serve read them unchanged. The rows are
// selected with FINAL (one row per record, however often it was inserted), in (board, run,
// seq) order, and streamed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clickhouse/clickhouse_http.hpp"
#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace tp {

struct QueryOptions {
  ClickHouseSettings clickhouse;
  std::string table{default_table};
  std::vector<std::string> boards;  // globs
  std::vector<std::string> kinds;
  std::vector<std::string> runs;  // fleet names, checked
  std::optional<std::int64_t> since_us;
  std::optional<std::int64_t> until_us;
  std::string where;  // a ClickHouse expression over the columns, as given
  std::optional<std::uint64_t> limit;
  std::string output = "-";
  bool append = false;
  bool show_sql = false;
};

// The SELECT trace-query runs.
[[nodiscard]] std::string query_sql(const QueryOptions& options);
ExitCode query(const QueryOptions& options, const Logger& log);

}  // namespace tp
