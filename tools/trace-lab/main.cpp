// trace-lab: the fleet's front door in a browser (boards, search, a board live or stored).
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "cli/serve_options.hpp"
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
  tp::add_serve_options(app, o.listen, o.token, o.serve,
                        {"TRACE_LAB_TOKEN", "WebSocket clients (viewers)",
                         "past it a live viewer drops records, a stored one is waited for"});
  tp::add_nats_options(app, o.nats);
  app.add_option("--stream", o.stream, "JetStream stream")->default_val(o.stream);
  app.add_option("--subject-prefix", o.prefix, "Subjects are PREFIX.BOARD")->default_val(o.prefix);
  tp::add_clickhouse_options(app, o.clickhouse, o.table);
  app.add_option("--api-deadline", o.api_deadline_s,
                 "Answer every API request (boards, search, runs) within SECONDS of its arrival: past it, 504 "
                 "(ClickHouse did not answer in time) and the next request is asked")
      ->default_val(o.api_deadline_s)
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
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
