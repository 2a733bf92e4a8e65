// The options every fleet tool (trace-ship, trace-pull, trace-store) takes for NATS: servers,
// credentials and TLS from files (never secrets on the command line), the JetStream domain.
#pragma once

#include <CLI/CLI.hpp>

#include "fleet/nats_link.hpp"

namespace tp {

void add_nats_options(CLI::App& app, NatsSettings& settings);

}  // namespace tp
