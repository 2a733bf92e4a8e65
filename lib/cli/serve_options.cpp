#include "cli/serve_options.hpp"

#include <fmt/format.h>

namespace tp {

void add_serve_options(CLI::App& app, std::string& listen, std::string& token, serve::ServeOptions& server,
                       const ServeOptionTexts& texts) {
  app.add_option("--listen", listen, "ADDR:PORT for HTTP and WebSocket (port 0: any free port, logged)")
      ->default_val(listen)
      ->type_name("ADDR:PORT");
  app.add_option("--token", token, "Require this token (Bearer header, ?token= or Connect.token)")
      ->envname(std::string(texts.token_env));
  app.add_option("--allow-origin", server.allowed_origins, "Also accept browsers from ORIGIN (repeatable; * = any)")
      ->type_name("ORIGIN");
  app.add_option("--max-clients", server.max_clients, fmt::format("Most {} at once", texts.clients))
      ->default_val(server.max_clients)
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--queue-size", server.queue_limit,
                 fmt::format("Per-client send queue in bytes (4x for the viewer's batched form); {}", texts.past_queue))
      ->default_val(server.queue_limit)
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30U));
}

}  // namespace tp
