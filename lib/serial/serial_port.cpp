#include "serial/serial_port.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace tp {

SerialPort SerialPort::open(const std::string& path, std::uint32_t baud) {
  FileDescriptor fd(::open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == EACCES) {
      throw Error(
          ExitCode::permission_denied,
          fmt::format("{}: permission denied (add yourself to the dialout group, or install tracepipe's udev rules)",
                      path),
          ErrorCode::permission_denied);
    }
    if (err == EBUSY)
      throw Error(ExitCode::busy, fmt::format("{}: in use by another program", path), ErrorCode::probe_in_use);
    throw_system_error(err, path);
  }
  // Only a terminal device takes TIOCEXCL and termios: a file or /dev/null is not "busy".
  if (::isatty(fd.get()) == 0) {
    throw Error(ExitCode::usage, fmt::format("{}: not a serial port (not a terminal device)", path));
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 || ::ioctl(fd.get(), TIOCEXCL) != 0) {
    throw Error(ExitCode::busy, fmt::format("{}: in use by another program (locked)", path), ErrorCode::probe_in_use);
  }
  termios settings{};
  if (::tcgetattr(fd.get(), &settings) != 0) {
    throw Error(ExitCode::io_error, fmt::format("{}: not a serial port ({})", path, std::strerror(errno)));
  }
  ::cfmakeraw(&settings);
  settings.c_cflag |= CLOCAL | CREAD;
  settings.c_cc[VMIN] = 0;
  settings.c_cc[VTIME] = 0;
  if (::tcsetattr(fd.get(), TCSANOW, &settings) != 0) {
    throw Error(ExitCode::io_error, fmt::format("{}: cannot set raw mode ({})", path, std::strerror(errno)));
  }
  if (!set_custom_baud(fd.get(), baud)) {
    throw Error(ExitCode::unsupported, fmt::format("{}: the device refuses {} baud", path, baud),
                ErrorCode::baud_rate_error);
  }
  return SerialPort(std::move(fd), path);
}

std::size_t SerialPort::read(std::span<char> buffer, std::chrono::milliseconds timeout) {
  pollfd descriptor{fd_.get(), POLLIN, 0};
  const int ready = ::poll(&descriptor, 1, static_cast<int>(timeout.count()));
  if (ready < 0 && errno == EINTR) return 0;
  if (ready <= 0) return 0;
  const ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
  if (n > 0) return static_cast<std::size_t>(n);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  throw Error(ExitCode::io_error,
              fmt::format("{}: the device went away ({})", path_, n == 0 ? "end of file" : std::strerror(errno)));
}

void SerialPort::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_.get(), bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      pollfd descriptor{fd_.get(), POLLOUT, 0};
      if (::poll(&descriptor, 1, 1000) <= 0) {
        throw Error(ExitCode::timeout, fmt::format("{}: the device does not take data", path_));
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    throw Error(ExitCode::io_error, fmt::format("{}: the device went away ({})", path_, std::strerror(errno)));
  }
}

void SerialPort::drain(std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
  std::array<char, 4096> buffer{};
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until && read(buffer, quiet) > 0) {
  }
}

}  // namespace tp
