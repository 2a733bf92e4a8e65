// --listen ADDR:PORT, shared by the tools that serve (palm-recv, trace-serve).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

struct ListenAddress {
  std::string address;
  std::uint16_t port = 0;
};

// "127.0.0.1:9230", "[::1]:9230", ":9230" (the default address); port 0 = any free port.
// Throws tp::Error(usage).
ListenAddress parse_listen_address(std::string_view text, std::string_view default_address = "127.0.0.1");

}  // namespace tp
