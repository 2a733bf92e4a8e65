#include "net/tcp_listener.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace tp::net {

namespace asio = boost::asio;
using asio::ip::tcp;

tcp::acceptor listen_tcp(asio::io_context& io, const std::string& address, std::uint16_t port,
                         std::string_view busy_hint) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) throw Error(ExitCode::usage, fmt::format("--listen: '{}' is not an IP address", address));
  const tcp::endpoint endpoint(ip, port);
  tcp::acceptor acceptor(io);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    const std::string where = fmt::format("cannot listen on {}:{}: {}", address, port, ec.message());
    if (ec == asio::error::address_in_use) throw Error(ExitCode::busy, fmt::format("{} ({})", where, busy_hint));
    if (ec == asio::error::access_denied) throw Error(ExitCode::permission_denied, where);
    throw Error(ExitCode::io_error, where);
  }
  return acceptor;
}

}  // namespace tp::net
