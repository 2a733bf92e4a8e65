// Internal to lib/serve: what a session (an HTTP connection, a WebSocket client) may ask of
// the server, and nothing more. ServerCore implements it; sessions never reach into the
// server's state. Everything here runs on the io_context thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/log.hpp"
#include "net/asio.hpp"
#include "serve/admission.hpp"
#include "serve/protocol.hpp"
#include "serve/serve_options.hpp"

namespace tp::serve {

namespace asio = boost::asio;
using asio::ip::tcp;

class WsClient;
class ServerExtension;

// Connections that have not shown the token (when one is set) have a pool of their own and
// this long to show it.
inline constexpr std::size_t max_unauthenticated_connections = 32;
inline constexpr auto authentication_deadline = std::chrono::seconds(10);

class SessionHost {
 public:
  SessionHost() = default;
  SessionHost(const SessionHost&) = delete;
  SessionHost& operator=(const SessionHost&) = delete;
  SessionHost(SessionHost&&) = delete;
  SessionHost& operator=(SessionHost&&) = delete;
  virtual ~SessionHost() = default;

  // What the server was told (--token, --max-clients, the queue and message limits).
  [[nodiscard]] virtual const ServeOptions& options() const noexcept = 0;
  [[nodiscard]] virtual const Logger& log() const noexcept = 0;
  [[nodiscard]] virtual bool stopping() const noexcept = 0;
  [[nodiscard]] virtual bool command_mode() const noexcept = 0;

  // Protocol answers.
  [[nodiscard]] virtual std::string hello(std::string_view timestamp) const = 0;
  [[nodiscard]] virtual std::string meta() const = 0;
  [[nodiscard]] virtual StatusInfo status_for(const ConnectRequest& connect) const = 0;
  [[nodiscard]] virtual std::variant<ClientMessage, ProtocolError> parse_client_message(std::string_view text) = 0;
  // The kind bits of SetFilter.event_types; names the server does not know yet go to
  // `unknown` (nothing is added). kinds_generation() changes when the input adds a kind.
  [[nodiscard]] virtual std::uint64_t kind_mask(const std::vector<std::string>& names,
                                                std::vector<std::string>& unknown) const = 0;
  [[nodiscard]] virtual std::uint64_t kinds_generation() const noexcept = 0;

  // Admission: origins, the token's per-address back-off, the connection pools.
  [[nodiscard]] virtual bool origin_allowed(std::optional<std::string_view> origin) const = 0;
  [[nodiscard]] virtual bool host_allowed(std::optional<std::string_view> host) const = 0;
  // A browser's request refused for its Origin or Host: logged once per value without -v
  // (what was refused and the flag that admits it), then only with -v.
  virtual void refused_browser(std::string_view what, std::string_view peer, std::string_view advice) = 0;
  [[nodiscard]] virtual std::uint64_t token_blocked_for_us(const std::string& address) const = 0;
  virtual void token_accepted(const std::string& address) = 0;
  // A wrong token from that address: counted for its back-off, and logged.
  virtual void wrong_token(const std::string& address, std::string_view where) = 0;
  [[nodiscard]] virtual bool take_slot(Slot slot) noexcept = 0;
  [[nodiscard]] virtual bool promote_slot() noexcept = 0;
  virtual void give_back_slot(Slot slot) noexcept = 0;
  virtual void client_refused() noexcept = 0;

  // A WebSocket client's life.
  [[nodiscard]] virtual std::uint64_t next_client_id() noexcept = 0;
  virtual void client_opened(const std::shared_ptr<WsClient>& client) = 0;
  virtual void client_started(WsClient& client, const StartRequest& request) = 0;
  virtual void client_stopped(WsClient& client) = 0;
  // The client's send queue took out what it wrote: it has room again.
  virtual void client_drained(WsClient& client) = 0;
  // trace-lab's routes and views; nullptr for trace-serve.
  [[nodiscard]] virtual ServerExtension* extension() noexcept = 0;
  // The client is gone; its final counts go into the server's.
  virtual void client_closed(const std::shared_ptr<WsClient>& client) = 0;
  virtual void events_sent(std::uint64_t events) noexcept = 0;
};

}  // namespace tp::serve
