// The options the fleet tools share: NATS (trace-ship, trace-pull, trace-store: servers,
// credentials and TLS from files, never secrets on the command line, the JetStream domain)
// and ClickHouse (trace-store, trace-query).
#pragma once

#include <CLI/CLI.hpp>

#include "clickhouse/clickhouse_http.hpp"
#include "nats/nats_link.hpp"

namespace tp {

void add_nats_options(CLI::App& app, NatsSettings& settings);
void add_clickhouse_options(CLI::App& app, ClickHouseSettings& settings, std::string& table);

}  // namespace tp
