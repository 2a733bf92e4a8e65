// Byte-stream capture sources: a file (optionally paced as if it were arriving live), a
// serial port on the SWO pin (NRZ at any rate), and a TCP stream served by OpenOCD,
// orbuculum (3443), pyOCD (3443) or a J-Link GDB server (2332).
#pragma once

#include <string>

#include "core/byte_source.hpp"
#include "core/file_descriptor.hpp"
#include "net/tcp_connect.hpp"
#include "serial/serial_port.hpp"
#include "swo/pacer.hpp"
#include "swo/swo_source.hpp"

namespace tp::swo {

class FileSource final : public SwoSource {
 public:
  // bytes_per_second > 0 paces the file (--realtime).
  FileSource(const std::string& path, std::uint64_t bytes_per_second);
  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override;
  [[nodiscard]] std::string description() const override;

 private:
  ByteSource file_;
  Pacer pacer_;
  std::uint64_t bytes_per_second_;
};

class SerialSource final : public SwoSource {
 public:
  SerialSource(const std::string& path, std::uint32_t baud);
  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override;
  [[nodiscard]] std::string description() const override;

 private:
  SerialPort port_;
  std::uint32_t baud_;
};

class TcpSource final : public SwoSource {
 public:
  // Connects within connect_timeout_ms; throws Error(not_found) when nothing listens,
  // Error(timeout) when the host does not answer.
  TcpSource(const net::TcpEndpoint& endpoint, int connect_timeout_ms);
  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override;
  [[nodiscard]] std::string description() const override;

 private:
  FileDescriptor socket_;
  std::string name_;
};

}  // namespace tp::swo
