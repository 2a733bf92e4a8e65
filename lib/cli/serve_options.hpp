// The options of the tools that serve browsers through lib/serve (trace-serve, trace-lab): the
// address, the token, the origins admitted, how many clients at once, each client's queue.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "serve/serve_options.hpp"

namespace tp {

// What differs between the tools: the token's environment variable, what a client is called
// and what happens to one that falls behind its queue.
struct ServeOptionTexts {
  std::string_view token_env;   // e.g. TRACE_SERVE_TOKEN
  std::string_view clients;     // "WebSocket clients"
  std::string_view past_queue;  // "past it records are dropped"
};

// `listen` and `token` as the command line gives them (each tool makes them the server's
// address, port and token); origins, clients and the queue go into `server`.
void add_serve_options(CLI::App& app, std::string& listen, std::string& token, serve::ServeOptions& server,
                       const ServeOptionTexts& texts);

}  // namespace tp
