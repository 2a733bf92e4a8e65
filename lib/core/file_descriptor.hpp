// RAII owner of a POSIX file descriptor.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace tp {

class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd, bool owned = true) noexcept : fd_(fd), owned_(owned) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), owned_(std::exchange(other.owned_, false)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
      owned_ = std::exchange(other.owned_, false);
    }
    return *this;
  }
  ~FileDescriptor() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  // Gives up ownership: the caller closes it.
  int release() noexcept {
    owned_ = false;
    return std::exchange(fd_, -1);
  }
  void reset() noexcept {
    if (owned_ && fd_ >= 0) ::close(fd_);
    fd_ = -1;
    owned_ = false;
  }

 private:
  int fd_ = -1;
  bool owned_ = false;
};

// Makes `fd`, if it is a pipe, hold `bytes` (Linux's F_SETPIPE_SZ; best effort: up to
// /proc/sys/fs/pipe-max-size unprivileged, the default 64 KiB still works): a writer's batch
// goes in one write without waking the reader several times, and a fast writer keeps the
// pipe filling while its reader works.
inline void grow_pipe(int fd, std::size_t bytes) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(bytes));
}

}  // namespace tp
