// Internal to lib/serve: one HTTP connection. Serves the viewer's files, and turns a
// request for /ws into a WebSocket client after checking Origin, the token and the
// client limit (RFC 6455 section 4.2).
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>

#include "serve/session_host.hpp"

namespace tp::serve {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(SessionHost& server, tcp::socket socket);
  void start() { read_request(); }

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  void read_request();
  void on_request(const Request& request);
  void upgrade(const Request& request);
  // An extension's GET route (trace-lab's JSON APIs): the token as for a WebSocket.
  void extension_get(const Request& request, std::string_view path);
  enum class TokenCheck { not_needed, accepted, absent, wrong, blocked };
  // The token of a request (Bearer header or ?token=), with the per-address back-off.
  TokenCheck check_token(const Request& request);
  void refuse_token(TokenCheck check, const Request& request, std::string_view where);
  void respond(boost::beast::http::status status, std::string_view content_type, std::string body,
               const Request& request, std::initializer_list<std::pair<std::string_view, std::string_view>> extra = {});

  SessionHost& server_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::string peer_;
  std::string peer_address_;  // without the port: failed tokens are counted per address
};

}  // namespace tp::serve
