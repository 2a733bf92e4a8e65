// trace-ship: a board's NDJSON records into NATS JetStream, stamped and accounted for.
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "fleet/ship_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Ship a board's NDJSON records into NATS JetStream: each record is stamped with board, run, seq and\n"
      "host_us, several whole records go in one message (Nats-Msg-Id board.run.first-seq, so a resend is\n"
      "dropped by the server), acks are awaited within a window and failures resent oldest first with\n"
      "back-off. The input is never made to wait: when the server is away, chunks wait in a bounded buffer,\n"
      "then are dropped and told by a Loss record with their seq range.\n\n"
      "Examples:\n"
      "  swo-capture --probe auto | itm-decode | trace-ship --board rack3-b07 --server nats://127.0.0.1:4222\n"
      "  trace-ship --board b07 --create-stream --replicas 3 --state b07.journal records.ndjson",
      "trace-ship"};
  tp::ShipOptions o;
  tp::CommonOptions common;
  app.add_option("FILE", o.input, "NDJSON records ('-' or none = stdin)");
  app.add_option("--board", o.board, "The board's name (1-64 of A-Z a-z 0-9 _ -; one NATS subject token)")->required();
  app.add_option("--run", o.run, "The run id (default: the UTC start time and the pid; with --state: the journal's)")
      ->check(CLI::Validator([](const std::string& run) { return run.empty() ? "a run id cannot be empty" : ""; }, "",
                             "non-empty"));
  tp::add_nats_options(app, o.nats);
  app.add_option("--subject-prefix", o.prefix, "Subjects are PREFIX.BOARD")->default_val(o.prefix);
  app.add_option("--stream", o.stream.name, "JetStream stream")->default_val(o.stream.name);
  app.add_flag("--create-stream", o.create_stream, "Create the stream when it does not exist (subjects PREFIX.>)");
  app.add_option("--replicas", o.stream.replicas, "--create-stream: replicas (3 on a cluster)")
      ->default_val(o.stream.replicas)
      ->check(CLI::Range(1, 5));
  app.add_option("--max-age", o.stream.max_age_s, "--create-stream: seconds a record is kept (0: no limit)")
      ->default_val(o.stream.max_age_s)
      ->type_name("S");
  app.add_option("--max-bytes", o.stream.max_bytes, "--create-stream: bytes the stream keeps (-1: no limit)")
      ->default_val(o.stream.max_bytes);
  app.add_option("--duplicate-window", o.stream.duplicate_window_s,
                 "--create-stream: seconds a message id is remembered (a resend within it is dropped)")
      ->default_val(o.stream.duplicate_window_s)
      ->type_name("S");
  app.add_option("--chunk-bytes", o.chunk.max_bytes, "Largest message of records")->default_val(o.chunk.max_bytes);
  std::int64_t chunk_ms = o.chunk.max_age_us / 1000;
  std::int64_t ack_timeout_ms = o.ship.ack_timeout_us / 1000;
  app.add_option("--chunk-ms", chunk_ms, "A chunk is sent at the latest this long after its first record")
      ->default_val(chunk_ms)
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{60000}))
      ->type_name("MS");
  app.add_option("--window", o.ship.window, "Chunks in flight (sent, not yet acknowledged)")
      ->default_val(o.ship.window)
      ->check(CLI::Range(1, 4096));
  app.add_option("--buffer", o.ship.buffer_bytes, "Bytes held for the server (in flight and waiting)")
      ->default_val(o.ship.buffer_bytes)
      ->type_name("BYTES");
  app.add_option("--ack-timeout", ack_timeout_ms, "Milliseconds to wait for an ack before sending again")
      ->default_val(ack_timeout_ms)
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{600000}))
      ->type_name("MS");
  app.add_option("--drain-timeout", o.drain_timeout_ms,
                 "At the end of input or a stop, milliseconds to wait for outstanding acks")
      ->default_val(o.drain_timeout_ms)
      ->type_name("MS");
  std::string wait{tp::wait_policy_name(o.wait)};
  app.add_option("--wait", wait,
                 "When the buffer is full, wait for room instead of dropping: never (a live capture cannot wait), "
                 "files (a regular file input; the default) or always (a replay through a pipe)")
      ->check(CLI::IsMember(tp::wait_policy_names))
      ->default_val(wait);
  app.add_option("--state", o.state, "Journal to resume this run after a restart on the same input")->type_name("FILE");
  app.add_flag("--stats", o.stats, "Print the accounting (records, acknowledged, retries, lost) as JSON on stderr");
  tp::add_common_options(app, common, tp::CommonFlags{false, false});
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    o.wait = tp::wait_policy_named(wait);
    o.chunk.max_age_us = chunk_ms * 1000;
    o.ship.ack_timeout_us = ack_timeout_ms * 1000;
    return tp::ship(o, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-ship", [&] { return run_main(argc, argv); });
}
