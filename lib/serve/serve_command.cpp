#include "serve/serve_command.hpp"

#include <fmt/format.h>

namespace tp::serve {

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

}  // namespace tp::serve
