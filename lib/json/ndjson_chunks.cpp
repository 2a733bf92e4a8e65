#include "json/ndjson_chunks.hpp"

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
  ChunkWorker(int fd, std::uint64_t file_begin, ChunkLineHandler handler, const NdjsonChunkOptions& options)
      : fd_(fd),
        file_begin_(file_begin),
        handler_(std::move(handler)),
        reader_([this](NdjsonLine& line) { return handle(line); },
                [this](std::uint64_t number, std::string_view message) {
                  chunk_->bad_lines.push_back({number, std::string(message), chunk_->output.size()});
                },
                false, options.max_line),
        mark_outputs_(options.mark_outputs) {}

  void process(std::uint64_t chunk_begin, std::uint64_t chunk_end, NdjsonChunk& chunk) {
    chunk_ = &chunk;
    chunk.output.clear();
    chunk.marks.clear();
    chunk.bad_lines.clear();
    chunk.end_offset = chunk_end;
    reader_.restart();
    feed_owned_lines(chunk_begin, chunk_end);
    chunk.lines = reader_.lines();
  }

 private:
  simdjson::error_code handle(NdjsonLine& line) {
    const std::size_t before = chunk_->output.size();
    const simdjson::error_code error = handler_(line, chunk_->output);
    if (mark_outputs_ && chunk_->output.size() != before) chunk_->marks.push_back({line.number, chunk_->output.size()});
    return error;
  }

  void feed(std::string_view bytes) { reader_.feed(std::span<const char>(bytes.data(), bytes.size())); }

  void feed_owned_lines(std::uint64_t chunk_begin, std::uint64_t chunk_end) {
    // One byte before the chunk tells whether a line starts at its first byte.
    const std::uint64_t read_from = chunk_begin > file_begin_ ? chunk_begin - 1 : chunk_begin;
    const auto size = static_cast<std::size_t>(chunk_end - read_from);
    buffer_.reserve(size + simdjson::SIMDJSON_PADDING);  // feed_lines parses in place
    buffer_.resize(size);
    const std::size_t got = read_at(fd_, buffer_.data(), size, read_from);
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
    if (got < size) return reader_.finish();  // the file ended (or shrank) here
    if (bytes.back() != '\n') finish_last_line(chunk_end);
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
      if (got < buffer_.size()) return reader_.finish();
      offset += got;
    }
  }

  int fd_;
  std::uint64_t file_begin_;
  ChunkLineHandler handler_;
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

void read_ndjson_chunks(int fd, std::uint64_t begin, std::uint64_t end, std::vector<ChunkLineHandler> handlers,
                        const std::function<bool(NdjsonChunk&)>& on_chunk, const NdjsonChunkOptions& options) {
  if (handlers.empty() || end <= begin) return;
  const std::uint64_t chunk_size = std::max<std::size_t>(options.chunk_size, 1);
  const std::uint64_t chunks = (end - begin + chunk_size - 1) / chunk_size;
  ChunkSchedule schedule(chunks, 2 * handlers.size());
  std::deque<ChunkWorker> workers;  // not movable: their readers call back into them
  for (ChunkLineHandler& handler : handlers) workers.emplace_back(fd, begin, std::move(handler), options);
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

}  // namespace tp
