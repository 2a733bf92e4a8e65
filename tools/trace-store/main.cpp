// trace-store: records from NATS JetStream into ClickHouse, acknowledged once inserted.
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "fleet/store_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Insert the records of a JetStream stream into ClickHouse, through a durable consumer: rows go in\n"
      "batches (--batch-rows or --batch-ms, whichever first) over HTTP, and the messages are acknowledged\n"
      "only after ClickHouse answered 200 (redelivered otherwise), so nothing is lost when either side\n"
      "restarts. The table is a ReplacingMergeTree by (board, run, seq): SELECT ... FINAL counts a record once.\n\n"
      "Examples:\n"
      "  trace-store --server nats://hub1:4222 --clickhouse http://127.0.0.1:8123 --create-table\n"
      "  trace-store --until-idle --stats   # cron: store what is there, then end",
      "trace-store"};
  tp::StoreOptions o;
  tp::CommonOptions common;
  tp::add_nats_options(app, o.nats);
  app.add_option("--stream", o.stream, "JetStream stream")->default_val(o.stream);
  app.add_option("--subject-prefix", o.prefix, "Subjects are PREFIX.BOARD")->default_val(o.prefix);
  app.add_option("--durable", o.durable,
                 "The durable consumer's name: trace-store processes on the same one share its messages")
      ->default_val(o.durable);
  tp::add_clickhouse_options(app, o.clickhouse, o.table);
  app.add_flag(
      "--create-table", o.create_table,
      "Create the table, and its counts view TABLE_counts (records per board, kind and hour), when they do not exist");
  app.add_option("--distributed", o.distributed,
                 "A ClickHouse cluster (remote_servers): create TABLE_all and TABLE_counts_all, Distributed by board, "
                 "and insert into TABLE_all")
      ->type_name("CLUSTER");
  app.add_option("--batch-rows", o.batch_rows,
                 "Most rows in one insert: batches are whole messages, cut before the one that would pass it (a "
                 "message holding more is inserted alone); ClickHouse wants few large inserts")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}));
  app.add_option("--batch-ms", o.batch_ms, "Insert what is there after this long")
      ->default_val(o.batch_ms)
      ->check(CLI::Range(std::int64_t{10}, std::int64_t{600000}))
      ->type_name("MS");
  app.add_flag("--until-idle", o.until_idle, "End when everything stored so far is in ClickHouse");
  app.add_option("--give-up-after", o.give_up_after_s,
                 "End (exit 8) when inserts have failed for this long in a row (ClickHouse away, or answering "
                 "after --clickhouse-timeout), their messages not acknowledged; 0: retry for ever")
      ->default_val(o.give_up_after_s)
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{31536000}))
      ->type_name("SECONDS");
  app.add_flag("--stats", o.stats,
               "Print messages, rows, inserts, failed inserts, bad lines and refused rows as JSON on stderr");
  tp::add_common_options(app, common, tp::CommonFlags{false, false});
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return tp::store(o, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-store", [&] { return run_main(argc, argv); });
}
