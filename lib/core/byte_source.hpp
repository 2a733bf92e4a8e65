// Byte input from a file, stdin or any file descriptor, with a read timeout so the
// caller can flush pending output when input pauses (docs/design.md "Conventions").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/file_descriptor.hpp"

namespace tp {

enum class ReadStatus { data, timeout, end_of_input, interrupted };

struct ReadResult {
  ReadStatus status;
  std::size_t size = 0;
};

class ByteSource {
 public:
  // "-" means stdin. Throws tp::Error (not_found, permission_denied, ...) with the path.
  static ByteSource open(std::string_view path);
  static ByteSource from_fd(int fd, std::string name, bool owned);
  // The process started with stdin closed (/dev/null was opened in its place): open("-")
  // then says it cannot read stdin (Error io_error) instead of reading nothing.
  static void stdin_was_closed() noexcept;

  // Reads what is available (at most buffer.size()). timeout_ms < 0 waits forever.
  // With follow(true), end of a regular file waits for it to grow instead. A regular file
  // found shorter than what was read of it (truncated meanwhile) is Error(io_error).
  ReadResult read(std::span<std::uint8_t> buffer, int timeout_ms);

  void follow(bool enabled) noexcept { follow_ = enabled; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // Size of a regular file (for progress), if known.
  [[nodiscard]] std::optional<std::uint64_t> size() const noexcept { return size_; }
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  // A regular file not followed, with a size (procfs files say 0): it can be read at any
  // offset (pread), e.g. by several threads.
  [[nodiscard]] bool seekable() const noexcept { return regular_ && !follow_ && size_.value_or(0) != 0; }
  // Where read() goes on from (a seekable source read in part at offsets).
  void seek_to(std::uint64_t offset);
  // The descriptor, for reading at offsets; the source keeps owning it.
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  struct Range {
    std::uint64_t begin;
    std::uint64_t end;
  };
  // A seekable source's bytes from its file offset (stdin redirected from a file may have
  // been read from already) to its size when opened.
  [[nodiscard]] Range unread_range() const noexcept;

 private:
  ByteSource(FileDescriptor fd, std::string name);
  // At the end of a regular file: throws Error(io_error) if it is now shorter than what was read.
  void refuse_truncation() const;

  FileDescriptor fd_;
  std::string name_;
  std::optional<std::uint64_t> size_;
  bool regular_ = false;
  bool follow_ = false;
  std::uint64_t bytes_read_ = 0;
};

// Reads up to `size` bytes of the file `fd` at `offset` (pread: its file offset is left
// alone, so threads may share it); fewer only at the end of the file. Throws tp::Error.
std::size_t read_at(int fd, char* into, std::size_t size, std::uint64_t offset);

}  // namespace tp
