#include "fleet/query_command.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include "clickhouse/clickhouse_rows.hpp"
#include "core/batched_writer.hpp"
#include "fleet/payload_lines.hpp"
#include "records/fleet_fields.hpp"
#include "records/vocabulary.hpp"

namespace tp {
namespace {

constexpr std::uint64_t bad_rows_reported = 20;
// A stored record came in one NATS message (1 MB by default): a row far longer is no record.
constexpr std::size_t row_max = std::size_t{64} << 20;

}  // namespace

std::string query_sql(const QueryOptions& o) {
  std::vector<std::string> conditions;
  if (!o.boards.empty()) {
    std::string any;
    for (const std::string& board : o.boards) {
      if (!any.empty()) any += " OR ";
      any += "board LIKE " + like_pattern(board);
    }
    conditions.push_back("(" + any + ")");
  }
  if (!o.kinds.empty()) {
    std::string list;
    for (const std::string& kind : o.kinds) list += (list.empty() ? "" : ", ") + sql_string(kind);
    conditions.push_back("kind IN (" + list + ")");
  }
  if (!o.runs.empty()) {
    std::string list;
    for (const std::string& run : o.runs) list += (list.empty() ? "" : ", ") + sql_string(run);
    conditions.push_back("run IN (" + list + ")");
  }
  if (o.since_us) conditions.push_back(fmt::format("host_us >= {}", *o.since_us));
  if (o.until_us) conditions.push_back(fmt::format("host_us < {}", *o.until_us));
  if (!o.where.empty()) conditions.push_back("(" + o.where + ")");
  std::string sql =
      fmt::format("SELECT {} FROM {} FINAL", clickhouse_columns(), qualified_table(o.clickhouse.database, o.table));
  for (std::size_t i = 0; i < conditions.size(); ++i) sql += (i == 0 ? " WHERE " : " AND ") + conditions[i];
  sql += " ORDER BY board, run, seq";
  if (o.limit) sql += fmt::format(" LIMIT {}", *o.limit);
  sql += " FORMAT TabSeparated";
  return sql;
}

ExitCode query(const QueryOptions& o, const Logger& log) {
  if (!is_fleet_name(o.table) || !is_fleet_name(o.clickhouse.database)) {
    throw Error(ExitCode::usage, "--table and --database are names of A-Z a-z 0-9 _ -");
  }
  for (const std::string& run : o.runs) {
    if (!is_fleet_name(run))
      throw Error(ExitCode::usage, fmt::format("--run {}: not a run name (A-Z a-z 0-9 _ -)", run));
  }
  for (const std::string& kind : o.kinds) {
    if (!is_known_record_kind(kind)) throw Error(ExitCode::usage, fmt::format("--kind {}: not a record kind", kind));
  }
  const std::string sql = query_sql(o);
  if (o.show_sql) log.info(sql);
  ClickHouseHttp clickhouse(o.clickhouse);
  BatchedWriter writer = BatchedWriter::open(o.output, o.append);
  std::string record;
  std::string problem;
  simdjson::dom::parser parser;
  std::uint64_t rows = 0;
  std::uint64_t bad_rows = 0;
  // A row that is not the store's is reported and left out; the others are written.
  const auto on_row = [&](std::string_view row) {
    // An error met after the status was sent ends the body as text ("Code: N, ..."): no row
    // of the store (13 columns) starts so.
    if (row.find('\t') == std::string_view::npos && clickhouse_error_code(row) != 0) {
      writer.flush();
      throw Error(ExitCode::failure,
                  fmt::format("ClickHouse failed while sending the rows: {}", clickhouse_error_line(row)));
    }
    record.clear();
    if (append_record_from_tsv(parser, row, record, problem)) {
      ++rows;
      writer.write(record);
    } else if (++bad_rows <= bad_rows_reported) {
      log.warn(fmt::format("a row that is not the store's, left out: {}", problem));
    }
  };
  struct RowSink {
    decltype(on_row)& row;
    void line(std::string_view text) { row(text); }
    static void too_long(std::string_view) {
      throw Error(ExitCode::bad_input,
                  fmt::format("ClickHouse sent a row longer than {} bytes: not the store's", row_max));
    }
  } sink{on_row};
  PieceLines lines(row_max);
  const HttpReply reply = clickhouse.stream(sql, [&](std::string_view piece) { lines.take(piece, sink); });
  if (reply.status != 200) {
    throw Error(ExitCode::failure, fmt::format("ClickHouse refused the query: {}", clickhouse_error_line(reply.body)));
  }
  lines.finish(sink);  // a last row without its newline
  writer.flush();
  log.verbose(fmt::format("{} records", rows));
  if (bad_rows > 0) {
    throw Error(ExitCode::bad_input, fmt::format("{} rows were not the store's (is --table a trace-store table?); "
                                                 "the {} others written",
                                                 bad_rows, rows));
  }
  return ExitCode::ok;
}

}  // namespace tp
