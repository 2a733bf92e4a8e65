// trace-query: records stored in ClickHouse back out as NDJSON records.
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "core/wall_clock.hpp"
#include "fleet/pull_command.hpp"
#include "fleet/query_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Select records stored by trace-store in ClickHouse and write them as NDJSON records, in (board,\n"
      "run, seq) order, one per record however often it was inserted (FINAL), so trace-top,\n"
      "trace-timeline, trace-filter and trace-serve read them as if they came from the board.\n\n"
      "Examples:\n"
      "  trace-query --board 'rack3-*' --since 7d --kind Exception | trace-csv --preset exceptions\n"
      "  trace-query --board b07 --where \"data LIKE '%HardFault%'\" | trace-serve",
      "trace-query"};
  tp::QueryOptions o;
  tp::CommonOptions common;
  std::string since;
  std::string until;
  std::uint64_t limit = 0;
  tp::add_clickhouse_options(app, o.clickhouse, o.table);
  app.add_option("--board", o.boards, "A board or a glob of boards ('rack3-*'); repeat for more");
  app.add_option("--run", o.runs, "Only records of this run (as trace-ship named it); repeat for more")
      ->type_name("RUN");
  app.add_option("--kind", o.kinds, "Only records of this kind; repeat for more");
  app.add_option("--since", since, "Records received this long ago (7d, 2h) or since an RFC 3339 UTC time")
      ->type_name("TIME");
  app.add_option("--until", until, "Records received before this long ago or an RFC 3339 UTC time")->type_name("TIME");
  app.add_option("--where", o.where,
                 "A ClickHouse condition over the columns (board, run, seq, host_us, timestamp, port, kind, data, ...)")
      ->type_name("SQL");
  auto* limit_option = app.add_option("--limit", limit, "At most this many records")->type_name("N");
  app.add_flag("--show-sql", o.show_sql, "Print the SELECT on stderr");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    if (!since.empty()) o.since_us = tp::parse_time_or_age("--since", since, tp::realtime_us());
    if (!until.empty()) o.until_us = tp::parse_time_or_age("--until", until, tp::realtime_us());
    if (limit_option->count() > 0) o.limit = limit;
    o.output = common.output;
    o.append = common.append;
    return tp::query(o, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-query", [&] { return run_main(argc, argv); });
}
