// A record as a flat ClickHouse row and back (docs/design.md "The fleet"). ClickHouse 18.16
// imports one level of JSON only and has no JSON type, so event.data is kept as its JSON text:
//
//   board String, run String, seq UInt64, host_us UInt64, day Date,
//   timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8,
//   kind String, data String, extra String
//
// day is host_us's UTC date (the partition); clock and source are "" when the record has
// none; time_exact is 0 only for a record that says "time_exact":false; data is event.data's
// JSON ("" for a kind without data); extra is a JSON object of the record's other top-level
// members, in their order ("" when there are none). ReplacingMergeTree ordered by (board,
// run, seq) keeps one row of a record stored twice (SELECT ... FINAL).
//
// Going back, the record is written in the order record_line writes it, then the fleet fields
// (records/fleet_fields): a record tracepipe made comes back byte for byte.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace tp {

// The columns, in the table's order, and the CREATE TABLE of the store.
[[nodiscard]] std::string_view clickhouse_columns();
[[nodiscard]] std::string create_table_sql(std::string_view database, std::string_view table);
[[nodiscard]] std::string create_distributed_sql(std::string_view database, std::string_view table,
                                                 std::string_view cluster);

// Appends one JSONEachRow row (with its newline) for a stamped record line; false (with the
// problem) when the line is not a stamped record.
bool append_clickhouse_row(simdjson::dom::parser& parser, std::string_view line, std::string& rows,
                           std::string& problem);

// One row of `SELECT <clickhouse_columns()> ... FORMAT TabSeparated` (without its newline)
// as a record line (with its newline) appended to `out`; false when it is not such a row.
bool append_record_from_tsv(std::string_view row, std::string& out);

// A shell glob of boards as a ClickHouse LIKE pattern (quoted, escapes included).
[[nodiscard]] std::string like_pattern(std::string_view glob);
// A string as a ClickHouse string literal.
[[nodiscard]] std::string sql_string(std::string_view text);

}  // namespace tp
