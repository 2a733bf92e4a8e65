// What a server built on trace-serve's (trace-lab) adds to it: routes of its own (JSON APIs,
// pages) and the WebSocket clients' records from channels it opens per view, in place of
// trace-serve's one input. The server keeps what it owns: the socket, Host/Origin, the
// token and its back-off, admission, the Callisto protocol. Everything here runs on the
// io_context thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/log.hpp"
#include "net/asio.hpp"
#include "serve/record_classifier.hpp"
#include "serve/serve_options.hpp"
#include "serve/viewer_assets.hpp"

namespace tp::serve {

class WsClient;

struct HttpAnswer {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};
// Called once, on the io_context thread (post to it from a worker).
using AnswerHttp = std::function<void(HttpAnswer)>;

// What an extension may use of the server.
class ExtensionHost {
 public:
  ExtensionHost() = default;
  ExtensionHost(const ExtensionHost&) = delete;
  ExtensionHost& operator=(const ExtensionHost&) = delete;
  ExtensionHost(ExtensionHost&&) = delete;
  ExtensionHost& operator=(ExtensionHost&&) = delete;
  virtual ~ExtensionHost() = default;
  [[nodiscard]] virtual boost::asio::io_context& io() noexcept = 0;
  [[nodiscard]] virtual KindTable& kinds() noexcept = 0;
  [[nodiscard]] virtual const ServeOptions& options() const noexcept = 0;
  [[nodiscard]] virtual const Logger& log() const noexcept = 0;
};

class ServerExtension {
 public:
  ServerExtension() = default;
  ServerExtension(const ServerExtension&) = delete;
  ServerExtension& operator=(const ServerExtension&) = delete;
  ServerExtension(ServerExtension&&) = delete;
  ServerExtension& operator=(ServerExtension&&) = delete;
  virtual ~ServerExtension() = default;

  // Once, before the server serves.
  virtual void attach(ExtensionHost& host) = 0;
  // A file of its own for a GET of `path` (before the viewer's files), or nullopt.
  [[nodiscard]] virtual std::optional<Asset> asset(std::string_view path) const = 0;
  // A GET of `path` (target: with its query) from an authenticated peer: false when the route
  // is not the extension's; else `answer` is called once.
  virtual bool get(std::string_view path, std::string_view target, const AnswerHttp& answer) = 0;
  // A client sent Start: its records come from now on (client->view() says which). A view
  // it cannot serve is said in an Error (a browser cannot read why an upgrade was refused).
  virtual void client_started(const std::shared_ptr<WsClient>& client) = 0;
  // A client stopped tracing or left.
  virtual void client_stopped(const WsClient& client) = 0;
  // A client's send queue has room again.
  virtual void client_drained(const WsClient& client) = 0;
  // Every 20 ms, and when the server shuts down.
  virtual void tick() = 0;
  virtual void stop() = 0;
};

}  // namespace tp::serve
