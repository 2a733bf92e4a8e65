#include "serve/serve_command.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "core/listen_address.hpp"
#include "ports/port_map.hpp"
#include "serve/server.hpp"
#include "symbols/symbolizer.hpp"

namespace tp::serve {
namespace {

std::optional<std::string> optional_text(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

}  // namespace

ExitCode serve(ServeOptions options, bool print_stats, const Logger& log) {
  const bool command_mode = !options.command.empty();
  // A wildcard address is not one a browser can open: name the address and a usable URL.
  const bool wildcard = options.address == "0.0.0.0" || options.address == "::";
  const std::string host =
      options.address.find(':') != std::string::npos ? fmt::format("[{}]", options.address) : options.address;
  Server server(std::move(options), log);
  log.info(fmt::format(
      "serving on http://{}:{}/ (WebSocket at /ws){}{}", host, server.port(),
      wildcard ? fmt::format("; every address of this host, e.g. http://127.0.0.1:{}/ here", server.port()) : "",
      command_mode ? "; the command starts when a client sends Start" : ""));
  server.run();
  if (print_stats) {
    const ServeStats s = server.stats();
    log.report(fmt::format(
        "{} records read, {} bad lines skipped, {} clients ({} refused, {} wrong tokens), {} events sent, {} dropped "
        "for slow clients, {} command runs",
        s.records_read, s.bad_lines, s.clients, s.rejected_clients, s.wrong_tokens, s.events_sent, s.events_dropped,
        s.commands_started));
  }
  return ExitCode::ok;
}

ExitCode serve(const ServeArguments& arguments, ServeOptions options, const Logger& log) {
  if (!options.command.empty() && options.input != "-") {
    throw Error(ExitCode::usage, "give either an input FILE or a command after --, not both");
  }
  const ListenAddress listen = parse_listen_address(arguments.listen);
  options.address = listen.address;
  options.port = listen.port;
  options.ports_map_json =
      (arguments.port_map.empty() ? PortMap::standard() : PortMap::load(arguments.port_map)).to_json();
  if (arguments.cpu_hz != 0) options.cpu_hz = arguments.cpu_hz;
  if (arguments.dwt != "auto") options.dwt_available = arguments.dwt == "yes";
  options.target = optional_text(arguments.target);
  options.chip = optional_text(arguments.chip);
  options.probe = optional_text(arguments.probe);
  options.token = optional_text(arguments.token);
  if (!arguments.elf.empty()) {
    symbols::Symbolizer symbolizer = symbols::Symbolizer::load(arguments.elf);
    if (!symbolizer.machine_warning().empty()) log.warn(symbolizer.machine_warning());
    options.symbols = std::make_shared<const RecordSymbols>(std::move(symbolizer));
  }
  return serve(std::move(options), arguments.stats, log);
}

}  // namespace tp::serve
