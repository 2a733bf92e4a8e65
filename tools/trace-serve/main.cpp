// trace-serve: serve NDJSON records to many live clients over the Callisto WebSocket
// protocol, with a web viewer on the same port.
#include <algorithm>
#include <cstring>

#include "cli/cli.hpp"
#include "cli/serve_options.hpp"
#include "serve/serve_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  // Everything after the first "--" is the capture command (command mode).
  char** const split = std::find_if(argv + 1, argv + argc, [](const char* arg) { return std::strcmp(arg, "--") == 0; });
  const int own_argc = static_cast<int>(split - argv);

  CLI::App app{
      "Serve NDJSON records to live clients over the Callisto ITM Viewer WebSocket protocol\n"
      "(ws://ADDR:PORT/ws), with a web viewer at http://ADDR:PORT/.\n\n"
      "Records come from stdin (or FILE), or, in command mode, from a capture command that\n"
      "trace-serve starts when a client sends Start and stops when no client traces any more.\n"
      "The command's arguments may use {baud_rate}, {allow_mask}, {allow_mask_hex},\n"
      "{probe_selector} and {chip}, filled in from the client's Connect and Start. In a shell\n"
      "script, pass each placeholder as an argument of its own and use \"$1\".. (see below);\n"
      "a chip or probe_selector with characters other than letters, digits and ._:/@+- is refused.\n\n"
      "Examples:\n"
      "  swo-capture --simulate | itm-decode | trace-serve\n"
      "  trace-serve --port-map ports.json -- sh -c 'swo-capture --baud \"$1\" | itm-decode' sh {baud_rate}\n"
      "  TRACE_SERVE_TOKEN=secret trace-serve --listen 0.0.0.0:9229 < records.ndjson",
      "trace-serve"};
  tp::serve::ServeArguments o;
  tp::serve::ServeOptions s;
  s.command.assign(split == argv + argc ? split : split + 1, argv + argc);
  tp::CommonOptions common;
  app.add_option("input", s.input, "Records to serve ('-' = stdin, the default)")->type_name("FILE");
  tp::add_serve_options(app, o.listen, o.token, s,
                        {"TRACE_SERVE_TOKEN", "WebSocket clients", "past it records are dropped"});
  app.add_option("--port-map", o.port_map, "Port map JSON for Meta (the same file as itm-decode's)")->type_name("FILE");
  tp::add_cpu_hz_option(app, o.cpu_hz, "Meta.cpu_hz");
  app.add_option("--dwt", o.dwt, "Meta.dwt_available: yes, no, or auto (yes once records carry cycle timestamps)")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->default_val(o.dwt);
  app.add_option("--target", o.target, "Status.target to report");
  app.add_option("--chip", o.chip, "Status.chip (default: the client's Connect.chip)");
  app.add_option("--probe", o.probe, "Status.probe (default: the client's Connect.probe_selector)");
  app.add_option("--baud", s.default_baud, "{baud_rate} when Start.baud_rate is null")->default_val(s.default_baud);
  app.add_option("--max-message-size", s.max_message_size, "Largest client message, in bytes")
      ->default_val(s.max_message_size)
      ->check(CLI::Range(std::size_t{256}, std::size_t{16} << 20U));
  app.add_option("--max-message-rate", s.max_message_rate, "Client messages per second (bursts of twice that)")
      ->default_val(s.max_message_rate)
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--elf", o.elf,
                 "Firmware ELF: functions (and file:line) for PC samples, handler names for exceptions and ISRs "
                 "of records that lack them")
      ->type_name("FILE");
  app.add_option("--top-interval", s.top_interval_s,
                 "Send trace-top's statistics records (Top* kinds) every SECONDS: the viewer's Statistics, CPU "
                 "load and Durations tabs (default 0: none)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--stats-interval", s.stats_interval_s, "Seconds between Stats messages")
      ->default_val(s.stats_interval_s)
      ->check(CLI::Range(0.05, 3600.0));
  app.add_flag("--exit-on-eof", s.exit_on_eof, "Exit once the input has ended and been delivered");
  app.add_flag("--stats", o.stats, "Print record, client and drop counts on stderr at exit");
  tp::add_common_options(app, common, tp::CommonFlags{false, false});
  app.footer(app.get_footer() + "\n\nCommand mode: trace-serve [OPTIONS] -- CMD ARGS...");
  return tp::run_tool(app, common, own_argc, argv,
                      [&](const tp::Logger& log) { return tp::serve::serve(o, std::move(s), log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-serve", [&] { return run_main(argc, argv); });
}
