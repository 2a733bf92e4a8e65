// A listening TCP socket for the tools that serve (palm-recv, trace-serve), with the
// errors every such tool reports the same way: a bad address is a usage error, a port in
// use "busy", a privileged port "permission denied".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "net/asio.hpp"

namespace tp::net {

// Binds ADDRESS:PORT (port 0: any free port) and listens. `busy_hint` ends the message when
// the port is in use, e.g. "another trace-serve runs there?". Throws tp::Error.
boost::asio::ip::tcp::acceptor listen_tcp(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
                                          std::string_view busy_hint);

}  // namespace tp::net
