// Outgoing TCP connections with a bounded wait, for the tools that talk to a server
// (swo-capture --tcp, eko-collect --gdb-server).
#pragma once

#include <string>
#include <string_view>

#include "core/file_descriptor.hpp"

namespace tp::net {

// HOST:PORT, [IPv6]:PORT or :PORT (localhost).
struct TcpEndpoint {
  std::string host;
  std::string port;
};

// `option` names the flag in the usage error, e.g. "--tcp". Throws Error(usage).
TcpEndpoint parse_tcp_endpoint(std::string_view text, std::string_view option);

// A connected, non-blocking socket. Nothing listening -> Error(not_found) with
// `refused_hint` appended; no answer within timeout_ms -> Error(timeout).
FileDescriptor connect_tcp(const TcpEndpoint& endpoint, int timeout_ms, std::string_view refused_hint);

}  // namespace tp::net
