#include "lab/lab_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "core/listen_address.hpp"
#include "core/signals.hpp"
#include "lab/lab_extension.hpp"
#include "ports/port_map.hpp"
#include "records/fleet_fields.hpp"
#include "serve/server.hpp"

namespace tp::lab {
namespace {

FleetCommands fleet_commands(const LabOptions& o, const std::string& table) {
  FleetCommands commands;
  commands.trace_pull = fleet_program("trace-pull");
  commands.trace_query = fleet_program("trace-query");
  commands.nats = o.nats;
  commands.stream = o.stream;
  commands.prefix = o.prefix;
  commands.clickhouse = o.clickhouse;
  commands.table = table;
  return commands;
}

void check_names(const LabOptions& o) {
  if (!is_fleet_name(o.table) || !is_fleet_name(o.clickhouse.database)) {
    throw Error(ExitCode::usage, "--table and --database are names of A-Z a-z 0-9 _ -");
  }
  if (!is_fleet_name(o.stream)) throw Error(ExitCode::usage, "--stream is a name of A-Z a-z 0-9 _ -");
  if (o.prefix.empty() || o.prefix.find_first_of("*> \t") != std::string::npos || o.prefix.back() == '.') {
    throw Error(ExitCode::usage, "--subject-prefix is subject tokens without wildcards");
  }
  if (o.live_seconds <= 0) throw Error(ExitCode::usage, "--live-seconds must be more than 0");
}

}  // namespace

ExitCode lab(LabOptions o, const Logger& log) {
  check_names(o);
  stop_on_hangup_and_quit();  // on a closed terminal (SIGHUP) or SIGQUIT too, the views' readers are stopped
  const ListenAddress listen = parse_listen_address(o.listen);
  o.serve.address = listen.address;
  o.serve.port = listen.port;
  if (!o.token.empty()) o.serve.token = o.token;
  o.serve.ports_map_json = PortMap::standard().to_json();
  o.serve.top_interval_s = o.top_interval_s;  // the views' pumps read it (trace-lab has no input of its own)
  const std::string table = o.distributed ? o.table + "_all" : o.table;
  ApiSettings api{o.clickhouse, StoreTable{o.clickhouse.database, table}, o.api_deadline_s};
  MonitorSettings monitor{o.nats, o.stream, o.prefix, o.live_seconds};
  auto extension = std::make_unique<LabExtension>(fleet_commands(o, table), std::move(api), std::move(monitor), log);
  const bool wildcard = o.serve.address == "0.0.0.0" || o.serve.address == "::";
  const std::string host =
      o.serve.address.find(':') != std::string::npos ? fmt::format("[{}]", o.serve.address) : o.serve.address;
  serve::Server server(std::move(o.serve), log, std::move(extension));
  log.info(fmt::format(
      "trace-lab on http://{}:{}/ (boards, search; a board at /board/?board=B&live=1){}", host, server.port(),
      wildcard ? fmt::format("; every address of this host, e.g. http://127.0.0.1:{}/ here", server.port()) : ""));
  server.run();
  if (o.stats) {
    const serve::ServeStats s = server.stats();
    log.report(fmt::format("{} clients ({} refused, {} wrong tokens), {} events sent, {} dropped for slow clients",
                           s.clients, s.rejected_clients, s.wrong_tokens, s.events_sent, s.events_dropped));
  }
  return ExitCode::ok;
}

}  // namespace tp::lab
