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
// members, in their order, and under the key "event" (a top-level member of its own, so never
// one of these) an object of event's members beside kind and data ("" when there are none).
// ReplacingMergeTree ordered by (board, run, seq) keeps one row of a record stored twice
// (SELECT ... FINAL).
//
// Only a record valid under record.schema.json (records/record_check, the one validator) with
// all four fleet fields becomes a row, and only one the columns hold as it is: host_us up to
// 2105-12-31 (ClickHouse 18.16's last Date: a later day is stored as 0000-00-00), a source
// that is not "" (the column's "none"). Nothing is altered: what is not stored is refused.
//
// Going back, the row is checked as coming from outside (data and extra parsed, no reserved
// key in extra, the line a valid record) and written through records/record_line, then the
// fleet fields (records/fleet_fields): a record tracepipe made comes back byte for byte, and
// any record comes back equal as JSON.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tp {

// The largest host_us a row holds: 2105-12-31T23:59:59.999999Z.
inline constexpr std::uint64_t max_stored_host_us = std::uint64_t{49'673} * 86'400'000'000 - 1;

// The table trace-store fills and trace-query reads unless told another (--table).
inline constexpr std::string_view default_table = "trace";

// The columns, in the table's order, and the statements of the store (names quoted).
[[nodiscard]] std::string_view clickhouse_columns();
[[nodiscard]] std::string create_table_sql(std::string_view database, std::string_view table);
[[nodiscard]] std::string create_distributed_sql(std::string_view database, std::string_view table,
                                                 std::string_view cluster);
[[nodiscard]] std::string insert_sql(std::string_view database, std::string_view table);

// The table's columns and their types, one "name<TAB>type" line each (system.columns).
[[nodiscard]] std::string table_columns_sql(std::string_view database, std::string_view table);

// Why a table with these columns (table_columns_sql's reply) cannot hold trace-store's rows as
// they are: a column missing, or of a type that changes a value (ClickHouse 18.16 wraps a
// number too large for its column without a word: seq 2^33 in a UInt32 becomes another
// record's seq). Empty when it can.
[[nodiscard]] std::string unfit_columns(std::string_view columns_tsv);
// database.table, each quoted.
[[nodiscard]] std::string qualified_table(std::string_view database, std::string_view table);

// Appends one JSONEachRow row (with its newline) for a stamped record line; false (with the
// problem, naming the record's board, run and seq when it has them) when the line is not a
// valid stamped record or the columns cannot hold it as it is.
bool append_clickhouse_row(simdjson::dom::parser& parser, std::string_view line, std::string& rows,
                           std::string& problem);

// "board B run R seq N" of a JSONEachRow row of ours (for a report of a refused row).
[[nodiscard]] std::string row_identity(std::string_view row);

// One row of `SELECT <clickhouse_columns()> ... FORMAT TabSeparated` (without its newline)
// as a record line (with its newline) appended to `out`; false, with the problem (naming the
// row's board, run and seq), when it is not a row the store writes.
bool append_record_from_tsv(simdjson::dom::parser& parser, std::string_view row, std::string& out,
                            std::string& problem);

// A shell glob of boards as a ClickHouse LIKE pattern (quoted, escapes included).
[[nodiscard]] std::string like_pattern(std::string_view glob);
// A string as a ClickHouse string literal: every value from outside reaches SQL through this
// (or quote_identifier) and nothing else; quotes and backslashes escaped, control bytes \xHH.
[[nodiscard]] std::string sql_string(std::string_view text);
// A name as a ClickHouse identifier: in backquotes, ` and \ escaped.
[[nodiscard]] std::string quote_identifier(std::string_view name);
// A field of a TabSeparated answer as its text (\t \n \\ \' \b \f \r \0 undone).
[[nodiscard]] std::string unescape_tsv(std::string_view field);

}  // namespace tp
