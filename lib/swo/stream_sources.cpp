#include "swo/stream_sources.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace tp::swo {

FileSource::FileSource(const std::string& path, std::uint64_t bytes_per_second)
    : file_(ByteSource::open(path)), pacer_(bytes_per_second), bytes_per_second_(bytes_per_second) {}

PullResult FileSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  const std::uint64_t allowed = pacer_.await(buffer.size(), 1, timeout_ms);
  if (allowed == 0) return {Pull::timeout, 0};
  const ReadResult result = file_.read(buffer.first(allowed), timeout_ms);
  switch (result.status) {
    case ReadStatus::data:
      pacer_.sent(result.size);
      return {Pull::data, result.size};
    case ReadStatus::end_of_input:
      return {Pull::end, 0};
    default:
      return {Pull::timeout, 0};
  }
}

std::string FileSource::description() const {
  return bytes_per_second_ == 0 ? fmt::format("file {}", file_.name())
                                : fmt::format("file {} at {} bytes/s", file_.name(), bytes_per_second_);
}

SerialSource::SerialSource(const std::string& path, std::uint32_t baud)
    : port_(SerialPort::open(path, baud)), baud_(baud) {}

PullResult SerialSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  const std::size_t n = port_.read(std::span<char>(reinterpret_cast<char*>(buffer.data()), buffer.size()),
                                   std::chrono::milliseconds(timeout_ms));
  return n == 0 ? PullResult{Pull::timeout, 0} : PullResult{Pull::data, n};
}

std::string SerialSource::description() const {
  return fmt::format("serial port {} at {} bit/s", port_.path(), baud_);
}

TcpEndpoint parse_tcp_endpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) {
    throw Error(ExitCode::usage, fmt::format("--tcp '{}': expected HOST:PORT (e.g. localhost:3443)", text));
  }
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host.empty() ? std::string("localhost") : host, std::string(text.substr(colon + 1))};
}

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

TcpSource::TcpSource(const TcpEndpoint& endpoint, int connect_timeout_ms)
    : name_(fmt::format("{}:{}", endpoint.host, endpoint.port)) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(endpoint.host.c_str(), endpoint.port.c_str(), &hints, &found);
  if (rc != 0) throw Error(ExitCode::not_found, fmt::format("{}: {}", name_, gai_strerror(rc)));
  int last_error = ECONNREFUSED;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    FileDescriptor fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    last_error = connect_with_timeout(fd.get(), *a, connect_timeout_ms);
    if (last_error == 0) {
      socket_ = std::move(fd);
      break;
    }
  }
  ::freeaddrinfo(found);
  if (socket_.valid()) return;
  if (last_error == ETIMEDOUT) {
    throw Error(ExitCode::timeout, fmt::format("{}: no answer within {} ms", name_, connect_timeout_ms),
                "TARGET_NOT_RESPONDING");
  }
  throw Error(ExitCode::not_found,
              fmt::format("{}: {} (is the SWO server running? OpenOCD needs `swo create ... -output :PORT`)", name_,
                          std::strerror(last_error)),
              "PROBE_NOT_FOUND");
}

PullResult TcpSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  pollfd p{socket_.get(), POLLIN, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready == 0 || (ready < 0 && errno == EINTR)) return {Pull::timeout, 0};
  const ssize_t n = ::read(socket_.get(), buffer.data(), buffer.size());
  if (n > 0) return {Pull::data, static_cast<std::size_t>(n)};
  if (n == 0) return {Pull::end, 0};
  if (errno == EAGAIN || errno == EINTR) return {Pull::timeout, 0};
  throw Error(ExitCode::io_error, fmt::format("{}: {}", name_, std::strerror(errno)));
}

std::string TcpSource::description() const {
  return fmt::format("TCP stream from {}", name_);
}

}  // namespace tp::swo
