#include "core/batched_writer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace tp {

BatchedWriter BatchedWriter::open(std::string_view path, bool append) {
  if (path.empty() || path == "-") return BatchedWriter(STDOUT_FILENO, false);
  const std::string owned_path(path);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = ::open(owned_path.c_str(), flags, 0644);
  if (fd < 0) throw_system_error(errno, "cannot open " + owned_path + " for writing");
  return BatchedWriter(fd, true);
}

BatchedWriter::BatchedWriter(int fd, bool owned, std::size_t capacity)
    : fd_(fd, owned), capacity_(capacity), last_flush_us_(monotonic_us()) {
  buffer_.reserve(capacity + capacity / 4);
  // A pipe as large as one batch lets each flush go in one write without waking the
  // reader several times (Linux; best effort, the default 64 KiB still works).
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(capacity));
  }
}

bool BatchedWriter::starts_empty() const noexcept {
  struct stat st {};
  return ::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0;
}

BatchedWriter::~BatchedWriter() {
  try {
    if (fd_.valid()) flush();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; callers flush explicitly.
  }
}

void BatchedWriter::flush() {
  last_flush_us_ = monotonic_us();
  if (buffer_.empty()) return;
  write_all(buffer_.view());
  buffer_.clear();
}

void BatchedWriter::write_large(std::string_view bytes) {
  flush();
  write_all(bytes);
}

void BatchedWriter::write_all(std::string_view bytes) {
  std::string_view rest = bytes;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_.get(), rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) {
        buffer_.clear();
        throw BrokenPipe();
      }
      throw_system_error(errno, "cannot write output");
    }
    ++write_calls_;
    bytes_written_ += static_cast<std::uint64_t>(n);
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool BatchedWriter::reader_gone() const noexcept {
  pollfd p{fd_.get(), POLLOUT, 0};
  // Linux reports POLLERR on the write end of a pipe without readers (pipe(7)).
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;  // NOLINT(hicpp-signed-bitwise)
}

void BatchedWriter::flush_if_stale(std::uint64_t now_us) {
  if (buffer_.empty()) {
    last_flush_us_ = now_us;
    return;
  }
  if (now_us >= last_flush_us_ + max_delay_us_) flush();
}

}  // namespace tp
