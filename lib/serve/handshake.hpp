// The HTTP side of a WebSocket connection (RFC 6455 section 4): the accept key, and the
// checks trace-serve makes before upgrading (the token; Origin and Host: serve/origin_policy).
#pragma once

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
// Every value of `name` in the query, in order (kind=A&kind=B), percent-decoded.
std::vector<std::string> query_parameters(std::string_view target, std::string_view name);
// The path of a request target, without its query.
std::string_view target_path(std::string_view target) noexcept;
// Whether a Sec-WebSocket-Protocol header ("a, b") offers `name` (RFC 6455 section 4.1).
bool offers_subprotocol(std::string_view header, std::string_view name) noexcept;
// "Bearer abc" -> "abc"; nullopt for other schemes.
std::optional<std::string_view> bearer_token(std::string_view authorization) noexcept;

}  // namespace tp::serve
