// RAII owner of a POSIX file descriptor.
#pragma once

#include <unistd.h>

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

}  // namespace tp
