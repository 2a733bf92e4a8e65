#include "core/byte_source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "core/error.hpp"

namespace tp {
namespace {

ReadResult wait_for_growth(int timeout_ms) {
  // Regular files are always "readable" to poll(2), so following one means sleeping.
  const int wait_ms = timeout_ms < 0 ? 50 : (timeout_ms < 50 ? timeout_ms : 50);
  const timespec pause{0, static_cast<long>(wait_ms) * 1'000'000L};
  if (::nanosleep(&pause, nullptr) != 0 && errno == EINTR) return {ReadStatus::interrupted};
  return {ReadStatus::timeout};
}

}  // namespace

ByteSource::ByteSource(FileDescriptor fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode)) {
    regular_ = true;
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

namespace {
bool g_stdin_closed = false;  // set once at start, before any thread
}  // namespace

void ByteSource::stdin_was_closed() noexcept {
  g_stdin_closed = true;
}

ByteSource ByteSource::open(std::string_view path) {
  if (path == "-" || path.empty()) {
    if (g_stdin_closed) throw Error(ExitCode::io_error, "cannot read stdin: it is closed");
    return from_fd(STDIN_FILENO, "<stdin>", false);
  }
  const std::string owned_path(path);
  const int fd = ::open(owned_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open " + owned_path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(ExitCode::bad_input, owned_path + ": is a directory");
  }
  return ByteSource(FileDescriptor(fd), owned_path);
}

ByteSource ByteSource::from_fd(int fd, std::string name, bool owned) {
  return ByteSource(FileDescriptor(fd, owned), std::move(name));
}

ByteSource::Range ByteSource::unread_range() const noexcept {
  const off_t here = ::lseek(fd_.get(), 0, SEEK_CUR);
  const std::uint64_t begin = here > 0 ? static_cast<std::uint64_t>(here) : 0;
  return {begin, std::max(begin, size_.value_or(0))};
}

ReadResult ByteSource::read(std::span<std::uint8_t> buffer, int timeout_ms) {
  if (!regular_ && timeout_ms >= 0) {
    pollfd pfd{fd_.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, timeout_ms);
    if (ready == 0) return {ReadStatus::timeout};
    if (ready < 0) {
      if (errno == EINTR) return {ReadStatus::interrupted};
      throw_system_error(errno, "cannot poll " + name_);
    }
  }
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
    if (n > 0) {
      bytes_read_ += static_cast<std::uint64_t>(n);
      return {ReadStatus::data, static_cast<std::size_t>(n)};
    }
    if (n == 0) {
      if (regular_) refuse_truncation();
      if (follow_ && regular_) return wait_for_growth(timeout_ms);
      return {ReadStatus::end_of_input};
    }
    if (errno == EINTR) return {ReadStatus::interrupted};
    if (errno == EAGAIN) return {ReadStatus::timeout};
    throw_system_error(errno, "cannot read " + name_);
  }
}

void ByteSource::refuse_truncation() const {
  // At the end of a regular file: ended there, or cut shorter than what was read already
  // (logrotate's copytruncate), which would otherwise end the input quietly, lines lost.
  // A file that said 0 bytes when opened is procfs's kind (st_size 0 whatever it holds).
  if (size_.value_or(0) == 0) return;
  const off_t here = ::lseek(fd_.get(), 0, SEEK_CUR);
  struct stat st {};
  if (here < 0 || ::fstat(fd_.get(), &st) != 0 || st.st_size >= here) return;
  throw Error(ExitCode::io_error,
              fmt::format("{}: file truncated while read (now {} bytes, {} read)", name_, st.st_size, here));
}

void ByteSource::seek_to(std::uint64_t offset) {
  if (::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_SET) < 0) throw_system_error(errno, "cannot seek " + name_);
}

std::size_t read_at(int fd, char* into, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, into + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_system_error(errno, "cannot read the input");
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace tp
