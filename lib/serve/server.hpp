// trace-serve's server: HTTP (the viewer) and WebSocket (the Callisto protocol) on one
// port, Boost.Asio on one thread, records read on another (InputPump), and in command mode
// the capture pipeline run as a child process while clients trace.
#pragma once

#include <cstdint>
#include <memory>

#include "core/log.hpp"
#include "serve/serve_options.hpp"
#include "serve/server_extension.hpp"

namespace tp::serve {

class ServerCore;

class Server {
 public:
  // Binds and listens now; throws tp::Error (busy, permission_denied, usage) if it cannot.
  // With an extension (trace-lab): its routes and views besides the viewer, and no input of
  // the server's own.
  Server(ServeOptions options, const Logger& logger, std::unique_ptr<ServerExtension> extension = nullptr);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  Server(Server&&) = delete;
  Server& operator=(Server&&) = delete;
  ~Server();

  [[nodiscard]] std::uint16_t port() const;
  // Serves until SIGINT/SIGTERM (or, with exit_on_eof, until the input has ended and
  // been delivered).
  void run();
  [[nodiscard]] ServeStats stats() const;

 private:
  std::unique_ptr<ServerCore> core_;  // opaque: keeps Boost.Asio and Beast out of this header
};

}  // namespace tp::serve
