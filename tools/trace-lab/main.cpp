// trace-lab: the fleet's front door in a browser (boards, search, a board live or stored).
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "lab/lab_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Serve the fleet to a browser, read-only: every board the JetStream stream and the ClickHouse\n"
      "store know (live or not, records/s, losses, faults, the last Text line), a search across\n"
      "boards, and the web viewer on one board live from JetStream or stored from ClickHouse (a\n"
      "time range or a run, maybe going on live), each view a URL. Views read records through\n"
      "trace-pull and trace-query (beside trace-lab, else on PATH).\n\n"
      "Examples:\n"
      "  trace-lab --server nats://127.0.0.1:4222 --clickhouse http://127.0.0.1:8123\n"
      "  TRACE_LAB_TOKEN=secret trace-lab --listen 0.0.0.0:9230 --distributed --domain rack3",
      "trace-lab"};
  tp::lab::LabOptions o;
  tp::CommonOptions common;
  app.add_option("--listen", o.listen, "ADDR:PORT for HTTP and WebSocket (port 0: any free port, logged)")
      ->default_val(o.listen)
      ->type_name("ADDR:PORT");
  app.add_option("--token", o.token, "Require this token (Bearer header, ?token= or Connect.token)")
      ->envname("TRACE_LAB_TOKEN");
  app.add_option("--allow-origin", o.serve.allowed_origins, "Also accept browsers from ORIGIN (repeatable; * = any)")
      ->type_name("ORIGIN");
  app.add_option("--max-clients", o.serve.max_clients, "Most WebSocket clients (viewers) at once")
      ->default_val(o.serve.max_clients)
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--queue-size", o.serve.queue_limit,
                 "Per-viewer send queue in bytes (4x for the viewer's batched form): a live viewer past it drops, "
                 "a stored one is waited for")
      ->default_val(o.serve.queue_limit)
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30U));
  tp::add_nats_options(app, o.nats);
  app.add_option("--stream", o.stream, "JetStream stream")->default_val(o.stream);
  app.add_option("--subject-prefix", o.prefix, "Subjects are PREFIX.BOARD")->default_val(o.prefix);
  tp::add_clickhouse_options(app, o.clickhouse, o.table);
  app.add_flag("--distributed", o.distributed,
               "Read TABLE_all, the Distributed table trace-store made over the shards of a cluster");
  app.add_option("--live-seconds", o.live_seconds, "A board is live when it had records in the last SECONDS")
      ->default_val(o.live_seconds)
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--top-interval", o.top_interval_s,
                 "Send every view trace-top's statistics records (Top* kinds) every SECONDS, of its newest run: the "
                 "viewer's CPU load, Durations and Statistics tabs (0: none)")
      ->default_val(o.top_interval_s)
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_flag("--stats", o.stats, "Print client and drop counts on stderr at exit");
  tp::add_common_options(app, common, tp::CommonFlags{false, false});
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return tp::lab::lab(std::move(o), log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-lab", [&] { return run_main(argc, argv); });
}
