#include "json/ndjson_chunks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <thread>

#include "core/byte_source.hpp"
#include "core/error.hpp"

namespace tp {
namespace {

constexpr std::size_t continuation_piece = std::size_t{64} << 10U;

// One thread's parser and handler, run over one chunk at a time.
class ChunkWorker {
 public:
  // fd, file_begin and file_end: the file range process() reads (-1, 0, 0 for a worker fed bytes).
  ChunkWorker(int fd, std::uint64_t file_begin, std::uint64_t file_end, ChunkHandler handler,
              const NdjsonChunkOptions& options)
      : fd_(fd),
        file_begin_(file_begin),
        file_end_(file_end),
        name_(options.name),
        handler_(std::move(handler.on_line)),
        quick_handler_(std::move(handler.on_quick_line)),
        reader_([this](NdjsonLine& line) { return handle(line); },
                [this](std::uint64_t number, std::string_view message) {
                  chunk_->bad_lines.push_back({number, std::string(message), chunk_->output.size()});
                },
                false, options.max_line),
        mark_outputs_(options.mark_outputs) {
    if (quick_handler_) {
      reader_.set_quick_handler(
          [this](std::string_view text, std::uint64_t number) { return handle_quick(text, number); });
    }
  }

  void process(std::uint64_t chunk_begin, std::uint64_t chunk_end, NdjsonChunk& chunk) {
    start(chunk, chunk_end);
    feed_owned_lines(chunk_begin, chunk_end);
    chunk.lines = reader_.lines();
  }

  // A piece of a stream, as StreamChunker cut it.
  void process(const StreamPiece& piece, NdjsonChunk& chunk) {
    start(chunk, piece.end_offset);
    const std::string_view bytes(piece.bytes.data(), piece.size);  // capacity: padding after
    switch (piece.kind) {
      case StreamPiece::Kind::whole_lines:
        reader_.feed_lines(bytes);  // the piece's buffer keeps the padding
        break;
      case StreamPiece::Kind::over_long:
        feed(bytes);  // more than max_line without a newline: one bad line
        break;
      case StreamPiece::Kind::last_line:
        feed(bytes);
        reader_.finish();
        break;
    }
    chunk.lines = reader_.lines();
  }

 private:
  simdjson::error_code handle(NdjsonLine& line) {
    const std::size_t before = chunk_->output.size();
    const simdjson::error_code error = handler_(line, chunk_->output);
    if (mark_outputs_ && chunk_->output.size() != before) chunk_->marks.push_back({line.number, chunk_->output.size()});
    return error;
  }

  bool handle_quick(std::string_view text, std::uint64_t number) {
    const std::size_t before = chunk_->output.size();
    if (!quick_handler_(text, number, chunk_->output)) return false;
    if (mark_outputs_ && chunk_->output.size() != before) chunk_->marks.push_back({number, chunk_->output.size()});
    return true;
  }

  void start(NdjsonChunk& chunk, std::uint64_t end_offset) {
    chunk_ = &chunk;
    chunk.output.clear();
    chunk.marks.clear();
    chunk.bad_lines.clear();
    chunk.end_offset = end_offset;
    reader_.restart();
  }

  void feed(std::string_view bytes) { reader_.feed(std::span<const char>(bytes.data(), bytes.size())); }

  void feed_owned_lines(std::uint64_t chunk_begin, std::uint64_t chunk_end) {
    // One byte before the chunk tells whether a line starts at its first byte.
    const std::uint64_t read_from = chunk_begin > file_begin_ ? chunk_begin - 1 : chunk_begin;
    const auto size = static_cast<std::size_t>(chunk_end - read_from);
    buffer_.reserve(size + simdjson::SIMDJSON_PADDING);  // feed_lines parses in place
    buffer_.resize(size);
    const std::size_t got = read_at(fd_, buffer_.data(), size, read_from);
    if (got < size) throw_truncated(read_from + got, chunk_end);
    std::string_view bytes(buffer_.data(), got);
    if (read_from < chunk_begin) {
      const std::size_t newline = bytes.find('\n');
      if (newline == std::string_view::npos) return;  // inside a line an earlier chunk owns
      bytes.remove_prefix(newline + 1);
      if (bytes.empty()) return;  // the line starting at chunk_end is the next chunk's
    }
    const std::size_t whole_lines = bytes.rfind('\n') + 1;  // 0 when there is no newline
    if (whole_lines != 0) reader_.feed_lines(bytes.substr(0, whole_lines));
    feed(bytes.substr(whole_lines));
    if (bytes.back() != '\n') finish_last_line(chunk_end);
  }

  // The file ends before the range does: it shrank while read.
  [[noreturn]] void throw_truncated(std::uint64_t ends_at, std::uint64_t expected) const {
    throw Error(ExitCode::io_error, fmt::format("{}: file truncated while read (it ends at byte {}, {} were there)",
                                                name_, ends_at, expected));
  }

  // The chunk's last line goes on past its end: read on to its newline or the file's end.
  void finish_last_line(std::uint64_t offset) {
    buffer_.resize(continuation_piece);
    for (;;) {
      const std::size_t got = read_at(fd_, buffer_.data(), buffer_.size(), offset);
      const std::string_view piece(buffer_.data(), got);
      const std::size_t newline = piece.find('\n');
      if (newline != std::string_view::npos) return feed(piece.substr(0, newline + 1));
      feed(piece);
      if (got < buffer_.size()) {
        if (offset + got < file_end_) throw_truncated(offset + got, file_end_);
        return reader_.finish();  // the file's last line, without a newline
      }
      offset += got;
    }
  }

  int fd_;
  std::uint64_t file_begin_;
  std::uint64_t file_end_;
  std::string name_;
  ChunkLineHandler handler_;
  ChunkQuickHandler quick_handler_;
  NdjsonChunk* chunk_ = nullptr;
  NdjsonReader reader_;
  bool mark_outputs_;
  std::string buffer_;
};

// Hands chunk numbers to the workers and their results back in order, with at most
// `slots` chunks taken and not yet handed back.
class ChunkSchedule {
 public:
  ChunkSchedule(std::uint64_t chunks, std::size_t slots) : chunks_(chunks), slots_(slots) {}

  // The next chunk to work on, or nothing when all are taken or the reading stops.
  std::optional<std::uint64_t> take() {
    std::unique_lock lock(mutex_);
    slot_free_.wait(lock, [&] { return stopping_ || taken_ >= chunks_ || taken_ < handed_back_ + slots_.size(); });
    if (stopping_ || taken_ >= chunks_) return std::nullopt;
    return taken_++;
  }
  NdjsonChunk& chunk(std::uint64_t index) { return slots_[index % slots_.size()].chunk; }
  void done(std::uint64_t index, std::exception_ptr error) {
    const std::scoped_lock lock(mutex_);
    Slot& slot = slots_[index % slots_.size()];
    slot.error = std::move(error);
    slot.ready = true;
    chunk_ready_.notify_all();
  }
  // Waits for chunk `index` (the next in order); rethrows its worker's exception.
  NdjsonChunk& wait_for(std::uint64_t index) {
    std::unique_lock lock(mutex_);
    Slot& slot = slots_[index % slots_.size()];
    chunk_ready_.wait(lock, [&] { return slot.ready; });
    if (slot.error) std::rethrow_exception(slot.error);
    return slot.chunk;
  }
  void hand_back(std::uint64_t index) {
    const std::scoped_lock lock(mutex_);
    slots_[index % slots_.size()].ready = false;
    ++handed_back_;
    slot_free_.notify_all();
  }
  void stop() {
    const std::scoped_lock lock(mutex_);
    stopping_ = true;
    slot_free_.notify_all();
  }

 private:
  struct Slot {
    NdjsonChunk chunk;
    bool ready = false;
    std::exception_ptr error;
  };
  std::mutex mutex_;
  std::condition_variable slot_free_;
  std::condition_variable chunk_ready_;
  std::uint64_t chunks_;
  std::uint64_t taken_ = 0;
  std::uint64_t handed_back_ = 0;
  bool stopping_ = false;
  std::vector<Slot> slots_;
};

// The workers' threads: told to stop and joined however read_ndjson_chunks is left.
class WorkerThreads {
 public:
  template <typename Work>
  WorkerThreads(ChunkSchedule& schedule, std::deque<ChunkWorker>& workers, const Work& work) : schedule_(schedule) {
    threads_.reserve(workers.size());
    try {
      for (ChunkWorker& worker : workers) threads_.emplace_back(work, std::ref(worker));
    } catch (...) {
      schedule_.stop();  // the threads already started end, and join as threads_ goes
      throw;
    }
  }
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  WorkerThreads(WorkerThreads&&) = delete;
  WorkerThreads& operator=(WorkerThreads&&) = delete;
  ~WorkerThreads() {
    schedule_.stop();
    threads_.clear();  // joins
  }

 private:
  ChunkSchedule& schedule_;
  std::vector<std::jthread> threads_;
};

}  // namespace

void read_ndjson_chunks(int fd, std::uint64_t begin, std::uint64_t end, std::vector<ChunkHandler> handlers,
                        const std::function<bool(NdjsonChunk&)>& on_chunk, const NdjsonChunkOptions& options) {
  if (handlers.empty() || end <= begin) return;
  const std::uint64_t chunk_size = std::max<std::size_t>(options.chunk_size, 1);
  const std::uint64_t chunks = (end - begin + chunk_size - 1) / chunk_size;
  ChunkSchedule schedule(chunks, 2 * handlers.size());
  std::deque<ChunkWorker> workers;  // not movable: their readers call back into them
  for (ChunkHandler& handler : handlers) workers.emplace_back(fd, begin, end, std::move(handler), options);
  const auto work = [&](ChunkWorker& worker) {
    while (const std::optional<std::uint64_t> index = schedule.take()) {
      const std::uint64_t chunk_begin = begin + *index * chunk_size;
      std::exception_ptr error;
      try {
        worker.process(chunk_begin, std::min(end, chunk_begin + chunk_size), schedule.chunk(*index));
      } catch (...) {
        error = std::current_exception();
      }
      schedule.done(*index, error);
      if (error) return;
    }
  };
  const WorkerThreads threads(schedule, workers, work);
  for (std::uint64_t index = 0; index < chunks; ++index) {
    const bool go_on = on_chunk(schedule.wait_for(index));
    schedule.hand_back(index);
    if (!go_on) break;
  }
}

// The workers of NdjsonStreamChunks: pieces queue in stream order; each thread takes the
// first not yet started; the chunks come back from the front of the queue, in order.
class NdjsonStreamChunks::Workers {
 public:
  Workers(std::vector<ChunkHandler> handlers, const NdjsonChunkOptions& options, OnChunk on_chunk)
      : on_chunk_(std::move(on_chunk)), max_in_flight_(2 * handlers.size()) {
    for (ChunkHandler& handler : handlers) workers_.emplace_back(-1, 0, 0, std::move(handler), options);
    threads_.reserve(workers_.size());
    try {
      for (ChunkWorker& worker : workers_) threads_.emplace_back([this, &worker] { run(worker); });
    } catch (...) {
      stop();
      throw;
    }
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  Workers(Workers&&) = delete;
  Workers& operator=(Workers&&) = delete;
  ~Workers() { stop(); }

  // A buffer for the next piece (one handed back earlier, its capacity kept).
  OutBuffer spare_buffer() {
    if (spare_.empty()) return {};
    OutBuffer buffer = std::move(spare_.back());
    spare_.pop_back();
    buffer.clear();
    return buffer;
  }
  // Queues `piece`; first hands back the oldest chunk when as many as allowed are in flight.
  bool add(StreamPiece piece) {
    if (in_flight() >= max_in_flight_ && !hand_back_front()) return false;
    auto job = std::make_unique<Job>();
    job->piece = std::move(piece);
    {
      const std::scoped_lock lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    work_ready_.notify_one();
    return true;
  }
  // Hands back the chunks already done, in order, without waiting.
  bool hand_back_done() {
    while (front_done()) {
      if (!hand_back_front()) return false;
    }
    return true;
  }
  bool hand_back_all() {
    while (in_flight() != 0) {
      if (!hand_back_front()) return false;
    }
    return true;
  }
  [[nodiscard]] std::size_t in_flight() const {
    const std::scoped_lock lock(mutex_);
    return jobs_.size();
  }

 private:
  struct Job {
    StreamPiece piece;
    NdjsonChunk chunk;
    bool started = false;
    bool done = false;
    std::exception_ptr error;
  };

  bool front_done() const {
    const std::scoped_lock lock(mutex_);
    return !jobs_.empty() && jobs_.front()->done;
  }
  // Waits for the oldest chunk and gives it to on_chunk (its handler's exception rethrown).
  bool hand_back_front() {
    std::unique_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      job_done_.wait(lock, [&] { return jobs_.front()->done; });
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    if (job->error) std::rethrow_exception(job->error);
    const bool go_on = on_chunk_(job->chunk);
    spare_.push_back(std::move(job->piece.bytes));
    return go_on;
  }
  void run(ChunkWorker& worker) {
    std::unique_lock lock(mutex_);
    for (;;) {
      Job* job = nullptr;
      work_ready_.wait(lock, [&] {
        job = first_waiting();
        return stopping_ || job != nullptr;
      });
      if (stopping_) return;
      job->started = true;
      lock.unlock();
      try {
        worker.process(job->piece, job->chunk);
      } catch (...) {
        job->error = std::current_exception();
      }
      lock.lock();
      job->done = true;
      job_done_.notify_all();
    }
  }
  Job* first_waiting() {
    for (const std::unique_ptr<Job>& job : jobs_) {
      if (!job->started) return job.get();
    }
    return nullptr;
  }
  void stop() {
    {
      const std::scoped_lock lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    threads_.clear();  // joins
  }

  OnChunk on_chunk_;
  std::size_t max_in_flight_;
  std::deque<ChunkWorker> workers_;  // not movable: their readers call back into them
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable job_done_;
  std::deque<std::unique_ptr<Job>> jobs_;  // handed out and not yet handed back, in stream order
  bool stopping_ = false;
  std::vector<OutBuffer> spare_;
  std::vector<std::jthread> threads_;  // last: joined before the rest goes
};

NdjsonStreamChunks::NdjsonStreamChunks(std::vector<ChunkHandler> handlers, OnChunk on_chunk,
                                       const NdjsonChunkOptions& options)
    : workers_(std::make_unique<Workers>(std::move(handlers), options, std::move(on_chunk))), options_(options) {}

NdjsonStreamChunks::~NdjsonStreamChunks() = default;

bool NdjsonStreamChunks::idle() const noexcept {
  return gathered_.empty() && workers_->in_flight() == 0;
}

bool NdjsonStreamChunks::feed(std::string_view bytes, std::uint64_t now_us) {
  do {
    const std::span<char> to = room(bytes.size());
    if (!to.empty()) std::memcpy(to.data(), bytes.data(), to.size());
    if (!feed_room(to.size(), now_us)) return false;
    bytes.remove_prefix(to.size());
  } while (!bytes.empty());
  return true;
}

std::span<char> NdjsonStreamChunks::room(std::size_t at_most) {
  constexpr std::size_t padding = simdjson::SIMDJSON_PADDING;
  const std::size_t wanted = std::min<std::size_t>(at_most, std::size_t{64} << 10U);
  if (gathered_.size() + wanted + padding > gathered_.capacity()) {
    gathered_.reserve(std::max(options_.chunk_size + options_.chunk_size / 4, 2 * gathered_.size()) + wanted + padding);
  }
  const std::size_t size = std::min(at_most, gathered_.capacity() - gathered_.size() - padding);
  return {gathered_.ensure(size + padding), size};
}

bool NdjsonStreamChunks::feed_room(std::size_t size, std::uint64_t now_us) {
  if (stopped_) return false;
  now_us_ = now_us;
  char* fresh = gathered_.ensure(0);  // where room() let the caller write
  if (skipping_) {                    // nothing else is gathered
    const void* newline = ::memchr(fresh, '\n', size);
    const std::size_t skipped =
        newline == nullptr ? size : static_cast<std::size_t>(static_cast<const char*>(newline) - fresh) + 1;
    offset_ += skipped;
    std::memmove(fresh, fresh + skipped, size - skipped);
    size -= skipped;
    skipping_ = newline == nullptr;
  }
  if (gathered_.empty()) gathered_since_us_ = now_us;
  gathered_.commit(size);
  // The last newline can only be in what just came (memrchr: rfind walks byte by byte).
  const void* last = size == 0 ? nullptr : ::memrchr(fresh, '\n', size);
  if (last != nullptr) whole_end_ = static_cast<std::size_t>(static_cast<const char*>(last) - gathered_.data()) + 1;
  bool go_on = true;
  if (gathered_.size() - whole_end_ > options_.max_line) {
    // As NdjsonReader: a line past max_line without its newline is reported and skipped.
    go_on = hand_over_whole_lines() && hand_over(StreamPiece::Kind::over_long, gathered_.size());
    skipping_ = true;
  } else if (whole_end_ >= options_.chunk_size ||
             (whole_end_ != 0 && now_us >= gathered_since_us_ + options_.max_gather_us)) {
    go_on = hand_over_whole_lines();
  }
  if (!go_on || !workers_->hand_back_done()) stopped_ = true;
  return !stopped_;
}

bool NdjsonStreamChunks::catch_up() {
  if (stopped_) return false;
  if (!hand_over_whole_lines() || !workers_->hand_back_all()) stopped_ = true;
  return !stopped_;
}

bool NdjsonStreamChunks::finish() {
  if (stopped_) return false;
  bool go_on = hand_over_whole_lines();
  if (go_on && !gathered_.empty()) go_on = hand_over(StreamPiece::Kind::last_line, gathered_.size());
  if (!go_on || !workers_->hand_back_all()) stopped_ = true;
  return !stopped_;
}

bool NdjsonStreamChunks::hand_over_whole_lines() {
  return whole_end_ == 0 || hand_over(StreamPiece::Kind::whole_lines, whole_end_);
}

// The first `size` gathered bytes become a piece; what follows them stays gathered.
bool NdjsonStreamChunks::hand_over(StreamPiece::Kind kind, std::size_t size) {
  StreamPiece piece;
  piece.bytes = std::move(gathered_);
  piece.size = size;
  piece.kind = kind;
  offset_ += size;
  piece.end_offset = offset_;
  gathered_ = workers_->spare_buffer();
  whole_end_ = 0;
  gathered_since_us_ = now_us_;                // what stays gathered is the start of a line that came just now
  if (kind != StreamPiece::Kind::over_long) {  // of an over-long line the rest is skipped
    const std::string_view rest = piece.bytes.view().substr(size);
    gathered_.reserve(rest.size() + simdjson::SIMDJSON_PADDING);
    gathered_.append(rest);
  }
  return workers_->add(std::move(piece));
}

}  // namespace tp
