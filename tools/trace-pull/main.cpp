// trace-pull: records of one or more boards from NATS JetStream, in seq order, to stdout.
#include "cli/cli.hpp"
#include "cli/fleet_options.hpp"
#include "core/wall_clock.hpp"
#include "fleet/pull_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Write the records of one or more boards from NATS JetStream to stdout, in (board, run, seq) order\n"
      "(a chunk that comes early waits in a small window), reporting any seq gap with its range: from\n"
      "the stream's start, a time (--since), a stream sequence or only new ones, then live with --follow.\n"
      "A durable consumer (--durable) resumes where its last run ended and sees no record twice.\n\n"
      "Examples:\n"
      "  trace-pull --board rack3-b07 --follow | trace-serve\n"
      "  trace-pull --since 1d | trace-filter --kind Exception | trace-csv\n"
      "  trace-pull --board 'rack3-*' --durable nightly -o rack3.ndjson --append   # cron",
      "trace-pull"};
  tp::PullOptions o;
  tp::CommonOptions common;
  std::string since;
  std::uint64_t start_seq = 0;
  std::int64_t reorder_ms = o.order.max_wait_us / 1000;
  tp::add_nats_options(app, o.nats);
  app.add_option("--board", o.boards, "A board, or a glob of boards ('rack3-*'); repeat for more (default: all)");
  app.add_option("--stream", o.stream, "JetStream stream")->default_val(o.stream);
  app.add_option("--subject-prefix", o.prefix, "Subjects are PREFIX.BOARD")->default_val(o.prefix);
  auto* since_option =
      app.add_option("--since", since, "Start this long ago (90s, 30m, 2h, 1d) or at an RFC 3339 UTC time")
          ->type_name("TIME");
  auto* seq_option = app.add_option("--start-seq", start_seq, "Start at this stream sequence")->type_name("N");
  auto* new_option = app.add_flag("--new", o.new_only, "Only records stored from now on");
  since_option->excludes(seq_option)->excludes(new_option);
  seq_option->excludes(new_option);
  app.add_flag("-f,--follow", o.follow, "Keep going with new records (default: stop at what the stream holds)");
  app.add_option("--durable", o.durable, "A durable consumer: each run goes on where the last one ended")
      ->type_name("NAME");
  app.add_option("--reorder-ms", reorder_ms, "How long an early chunk waits for the ones before it")
      ->default_val(reorder_ms)
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{60000}))
      ->type_name("MS");
  app.add_option("--reorder-chunks", o.order.max_held, "Most early chunks held")->default_val(o.order.max_held);
  app.add_flag("--stats", o.stats, "Print messages, records, duplicates dropped and seqs missing as JSON on stderr");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    if (!since.empty()) o.since_us = tp::parse_time_or_age("--since", since, tp::realtime_us());
    if (seq_option->count() > 0) o.start_seq = start_seq;
    o.order.max_wait_us = reorder_ms * 1000;
    o.output = common.output;
    o.append = common.append;
    return tp::pull(o, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-pull", [&] { return run_main(argc, argv); });
}
