#include "serve/http_session.hpp"

#include <fmt/format.h>

#include <boost/beast/websocket/rfc6455.hpp>
#include <chrono>

#include "core/clock.hpp"
#include "serve/broadcast.hpp"
#include "serve/handshake.hpp"
#include "serve/origin_policy.hpp"
#include "serve/server_extension.hpp"
#include "serve/viewer_assets.hpp"
#include "serve/ws_client.hpp"

namespace tp::serve {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {
constexpr auto request_timeout = std::chrono::seconds(10);
constexpr std::size_t header_limit = 16U << 10U;
constexpr std::size_t body_limit = 16U << 10U;
// The viewer loads only its own files and talks only to this server.
constexpr std::string_view content_security_policy =
    "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data: blob:; style-src 'self'; "
    "script-src 'self'; frame-ancestors 'none'";
std::string_view view(beast::string_view text) noexcept {
  return {text.data(), text.size()};
}
beast::string_view beast_view(std::string_view text) noexcept {
  return {text.data(), text.size()};
}
}  // namespace

HttpSession::HttpSession(SessionHost& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
  boost::system::error_code ec;
  const auto endpoint = stream_.socket().remote_endpoint(ec);
  peer_address_ = ec ? "?" : endpoint.address().to_string();
  peer_ = ec ? "?" : fmt::format("{}:{}", peer_address_, endpoint.port());
}

void HttpSession::read_request() {
  parser_.emplace();
  parser_->header_limit(header_limit);
  parser_->body_limit(body_limit);
  stream_.expires_after(request_timeout);
  http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return;
    }
    if (ec) {
      self->server_.log().verbose(fmt::format("HTTP from {}: {}", self->peer_, ec.message()));
      Request bad;
      bad.version(11);
      return self->respond(http::status::bad_request, "text/plain", ec.message() + "\n", bad);
    }
    self->on_request(self->parser_->get());
  });
}

void HttpSession::on_request(const Request& request) {
  if (server_.stopping()) return respond(http::status::service_unavailable, "text/plain", "shutting down\n", request);
  if (const auto host = request.find(http::field::host);
      host != request.end() && !server_.host_allowed(view(host->value()))) {
    const std::string name = host_of_header(view(host->value()));
    const std::string advice =
        fmt::format("if this server is meant to be reached by that name, admit it with --allow-origin http://{}", name);
    server_.client_refused();
    server_.refused_browser(fmt::format("Host {} is not a name of this server (DNS rebinding?)", name), peer_, advice);
    return respond(http::status::forbidden, "text/plain",
                   fmt::format("Host {} is not a name of this server: {}\n", name, advice), request);
  }
  const std::string_view path = target_path(view(request.target()));
  if (path == "/ws") {
    if (beast::websocket::is_upgrade(request)) return upgrade(request);
    return respond(http::status::upgrade_required, "text/plain", "this is a WebSocket endpoint\n", request,
                   {{"Upgrade", "websocket"}});
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    return respond(http::status::method_not_allowed, "text/plain", "GET only\n", request, {{"Allow", "GET, HEAD"}});
  }
  // An extension's own files first (its "/"), then the viewer's, then its routes.
  ServerExtension* const extension = server_.extension();
  if (extension != nullptr) {
    if (const auto asset = extension->asset(path)) {
      return respond(http::status::ok, asset->content_type, std::string(asset->body), request,
                     {{"Content-Security-Policy", content_security_policy}});
    }
  }
  const std::string_view wanted = path == "/" ? "/index.html" : path;
  for (const Asset& asset : viewer_assets()) {
    if (asset.path == wanted) {
      return respond(http::status::ok, asset.content_type, std::string(asset.body), request,
                     {{"Content-Security-Policy", content_security_policy}});
    }
  }
  if (extension != nullptr) return extension_get(request, path);
  respond(http::status::not_found, "text/plain", "not found\n", request);
}

void HttpSession::upgrade(const Request& request) {
  const auto header = [&](std::string_view name) -> std::optional<std::string_view> {
    const auto found = request.find(beast_view(name));
    if (found == request.end()) return std::nullopt;
    return std::string_view(found->value().data(), found->value().size());
  };
  const auto refuse = [&](http::status status, std::string reason) {
    server_.client_refused();
    server_.log().verbose(fmt::format("WebSocket from {} refused: {}", peer_, reason));
    respond(status, "text/plain", reason + "\n", request);
  };
  if (header("Sec-WebSocket-Version").value_or("") != "13") {
    server_.client_refused();
    return respond(http::status::upgrade_required, "text/plain", "WebSocket version 13 only\n", request,
                   {{"Sec-WebSocket-Version", "13"}});
  }
  const auto key = header("Sec-WebSocket-Key");
  if (!key || key->size() != 24) return refuse(http::status::bad_request, "missing or malformed Sec-WebSocket-Key");
  if (const auto origin = header("Origin"); !server_.origin_allowed(origin)) {
    const std::string what = fmt::format("origin {} is not allowed", *origin);
    const std::string advice = fmt::format("admit it with --allow-origin '{}'", normalise_origin(*origin));
    server_.client_refused();
    server_.refused_browser(what, peer_, advice);
    return respond(http::status::forbidden, "text/plain", fmt::format("{}: {}\n", what, advice), request);
  }
  const TokenCheck token = check_token(request);
  if (token == TokenCheck::blocked || token == TokenCheck::wrong) {
    server_.client_refused();
    return refuse_token(token, request, "in the upgrade request");
  }
  const bool authenticated = token != TokenCheck::absent;
  const Slot slot = authenticated ? Slot::client : Slot::unauthenticated;
  if (!server_.take_slot(slot)) {
    return refuse(http::status::service_unavailable,
                  authenticated ? fmt::format("too many clients (--max-clients {})", server_.options().max_clients)
                                : fmt::format("too many connections waiting to show the token (at most {})",
                                              max_unauthenticated_connections));
  }
  const bool batched = offers_subprotocol(header("Sec-WebSocket-Protocol").value_or(""), batch_subprotocol);
  auto response = std::make_shared<std::string>(
      fmt::format("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: {}\r\n{}Server: trace-serve\r\n\r\n",
                  websocket_accept_key(*key),
                  batched ? fmt::format("Sec-WebSocket-Protocol: {}\r\n", batch_subprotocol) : std::string()));
  stream_.expires_never();
  asio::async_write(stream_.socket(), asio::buffer(*response),
                    [self = shared_from_this(), response, slot, batched, target = std::string(view(request.target()))](
                        beast::error_code ec, std::size_t) mutable {
                      if (ec || self->server_.stopping()) return self->server_.give_back_slot(slot);
                      const auto early = self->buffer_.data();
                      const std::string early_bytes(static_cast<const char*>(early.data()), early.size());
                      auto client = std::make_shared<WsClient>(self->server_, self->stream_.release_socket(),
                                                               self->peer_, slot, batched, std::move(target));
                      self->server_.client_opened(client);
                      client->start(early_bytes);
                    });
}

HttpSession::TokenCheck HttpSession::check_token(const Request& request) {
  if (!server_.options().token) return TokenCheck::not_needed;
  if (server_.token_blocked_for_us(peer_address_) > 0) return TokenCheck::blocked;
  std::optional<std::string> presented = query_parameter(view(request.target()), "token");
  if (const auto authorization = request.find(http::field::authorization); authorization != request.end()) {
    if (const auto bearer = bearer_token(view(authorization->value()))) presented = std::string(*bearer);
  }
  if (!presented) return TokenCheck::absent;
  if (!constant_time_equal(*presented, *server_.options().token)) return TokenCheck::wrong;
  server_.token_accepted(peer_address_);
  return TokenCheck::accepted;
}

// A wrong token is counted for the address's back-off; a blocked address is told when to retry.
void HttpSession::refuse_token(TokenCheck check, const Request& request, std::string_view where) {
  if (check == TokenCheck::blocked) {
    const std::string seconds = std::to_string((server_.token_blocked_for_us(peer_address_) + 999'999) / 1'000'000);
    return respond(http::status::too_many_requests, "text/plain",
                   fmt::format("too many wrong tokens from {}: retry in {} s\n", peer_address_, seconds), request,
                   {{"Retry-After", seconds}});
  }
  if (check == TokenCheck::wrong) server_.wrong_token(peer_address_, where);
  server_.log().verbose(
      fmt::format("request from {} refused: {} token", peer_, check == TokenCheck::wrong ? "wrong" : "no"));
  respond(http::status::unauthorized, "text/plain", check == TokenCheck::wrong ? "wrong token\n" : "token required\n",
          request);
}

void HttpSession::extension_get(const Request& request, std::string_view path) {
  // A page of another origin may send the request (a browser says so in Origin) but must not
  // read the fleet through this one.
  if (const auto origin = request.find(http::field::origin);
      origin != request.end() && !server_.origin_allowed(view(origin->value()))) {
    server_.refused_browser(fmt::format("origin {} is not allowed", view(origin->value())), peer_,
                            fmt::format("admit it with --allow-origin '{}'", normalise_origin(view(origin->value()))));
    return respond(http::status::forbidden, "application/json", R"({"error":"origin not allowed"})", request);
  }
  if (const TokenCheck token = check_token(request); token != TokenCheck::not_needed && token != TokenCheck::accepted) {
    return refuse_token(token, request, "in a request");
  }
  const bool head = request.method() == http::verb::head;
  auto keep = std::make_shared<Request>(request);  // the answer may come later, from a worker
  const bool taken = server_.extension()->get(
      path, view(request.target()), [self = shared_from_this(), keep, head](serve::HttpAnswer answer) {
        if (head) keep->method(http::verb::head);
        self->respond(static_cast<http::status>(answer.status), answer.content_type, std::move(answer.body), *keep);
      });
  if (!taken) respond(http::status::not_found, "text/plain", "not found\n", request);
}

void HttpSession::respond(http::status status, std::string_view content_type, std::string body, const Request& request,
                          std::initializer_list<std::pair<std::string_view, std::string_view>> extra) {
  auto response = std::make_shared<http::response<http::string_body>>(status, request.version());
  response->set(http::field::server, "trace-serve");
  response->set(http::field::content_type, beast_view(content_type));
  response->set(http::field::cache_control, "no-cache");
  response->set("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : extra) response->set(beast_view(name), beast_view(value));
  const bool head = request.method() == http::verb::head;
  const std::size_t size = body.size();
  if (!head) response->body() = std::move(body);
  response->prepare_payload();
  if (head) response->content_length(size);
  const bool keep_alive = request.keep_alive() && status == http::status::ok;
  response->keep_alive(keep_alive);
  http::async_write(stream_, *response,
                    [self = shared_from_this(), response, keep_alive](beast::error_code ec, std::size_t) {
                      if (ec) return;
                      if (keep_alive) return self->read_request();
                      beast::error_code ignored;
                      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                    });
}

}  // namespace tp::serve
