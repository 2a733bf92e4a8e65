// The HTTP side of a WebSocket connection (RFC 6455 section 4): the accept key, and the
// checks trace-serve makes before upgrading (token, Origin, Host).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tp::serve {

std::string base64_encode(std::string_view bytes);

// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (RFC 6455 section 4.2.2).
std::string websocket_accept_key(std::string_view client_key);

// Compares in time that depends only on the lengths, not on where the texts differ.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// The value of `name` in the query of a request target ("/ws?token=abc&x=1"),
// percent-decoded; nullopt when absent.
std::optional<std::string> query_parameter(std::string_view target, std::string_view name);
// The path of a request target, without its query.
std::string_view target_path(std::string_view target) noexcept;
// "Bearer abc" -> "abc"; nullopt for other schemes.
std::optional<std::string_view> bearer_token(std::string_view authorization) noexcept;

// Which browser origins may open a WebSocket. A request without Origin comes from a
// non-browser client and is allowed; a browser's Origin must be the server's own origin
// (http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT or the listen address),
// http://HOST:PORT for each of `host_names` (the server passes this host's addresses and
// name when it listens beyond loopback with a token), or listed with --allow-origin ("*"
// allows any). Matching the Host header instead would let a DNS-rebinding page through,
// so it is not used.
class OriginPolicy {
 public:
  OriginPolicy(std::string_view listen_address, std::uint16_t port, std::vector<std::string> extra,
               const std::vector<std::string>& host_names = {});
  [[nodiscard]] bool allows(std::optional<std::string_view> origin) const;
  [[nodiscard]] const std::vector<std::string>& allowed() const noexcept { return allowed_; }

 private:
  std::vector<std::string> allowed_;
  bool any_ = false;
};

}  // namespace tp::serve
