#include "core/batched_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/signals.hpp"

namespace tp {
namespace {

struct WriteCounts {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
};

bool g_stdout_closed = false;  // set once at start, before any thread

// How a write to the output can block, and so how it waits for room.
enum class OutputKind : std::uint8_t {
  plain,   // a file, /dev/null, a terminal: write(2) as it is
  pipe,    // a pipe or FIFO, through a non-blocking open file description of its own
  socket,  // send(2) with MSG_DONTWAIT
};

// Bytes a write to the pipe `fd` takes whole (pipe(7): page-sized slots; the queued bytes may
// start and end inside a slot each, so the slots in use are counted high). At least a page:
// a write that finds no room at all is refused with EAGAIN (the pipe's own description is
// non-blocking), and then waited for.
std::size_t pipe_room(int fd) noexcept {
  constexpr std::size_t page = 4096;
  const int capacity = ::fcntl(fd, F_GETPIPE_SZ);
  int queued = 0;
  if (capacity <= 0 || ::ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) return page;
  const std::size_t slots = static_cast<std::size_t>(capacity) / page;
  const std::size_t used = (static_cast<std::size_t>(queued) + page - 1) / page + 1;
  return std::max<std::size_t>(slots > used ? slots - used : 0, 1) * page;
}

// After a stop signal the output waits this long for a reader that takes nothing.
constexpr std::uint64_t stalled_reader_grace_us = 1'000'000;

// Waits until the pipe or socket `fd` may take more, or the stop signal's wake-up; once a
// stop was requested, throws OutputStalled when nothing went out for the grace period.
void wait_for_room(int fd, std::uint64_t& stalled_since_us, std::size_t unwritten) {
  const bool stopping = stop_requested() != 0;
  if (stopping && stalled_since_us == 0) stalled_since_us = monotonic_us();
  pollfd waits[2] = {{fd, POLLOUT, 0}, {stop_wake_fd(), POLLIN, 0}};
  const nfds_t count = stopping || waits[1].fd < 0 ? 1 : 2;
  int timeout_ms = -1;
  if (stopping) {
    const std::uint64_t waited = monotonic_us() - stalled_since_us;
    if (waited >= stalled_reader_grace_us) throw OutputStalled(unwritten);
    timeout_ms = static_cast<int>((stalled_reader_grace_us - waited + 999) / 1000);
  }
  if (::poll(waits, count, timeout_ms) < 0 && errno != EINTR) throw_system_error(errno, "cannot wait for the output");
}

// Writes until every byte is out. A pipe (through its own non-blocking description) or a
// socket that is full is waited for with poll(2), beside the stop signal's wake-up, and a
// pipe is written in whole lines where they fit its room: once SIGINT/SIGTERM came, what is
// left goes out while the reader takes it, and a reader that takes nothing for a second ends
// the writing (OutputStalled), so that a stalled reader cannot hold a stopped tool, nor be
// left with half a line. EPIPE: BrokenPipe (SIGPIPE is ignored, see core/signals); any other
// error: tp::Error.
void write_all_to(int fd, OutputKind kind, std::string_view bytes, WriteCounts& counts) {
  std::string_view rest = bytes;
  std::uint64_t stalled_since_us = 0;  // after a stop: since when nothing went out
  while (!rest.empty()) {
    std::size_t size = rest.size();
    if (kind == OutputKind::pipe) {
      size = std::min(size, pipe_room(fd));
      if (size < rest.size()) {
        const void* last_newline = ::memrchr(rest.data(), '\n', size);
        if (last_newline != nullptr) {
          size = static_cast<std::size_t>(static_cast<const char*>(last_newline) - rest.data()) + 1;
        }
      }
    }
    const ssize_t n = kind == OutputKind::socket ? ::send(fd, rest.data(), size, MSG_DONTWAIT | MSG_NOSIGNAL)
                                                 : ::write(fd, rest.data(), size);
    if (n > 0) {
      ++counts.calls;
      counts.bytes += static_cast<std::uint64_t>(n);
      rest.remove_prefix(static_cast<std::size_t>(n));
      stalled_since_us = 0;
      continue;
    }
    if (n < 0 && errno == EPIPE) throw BrokenPipe();
    if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw_system_error(errno, "cannot write output");
    }
    if (n < 0 && errno == EINTR) continue;
    // Full (EAGAIN): a pipe or socket of ours, or a descriptor someone else made non-blocking.
    wait_for_room(fd, stalled_since_us, rest.size());
  }
}

// Where write_all_to writes `fd`: a pipe through a non-blocking open file description of
// its own (reopened through /proc, so the flag touches no other process sharing the pipe;
// `own` keeps it), a socket with MSG_DONTWAIT, anything else as it is.
std::pair<int, OutputKind> output_target(int fd, FileDescriptor& own) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {fd, OutputKind::plain};
  if (S_ISSOCK(st.st_mode)) return {fd, OutputKind::socket};
  if (!S_ISFIFO(st.st_mode)) return {fd, OutputKind::plain};
  const std::string path = fmt::format("/proc/self/fd/{}", fd);
  own = FileDescriptor(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  // No reader (ENXIO) or no /proc: the descriptor as it is (a write then fails or blocks).
  if (!own.valid()) return {fd, OutputKind::plain};
  return {own.get(), OutputKind::pipe};
}

// Runs `start` with every signal blocked, so a thread it starts inherits that mask and a
// stop signal always reaches the threads that wait for it.
template <typename Start>
void with_signals_blocked(const Start& start) {
  sigset_t all;
  sigset_t before;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &before);
  try {
    start();
  } catch (...) {
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    throw;
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

// In the background: smaller batches, several queued, so that a batch the owner encodes
// itself (the queue full) is short work, and the thread seldom waits meanwhile.
constexpr std::size_t background_batch_capacity = std::size_t{256} << 10U;
constexpr std::size_t background_batch_depth = 4;

// stat(2) of an input ("-": standard input; empty: no input), if it can be had.
std::optional<struct stat> input_identity(std::string_view input) {
  struct stat st {};
  if (input.empty()) return std::nullopt;
  if (input == "-") {
    if (::fstat(STDIN_FILENO, &st) != 0) return std::nullopt;
  } else if (::stat(std::string(input).c_str(), &st) != 0) {
    return std::nullopt;
  }
  return st;
}

void refuse_output_over_inputs(const std::string& output, std::initializer_list<std::string_view> inputs) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) return;  // not there yet: nothing to destroy
  if (!S_ISREG(out.st_mode)) return;              // /dev/null, a FIFO: writing truncates nothing
  for (const std::string_view input : inputs) {
    const std::optional<struct stat> in = input_identity(input);
    if (in && in->st_dev == out.st_dev && in->st_ino == out.st_ino) {
      throw Error(ExitCode::usage,
                  fmt::format("the output {} is the input {}: writing it would destroy what is read (write to another "
                              "file, then rename it)",
                              output, input == "-" ? std::string_view("(standard input)") : input));
    }
  }
}

}  // namespace

// Batches queue for a thread that encodes and writes them: the owner hands a full buffer
// over (getting an emptied one back) and goes on; it waits only while
// background_batch_depth batches are queued. The first error stops the writing and is kept
// for the owner.
class BatchedWriter::Background {
 public:
  Background(std::pair<int, OutputKind> target, std::size_t capacity, BatchEncoder encode)
      : fd_(target.first), kind_(target.second), capacity_(capacity), encode_(std::move(encode)) {
    with_signals_blocked([this] { thread_ = std::jthread([this] { run(); }); });
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  Background(Background&&) = delete;
  Background& operator=(Background&&) = delete;
  ~Background() {
    {
      const std::scoped_lock lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
  }  // thread_ joins: the batches queued are written first

  // Queues `full` (`encoded`: output already, not the encoder's input) and gives back an
  // empty buffer, once there is room in the queue.
  void hand_over(OutBuffer& full, bool encoded = false) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < background_batch_depth || error_; });
    if (error_) std::rethrow_exception(error_);
    queue_.push_back(Batch{std::move(full), encoded});
    if (spare_.empty()) {
      full = OutBuffer();
      full.reserve(capacity_ + capacity_ / 4);
    } else {
      full = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    changed_.notify_all();
  }
  // Returns once every batch is written; throws the error of a failed write.
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return (queue_.empty() && !writing_) || error_; });
    if (error_) std::rethrow_exception(error_);
  }
  // Whether hand_over() would wait now.
  // Encodes a batch for the owner (the queue full): the thread may be encoding another.
  void encode(std::string_view batch, OutBuffer& out) const { encode_(batch, out); }

  [[nodiscard]] bool full() const {
    const std::scoped_lock lock(mutex_);
    return queue_.size() >= background_batch_depth;
  }
  [[nodiscard]] WriteCounts counts() const {
    const std::scoped_lock lock(mutex_);
    return counts_;
  }

 private:
  struct Batch {
    OutBuffer bytes;
    bool encoded = false;
  };

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      Batch batch = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      lock.unlock();
      changed_.notify_all();  // room in the queue
      WriteCounts written;
      std::exception_ptr error;
      try {
        if (!failed_) write_all_to(fd_, kind_, output_of(batch), written);
      } catch (...) {
        error = std::current_exception();
      }
      batch.bytes.clear();
      lock.lock();
      spare_.push_back(std::move(batch.bytes));
      counts_.bytes += written.bytes;
      counts_.calls += written.calls;
      if (error) {
        error_ = error;
        failed_ = true;
      }
      writing_ = false;
      changed_.notify_all();
    }
  }

  // The bytes to write for a batch: what the encoder makes of it (unless the owner did).
  std::string_view output_of(const Batch& batch) {
    if (batch.encoded) return batch.bytes.view();
    encoded_.clear();
    encode_(batch.bytes.view(), encoded_);
    return encoded_.view();
  }

  int fd_;
  OutputKind kind_;
  std::size_t capacity_;
  BatchEncoder encode_;
  OutBuffer encoded_;  // the thread's
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  std::vector<OutBuffer> spare_;  // written batches' buffers, for the owner again
  bool writing_ = false;
  bool stopping_ = false;
  bool failed_ = false;  // written by the thread only
  std::exception_ptr error_;
  WriteCounts counts_;
  std::jthread thread_;  // last: started once the rest is built, joined first
};

void BatchedWriter::stdout_was_closed() noexcept {
  g_stdout_closed = true;
}

BatchedWriter BatchedWriter::open(std::string_view path, bool append, std::initializer_list<std::string_view> inputs) {
  if (path.empty() || path == "-") {
    if (g_stdout_closed) throw Error(ExitCode::io_error, "cannot write stdout: it is closed");
    return BatchedWriter(STDOUT_FILENO, false);
  }
  const std::string owned_path(path);
  refuse_output_over_inputs(owned_path, inputs);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = ::open(owned_path.c_str(), flags, 0644);
  if (fd < 0) throw_system_error(errno, "cannot open " + owned_path + " for writing");
  return BatchedWriter(fd, true);
}

BatchedWriter::OutputTarget BatchedWriter::target_of(int fd) {
  OutputTarget target;
  const auto [target_fd, kind] = output_target(fd, target.own);
  target.fd = target_fd;
  target.kind = static_cast<std::uint8_t>(kind);
  return target;
}

BatchedWriter::BatchedWriter(int fd, bool owned, std::size_t capacity)
    : fd_(fd, owned), target_(target_of(fd)), capacity_(capacity), last_flush_us_(monotonic_us()) {
  buffer_.reserve(capacity + capacity / 4);
  grow_pipe(fd, capacity);  // each flush in one write
}

BatchedWriter::BatchedWriter(BatchedWriter&&) noexcept = default;
BatchedWriter& BatchedWriter::operator=(BatchedWriter&&) noexcept = default;

bool BatchedWriter::starts_empty() const noexcept {
  struct stat st {};
  return ::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0;
}

void BatchedWriter::clear_if_blank() const {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || st.st_size > 2) return;
  char bytes[2] = {};
  // The output is open for writing only: its content is read through another descriptor.
  const FileDescriptor reading(::open(fmt::format("/proc/self/fd/{}", fd_.get()).c_str(), O_RDONLY | O_CLOEXEC));
  if (!reading.valid()) return;
  const ssize_t got = ::pread(reading.get(), bytes, sizeof bytes, 0);
  const std::string_view content(bytes, got > 0 ? static_cast<std::size_t>(got) : 0);
  if (content == "\n" || content == "\r\n") [[maybe_unused]]
    const int ignored = ::ftruncate(fd_.get(), 0);
}

BatchedWriter::~BatchedWriter() {
  try {
    if (fd_.valid()) flush();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; callers flush explicitly.
  }
}

void BatchedWriter::write_in_background(BatchEncoder encode) {
  flush();  // what went before is out first
  capacity_ = std::min(capacity_, background_batch_capacity);
  background_ = std::make_unique<Background>(std::pair{target_.fd, static_cast<OutputKind>(target_.kind)}, capacity_,
                                             std::move(encode));
}

void BatchedWriter::encode_batches(BatchEncoder encode) {
  flush();  // what went before is out first
  encode_ = std::move(encode);
}

void BatchedWriter::flush_full_batch() {
  if (!background_) return flush();
  last_flush_us_ = monotonic_us();
  try {
    if (background_->full()) {
      encoded_.clear();
      background_->encode(buffer_.view(), encoded_);
      ++owner_encoded_batches_;
      buffer_.clear();
      background_->hand_over(encoded_, true);  // encoded_ gets the emptied buffer back
    } else {
      background_->hand_over(buffer_);
    }
  } catch (...) {
    buffer_.clear();  // the output failed: nothing more is written
    throw;
  }
}

void BatchedWriter::flush() {
  last_flush_us_ = monotonic_us();
  if (background_) {
    try {
      if (!buffer_.empty()) background_->hand_over(buffer_);  // the thread encodes it
      background_->drain();
    } catch (...) {
      buffer_.clear();
      throw;
    }
  }
  if (buffer_.empty()) return;
  if (encode_) {
    encoded_.clear();
    try {
      encode_(buffer_.view(), encoded_);
    } catch (...) {
      buffer_.clear();
      throw;
    }
    buffer_.clear();
    write_all(encoded_.view());
    return;
  }
  write_all(buffer_.view());
  buffer_.clear();
}

std::uint64_t BatchedWriter::bytes_written() const noexcept {
  return bytes_written_ + (background_ ? background_->counts().bytes : 0);
}

std::uint64_t BatchedWriter::write_calls() const noexcept {
  return write_calls_ + (background_ ? background_->counts().calls : 0);
}

void BatchedWriter::write_large(std::string_view bytes) {
  flush();
  write_all(bytes);
}

void BatchedWriter::write_all(std::string_view bytes) {
  WriteCounts counts;
  std::exception_ptr error;
  try {
    write_all_to(target_.fd, static_cast<OutputKind>(target_.kind), bytes, counts);
  } catch (...) {
    error = std::current_exception();
  }
  bytes_written_ += counts.bytes;  // what went out counts, however the writing ended
  write_calls_ += counts.calls;
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const BrokenPipe&) {
    buffer_.clear();  // nobody reads: the destructor must not write it again
    throw;
  } catch (const OutputStalled&) {
    buffer_.clear();  // the same: the reader had its second
    throw;
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
