// trace-serve: serve NDJSON records to many live clients over the Callisto WebSocket
// protocol, with a web viewer on the same port.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/cli.hpp"
#include "core/listen_address.hpp"
#include "ports/port_map.hpp"
#include "serve/server.hpp"

namespace {

struct Options {
  std::string listen = fmt::format("127.0.0.1:{}", tp::serve::default_port);
  std::string input = "-";
  std::string port_map;
  std::uint64_t cpu_hz = 0;
  std::string dwt = "auto";
  std::string target;
  std::string chip;
  std::string probe;
  std::uint32_t baud = 2'000'000;
  std::string token;
  std::vector<std::string> allowed_origins;
  std::size_t max_clients = 256;
  std::size_t max_message_size = 64U << 10U;
  double max_message_rate = 50;
  std::size_t queue_size = 1U << 20U;
  double stats_interval = 1.0;
  bool exit_on_eof = false;
  bool stats = false;
};

std::optional<std::string> optional_text(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

tp::serve::ServeOptions serve_options(const Options& o, std::vector<std::string> command) {
  tp::serve::ServeOptions s;
  const tp::ListenAddress listen = tp::parse_listen_address(o.listen);
  s.address = listen.address;
  s.port = listen.port;
  s.input = o.input;
  s.command = std::move(command);
  s.ports_map_json = (o.port_map.empty() ? tp::PortMap::standard() : tp::PortMap::load(o.port_map)).to_json();
  if (o.cpu_hz != 0) s.cpu_hz = o.cpu_hz;
  if (o.dwt != "auto") s.dwt_available = o.dwt == "yes";
  s.target = optional_text(o.target);
  s.chip = optional_text(o.chip);
  s.probe = optional_text(o.probe);
  s.default_baud = o.baud;
  s.token = optional_text(o.token);
  s.allowed_origins = o.allowed_origins;
  s.max_clients = o.max_clients;
  s.max_message_size = o.max_message_size;
  s.max_message_rate = o.max_message_rate;
  s.queue_limit = o.queue_size;
  s.stats_interval_s = o.stats_interval;
  s.exit_on_eof = o.exit_on_eof;
  return s;
}

tp::ExitCode run(const Options& o, std::vector<std::string> command, const tp::Logger& log) {
  if (!command.empty() && o.input != "-") {
    throw tp::Error(tp::ExitCode::usage, "give either an input FILE or a command after --, not both");
  }
  const bool command_mode = !command.empty();
  tp::serve::Server server(serve_options(o, std::move(command)), log);
  std::string address = o.listen.substr(0, o.listen.rfind(':'));
  // A wildcard address is not one a browser can open: name the address and a usable URL.
  const bool wildcard = address == "0.0.0.0" || address == "[::]" || address == "::";
  if (address.empty()) address = "127.0.0.1";
  log.info(fmt::format(
      "serving on http://{}:{}/ (WebSocket at /ws){}{}", address, server.port(),
      wildcard ? fmt::format("; every address of this host, e.g. http://127.0.0.1:{}/ here", server.port()) : "",
      command_mode ? "; the command starts when a client sends Start" : ""));
  server.run();
  if (o.stats) {
    const tp::serve::ServeStats s = server.stats();
    log.report(fmt::format(
        "{} records read, {} bad lines skipped, {} clients ({} refused, {} wrong tokens), {} events sent, {} dropped "
        "for slow clients, {} command runs",
        s.records_read, s.bad_lines, s.clients, s.rejected_clients, s.wrong_tokens, s.events_sent, s.events_dropped,
        s.commands_started));
  }
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  // Everything after the first "--" is the capture command (command mode).
  char** const split = std::find_if(argv + 1, argv + argc, [](const char* arg) { return std::strcmp(arg, "--") == 0; });
  std::vector<std::string> command(split == argv + argc ? split : split + 1, argv + argc);
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
  Options o;
  tp::CommonOptions common;
  app.add_option("input", o.input, "Records to serve ('-' = stdin, the default)")->type_name("FILE");
  app.add_option("--listen", o.listen, "ADDR:PORT for HTTP and WebSocket (port 0: any free port, logged)")
      ->default_val(o.listen)
      ->type_name("ADDR:PORT");
  app.add_option("--port-map", o.port_map, "Port map JSON for Meta (the same file as itm-decode's)")->type_name("FILE");
  app.add_option("--cpu-hz", o.cpu_hz, "Meta.cpu_hz: the target's clock")->type_name("HZ");
  app.add_option("--dwt", o.dwt, "Meta.dwt_available: yes, no, or auto (yes once records carry cycle timestamps)")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->default_val("auto");
  app.add_option("--target", o.target, "Status.target to report");
  app.add_option("--chip", o.chip, "Status.chip (default: the client's Connect.chip)");
  app.add_option("--probe", o.probe, "Status.probe (default: the client's Connect.probe_selector)");
  app.add_option("--baud", o.baud, "{baud_rate} when Start.baud_rate is null")->default_val(o.baud);
  app.add_option("--token", o.token, "Require this token (Bearer header, ?token= or Connect.token)")
      ->envname("TRACE_SERVE_TOKEN");
  app.add_option("--allow-origin", o.allowed_origins, "Also accept browsers from ORIGIN (repeatable; * = any)")
      ->type_name("ORIGIN");
  app.add_option("--max-clients", o.max_clients, "Most WebSocket clients at once")
      ->default_val(o.max_clients)
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--max-message-size", o.max_message_size, "Largest client message, in bytes")
      ->default_val(o.max_message_size)
      ->check(CLI::Range(std::size_t{256}, std::size_t{16} << 20U));
  app.add_option("--max-message-rate", o.max_message_rate, "Client messages per second (bursts of twice that)")
      ->default_val(o.max_message_rate)
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--queue-size", o.queue_size, "Per-client send queue in bytes; past it records are dropped")
      ->default_val(o.queue_size)
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30U));
  app.add_option("--stats-interval", o.stats_interval, "Seconds between Stats messages")
      ->default_val(o.stats_interval)
      ->check(CLI::Range(0.05, 3600.0));
  app.add_flag("--exit-on-eof", o.exit_on_eof, "Exit once the input has ended and been delivered");
  app.add_flag("--stats", o.stats, "Print record, client and drop counts on stderr at exit");
  tp::add_common_options(app, common, tp::CommonFlags{false, false});
  app.footer(app.get_footer() + "\n\nCommand mode: trace-serve [OPTIONS] -- CMD ARGS...");
  return tp::run_tool(app, common, own_argc, argv,
                      [&](const tp::Logger& log) { return run(o, std::move(command), log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-serve", [&] { return run_main(argc, argv); });
}
