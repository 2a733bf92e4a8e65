// Batched output: records are appended to a large buffer that is written with few
// write(2) calls. The owner flushes when the buffer fills, when input pauses and at
// exit; flush_if_stale() bounds how long bytes may wait while input trickles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_descriptor.hpp"
#include "core/out_buffer.hpp"

namespace tp {

class BatchedWriter {
 public:
  static constexpr std::size_t default_capacity = std::size_t{1} << 20U;
  static constexpr std::uint64_t default_max_delay_us = 50'000;
  // Turns one batch of what the owner appended into the bytes written (appended to `out`).
  // It is called from two threads at once (see write_in_background): it must be safe so.
  using BatchEncoder = std::function<void(std::string_view batch, OutBuffer& out)>;

  // "-" or empty = stdout. append=false truncates an existing file. `inputs`: the files the
  // tool reads ("-" = stdin); an output that is one of them (the same device and inode) is
  // refused with Error(usage) before it is opened, since opening it would truncate (or, with
  // append, grow) what is about to be read.
  static BatchedWriter open(std::string_view path, bool append, std::initializer_list<std::string_view> inputs = {});
  // The process started with stdout closed (/dev/null was opened in its place): open("-")
  // then says it cannot write stdout (Error io_error) instead of writing into nothing.
  static void stdout_was_closed() noexcept;
  explicit BatchedWriter(int fd, bool owned = false, std::size_t capacity = default_capacity);
  BatchedWriter(BatchedWriter&&) noexcept;
  BatchedWriter& operator=(BatchedWriter&&) noexcept;
  BatchedWriter(const BatchedWriter&) = delete;
  BatchedWriter& operator=(const BatchedWriter&) = delete;
  ~BatchedWriter();

  // The buffer to append to; call commit() after appending a whole record.
  [[nodiscard]] OutBuffer& buffer() noexcept { return buffer_; }
  void write(std::string_view bytes) {
    if (bytes.size() >= capacity_ / 2 && !background_ && !encode_) return write_large(bytes);  // a batch already
    buffer_.append(bytes);
    commit();
  }
  // Marks the end of a record: flushes once the buffer is past its capacity (in the
  // background after write_in_background).
  void commit() {
    if (buffer_.size() >= capacity_) flush_full_batch();
  }
  // Every byte appended so far is written when this returns (batches handed to the
  // background first); a write error of any of them is thrown here.
  void flush();
  // From now on what the owner appends is not the output but its input, and a thread of
  // its own makes and writes the output while the owner fills the next batch: each batch
  // goes through `encode`, and what that makes is written, in order (itm-decode hands its
  // records over decoded, to be formatted and copied into the pipe on a second core).
  // Batches are smaller (256 KB) and four may queue; the thread encodes the ones it is
  // handed, and a full batch that finds the queue full is encoded by the owner instead, so
  // that both cores work when encoding costs more than what makes the batches. The thread
  // blocks every signal (they stay the owner's). A failed write, or an exception from
  // `encode`, is thrown by the next commit() that hands a batch over, or by flush().
  void write_in_background(BatchEncoder encode);
  // As write_in_background, but each batch is encoded on the owner's thread when it is
  // written: the same bytes with no second thread (a test comparing the two, a fuzzer).
  void encode_batches(BatchEncoder encode);
  // Flushes if the oldest pending byte is older than max_delay_us.
  void flush_if_stale(std::uint64_t now_us);
  [[nodiscard]] bool has_pending() const noexcept { return !buffer_.empty(); }
  // False when the output is a regular file that already has content (for a CSV header
  // written only once, whatever appends later).
  [[nodiscard]] bool starts_empty() const noexcept;
  // Empties a regular-file output that holds only a blank line ("\n" or "\r\n").
  void clear_if_blank() const;
  // True when the output is a pipe whose reader has gone (`tool | head` after head ended):
  // a tool that writes only now and then (a watch waiting for news) asks this while idle,
  // instead of learning it at its next write, which may never come.
  [[nodiscard]] bool reader_gone() const noexcept;
  // Bytes and write(2) calls so far (a batch being written in the background is counted
  // once written).
  [[nodiscard]] std::uint64_t bytes_written() const noexcept;
  [[nodiscard]] std::uint64_t write_calls() const noexcept;
  // Batches the owner encoded itself because the queue was full (write_in_background).
  [[nodiscard]] std::uint64_t owner_encoded_batches() const noexcept { return owner_encoded_batches_; }
  void set_max_delay_us(std::uint64_t us) noexcept { max_delay_us_ = us; }

 private:
  class Background;
  void flush_full_batch();
  void write_large(std::string_view bytes);
  void write_all(std::string_view bytes);

  // What is written: fd_ itself, or a pipe's non-blocking open file description of its own.
  struct OutputTarget {
    FileDescriptor own;
    int fd = -1;
    std::uint8_t kind = 0;
  };
  static OutputTarget target_of(int fd);

  FileDescriptor fd_;
  OutputTarget target_;
  OutBuffer buffer_;
  std::size_t capacity_;
  std::uint64_t max_delay_us_ = default_max_delay_us;
  std::uint64_t last_flush_us_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint64_t write_calls_ = 0;
  std::uint64_t owner_encoded_batches_ = 0;
  BatchEncoder encode_;                     // encode_batches: the owner encodes every batch
  OutBuffer encoded_;                       // a batch the owner encoded
  std::unique_ptr<Background> background_;  // after fd_: stopped before the descriptor closes
};

}  // namespace tp
