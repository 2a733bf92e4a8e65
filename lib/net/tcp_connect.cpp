#include "net/tcp_connect.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace tp::net {
namespace {

// A non-blocking connect that waits at most timeout_ms; returns the errno (0 = connected).
int connect_with_timeout(int fd, const addrinfo& address, int timeout_ms) {
  if (::connect(fd, address.ai_addr, address.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd p{fd, POLLOUT, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready == 0) return ETIMEDOUT;
  if (ready < 0) return errno;
  int error = 0;
  socklen_t length = sizeof error;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
  return error;
}

}  // namespace

TcpEndpoint parse_tcp_endpoint(std::string_view text, std::string_view option) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) {
    throw Error(ExitCode::usage, fmt::format("{} '{}': expected HOST:PORT (e.g. localhost:3333)", option, text));
  }
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host.empty() ? std::string("localhost") : host, std::string(text.substr(colon + 1))};
}

FileDescriptor connect_tcp(const TcpEndpoint& endpoint, int timeout_ms, std::string_view refused_hint) {
  const std::string name = fmt::format("{}:{}", endpoint.host, endpoint.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(endpoint.host.c_str(), endpoint.port.c_str(), &hints, &found);
  if (rc != 0) throw Error(ExitCode::not_found, fmt::format("{}: {}", name, gai_strerror(rc)));
  int last_error = ECONNREFUSED;
  FileDescriptor connected;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    FileDescriptor fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    last_error = connect_with_timeout(fd.get(), *a, timeout_ms);
    if (last_error == 0) {
      connected = std::move(fd);
      break;
    }
  }
  ::freeaddrinfo(found);
  if (connected.valid()) {
    const int on = 1;  // request/response traffic: no Nagle delay
    ::setsockopt(connected.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return connected;
  }
  if (last_error == ETIMEDOUT) {
    throw Error(ExitCode::timeout, fmt::format("{}: no answer within {} ms", name, timeout_ms),
                ErrorCode::target_not_responding);
  }
  throw Error(ExitCode::not_found, fmt::format("{}: {}{}", name, std::strerror(last_error), refused_hint),
              ErrorCode::probe_not_found);
}

}  // namespace tp::net
