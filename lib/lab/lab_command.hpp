// trace-lab's work (docs/tools/trace-lab.md): the fleet's front door, a read-only web server
// over JetStream and ClickHouse built on trace-serve's; so tools/trace-lab is wiring only.
#pragma once

#include <cstdint>
#include <string>

#include "clickhouse/clickhouse_http.hpp"
#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "lab/lab_api.hpp"
#include "nats/nats_link.hpp"
#include "nats/stream_check.hpp"
#include "serve/serve_options.hpp"

namespace tp::lab {

inline constexpr std::uint16_t default_lab_port = 9230;

struct LabOptions {
  std::string listen = "127.0.0.1:" + std::to_string(default_lab_port);
  std::string token;
  serve::ServeOptions serve;  // origins, clients, queues (the address, port and token from the above)
  NatsSettings nats;
  std::string stream{default_stream_name};
  std::string prefix = "trace";
  ClickHouseSettings clickhouse;
  std::string table{default_table};
  double api_deadline_s = ApiSettings{}.deadline_s;  // the default is ApiSettings's
  bool distributed = false;  // trace-store made TABLE_all, a Distributed table over the shards: read that
  double live_seconds = 5;   // a board is live when it had records in the last this many seconds
  // trace-top's snapshots in every view, every this many seconds (0: none): the viewer's CPU
  // load, Durations and Statistics charts. On by default here (trace-serve's is off): the
  // front door is looked at in pictures.
  double top_interval_s = 1;
  bool stats = false;
};

// Serves until SIGINT/SIGTERM. Throws tp::Error (usage, busy) when it cannot start.
ExitCode lab(LabOptions options, const Logger& log);

}  // namespace tp::lab
