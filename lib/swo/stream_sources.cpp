#include "swo/stream_sources.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "net/tcp_connect.hpp"

namespace tp::swo {

FileSource::FileSource(const std::string& path, std::uint64_t bytes_per_second)
    : file_(ByteSource::open(path)), pacer_(bytes_per_second), bytes_per_second_(bytes_per_second) {
  facts_.probe = "file";
  facts_.serial = file_.name();
}

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
    : port_(SerialPort::open(path, baud)), baud_(baud) {
  facts_.probe = "serial port";
  facts_.serial = port_.path();
  facts_.baud = baud;
}

PullResult SerialSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  const std::size_t n = port_.read(std::span<char>(reinterpret_cast<char*>(buffer.data()), buffer.size()),
                                   std::chrono::milliseconds(timeout_ms));
  return n == 0 ? PullResult{Pull::timeout, 0} : PullResult{Pull::data, n};
}

std::string SerialSource::description() const {
  return fmt::format("serial port {} at {} bit/s", port_.path(), baud_);
}

TcpSource::TcpSource(const net::TcpEndpoint& endpoint, int connect_timeout_ms)
    : socket_(net::connect_tcp(endpoint, connect_timeout_ms,
                               " (is the SWO server running? OpenOCD needs `swo create ... -output :PORT`)")),
      name_(fmt::format("{}:{}", endpoint.host, endpoint.port)) {
  facts_.probe = "TCP stream";
  facts_.serial = name_;
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
