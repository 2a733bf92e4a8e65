// palm-recv: receive Palm OS Emulator traces (Palm Reporter protocol over TCP) as records.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "core/listen_address.hpp"
#include "core/quantity.hpp"
#include "palm/server.hpp"

namespace {

struct Options {
  std::string listen = fmt::format("127.0.0.1:{}", tp::palm::default_port);
  std::string format = "ndjson";
  std::string modules;
  bool once = false;
  std::size_t max_message_size = tp::palm::default_max_message_size;
  std::size_t max_connections = 128;
  std::string message_timeout = "10s";
  bool stats = false;
};

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  tp::palm::ServerOptions options;
  const tp::ListenAddress listen = tp::parse_listen_address(o.listen);
  options.address = listen.address;
  options.port = listen.port;
  options.format = o.format == "text" ? tp::palm::Format::text : tp::palm::Format::ndjson;
  if (!o.modules.empty()) options.modules = tp::palm::parse_module_list(o.modules);
  options.once = o.once;
  options.max_message_size = o.max_message_size;
  options.max_connections = o.max_connections;
  options.message_timeout = tp::parse_duration(o.message_timeout);
  tp::BatchedWriter writer = tp::BatchedWriter::open(common.output, common.append);
  tp::palm::Server server(options, writer, log);
  log.info(fmt::format("listening on {}:{}", options.address, server.port()));
  server.run();
  const tp::palm::ServerStats& s = server.stats();
  if (o.stats) {
    log.report(fmt::format(
        "{} connections ({} refused past --max-connections), {} messages, {} filtered out by module, "
        "{} messages skipped (breaking a rule), {} streams rejected ({} stalled mid-message), {} user "
        "or unknown parameters skipped, {} ambiguous line breaks read, {} repeated parameters",
        s.connections, s.refused_connections, s.messages, s.filtered, s.skipped_messages, s.rejected_streams,
        s.stalled_messages, s.skipped_parameters, s.line_break_readings, s.repeated_parameters));
  }
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Receive Palm OS Emulator traces (the Palm Reporter protocol, TCP) from any number of\n"
      "senders and write them as NDJSON records (Text, or Raw for binary traces), one per line.\n"
      "A sender whose stream is malformed is disconnected; the others keep going.\n\n"
      "Examples:\n"
      "  palm-recv | jq -r .event.data.message\n"
      "  palm-recv --listen 0.0.0.0:9230 --module dm,app --format text\n"
      "  palm-recv --once -o session.ndjson",
      "palm-recv"};
  Options o;
  tp::CommonOptions common;
  app.add_option("--listen", o.listen, "ADDR:PORT to listen on (port 0: any free port, logged)")
      ->default_val(o.listen)
      ->type_name("ADDR:PORT");
  app.add_option("--format", o.format, "ndjson, or text: rows like the Reporter's window, binary as hex dumps")
      ->check(CLI::IsMember({"ndjson", "text"}))
      ->default_val(o.format);
  app.add_option("--module", o.modules, "Only these modules: numbers or mem, dm, ser, sys, app")->type_name("LIST");
  app.add_flag("--once", o.once, "Exit when the first sender disconnects");
  app.add_option("--max-message-size", o.max_message_size, "Largest message accepted, in bytes")
      ->default_val(o.max_message_size)
      ->check(CLI::Range(std::size_t{16}, std::size_t{1} << 30U));
  app.add_option("--max-connections", o.max_connections, "Senders at once; past it a connection is closed at once")
      ->default_val(o.max_connections)
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--message-timeout", o.message_timeout,
                 "A begun message must complete within this (e.g. 10s, 500ms); idle between messages is fine")
      ->default_val(o.message_timeout)
      ->type_name("DURATION");
  app.add_flag("--stats", o.stats, "Print connection and message counts on stderr at exit");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("palm-recv", [&] { return run_main(argc, argv); });
}
