// Which browser pages may open a WebSocket, and which names (the Host header) the server
// answers to, independent of I/O.
//
// Threat model: the Origin check stops pages from elsewhere (a web site the user happens to
// visit) from driving the server through the user's browser. It is no barrier to local code,
// which can reach the port directly, so by default every loopback origin on any port is
// admitted (the Callisto client's development page http://localhost:5173, this server's own
// viewer, an SSH tunnel's local end) and file:// (the packaged Callisto Electron app, whose
// pages are local files), and nothing else. A request without Origin comes from a non-browser
// client and is admitted.
//
// The Host check stops DNS rebinding: a page from evil.example that re-resolves its name to
// 127.0.0.1 is, for the browser, same-origin with this server and could read the viewer's
// HTTP answers; its requests name Host: evil.example, which is refused. Admitted names:
// loopback names and addresses, the listen address, this host's addresses and name when it
// listens beyond loopback, and the host of every --allow-origin (a page behind a proxy
// reaches the server by the proxy's name). "*" admits any origin and any host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tp::serve {

// Lower case, and the trailing '/' a user may type removed, except the "//" that ends
// "file://" (the Electron app's origin, which has no host).
std::string normalise_origin(std::string_view origin);
// The host part of a Host header ("name:port", "[v6]:port", "name"), lower case.
std::string host_of_header(std::string_view host_header);
// The host part of an origin ("http://name:port" -> "name"); empty for file:// and the like.
std::string host_of_origin(std::string_view origin);

struct OriginPolicyConfig {
  std::string listen_address;
  std::uint16_t port = 0;
  std::vector<std::string> extra;       // --allow-origin values
  std::vector<std::string> host_names;  // this host's addresses and name (listening beyond loopback)
  bool host_names_are_origins = false;  // with a token: browsers elsewhere may open it by those names
};

class OriginPolicy {
 public:
  explicit OriginPolicy(OriginPolicyConfig config);
  [[nodiscard]] bool allows(std::optional<std::string_view> origin) const;
  // nullopt (no Host header: not a browser) is admitted.
  [[nodiscard]] bool allows_host(std::optional<std::string_view> host_header) const;

 private:
  std::vector<std::string> origins_;  // normalised, exact
  std::vector<std::string> hosts_;
  bool any_ = false;
};

}  // namespace tp::serve
