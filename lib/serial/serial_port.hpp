// A serial port (USB CDC ACM, USB-UART, pseudo-terminal) in raw mode at any baud rate
// (termios2 BOTHER on Linux), locked for this process (TIOCEXCL and flock): another
// program on the same port gets "busy" instead of stealing bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/file_descriptor.hpp"

namespace tp {

class SerialPort {
 public:
  // Throws tp::Error: not_found, permission_denied (with a hint), busy, io_error.
  static SerialPort open(const std::string& path, std::uint32_t baud);

  // Reads what is there within `timeout`: 0 bytes on timeout. Throws Error(io_error) when
  // the device went away.
  std::size_t read(std::span<char> buffer, std::chrono::milliseconds timeout);
  void write(std::string_view bytes);
  // Discards what arrives until `quiet` passes without a byte, or `limit` has passed in all
  // (a peer that never stops talking cannot hold it).
  void drain(std::chrono::milliseconds quiet, std::chrono::milliseconds limit = std::chrono::milliseconds(500));
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  SerialPort(FileDescriptor fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  FileDescriptor fd_;
  std::string path_;
};

// Sets any rate with termios2 (BOTHER). Returns false if the device refuses.
bool set_custom_baud(int fd, std::uint32_t baud) noexcept;

}  // namespace tp
