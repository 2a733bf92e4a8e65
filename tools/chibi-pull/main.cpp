// chibi-pull: ChibiOS thread statistics and timelines over the threads_utilities shell.
#include "chibios/commands.hpp"
#include "cli/cli.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Pull thread statistics and context-switch timelines from a ChibiOS target through the\n"
      "threads_utilities shell on a serial port, as NDJSON records (default), CSV or text.\n\n"
      "Examples:\n"
      "  chibi-pull --port /dev/ttyACM0 stat --format text\n"
      "  chibi-pull --port /dev/ttyACM0 timeline --svg timeline.svg --save run1.txt\n"
      "  chibi-pull timeline --load run1.txt --format csv > runs.csv\n"
      "  chibi-pull --port /dev/ttyACM0 watch --every 1s | trace-serve",
      "chibi-pull"};
  tp::chibios::PullOptions o;
  tp::CommonOptions common;
  app.add_option("--port", o.port, "Serial device of the shell (e.g. /dev/ttyACM0)")
      ->type_name("DEVICE")
      ->envname("CHIBI_PULL_PORT");
  app.add_option("--baud", o.baud, "Baud rate (any rate; USB CDC ignores it)")->default_val(o.baud);
  app.add_option("--timeout", o.timeout_s, "Seconds to wait for the prompt after a command")
      ->default_val(o.timeout_s)
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--format", o.format, "ndjson, csv or text")
      ->check(CLI::IsMember({"ndjson", "csv", "text"}))
      ->default_val(o.format);
  app.add_option("--tick-hz", o.tick_hz, "System tick rate (CH_CFG_ST_FREQUENCY) for microsecond timestamps")
      ->default_val(o.tick_hz)
      ->check(CLI::Range(1.0, 1e9));
  app.add_option("--time-bits", o.time_bits,
                 "Width of the logged time: 20 (the default: a 32-bit system time) or 16 (CH_CFG_ST_RESOLUTION 16)")
      ->default_val(o.time_bits)
      ->check(CLI::IsMember({16U, 20U}));
  app.require_subcommand(1);
  app.fallthrough();  // parent options may follow the subcommand
  app.add_subcommand("stat", "Stack use of every thread (threads_stat)");
  app.add_subcommand("uc", "CPU use of every thread (threads_uc)");
  app.add_subcommand("list", "Threads alive and deleted (threads_list)");
  app.add_subcommand("timestamps", "The raw context-switch log (threads_timestamps)");
  app.add_subcommand("trigger", "Set the trigger (threads_timestamps_trigger)");
  app.add_subcommand("run", "Clear the trigger and the log (threads_timestamps_run)");
  CLI::App* timeline = app.add_subcommand("timeline", "threads_list + threads_timestamps, reconstructed");
  timeline->add_option("--svg", o.svg, "Also draw the timeline as an SVG file")->type_name("FILE");
  timeline->add_option("--save", o.save, "Also save the replies in the reference tool's .txt format")
      ->type_name("FILE");
  timeline->add_option("--load", o.load, "Rebuild from a saved .txt file instead of the port")->type_name("FILE");
  CLI::App* watch = app.add_subcommand("watch", "Keep pulling and stream new TaskSwitch records");
  watch->add_option("--every", o.every, "Time between pulls (500ms, 2s, 1m)")->default_val(o.every);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    tp::BatchedWriter out = tp::BatchedWriter::open(common.output, common.append, {o.load});
    return tp::chibios::run_command(o, app.get_subcommands().front()->get_name(), out, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("chibi-pull", [&] { return run_main(argc, argv); });
}
