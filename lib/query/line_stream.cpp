#include "query/line_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "core/clock.hpp"
#include "core/file_descriptor.hpp"
#include "core/signals.hpp"

namespace tp {

LineStream::LineStream(NdjsonReader::LineHandler on_line, const Logger& logger, bool strict, std::size_t max_line)
    : logger_(logger),
      max_line_(max_line),
      reader_(
          std::move(on_line),
          [this](std::uint64_t number, std::string_view message) {
            const std::uint64_t bad = reader_.bad_lines();
            if (bad <= reported_bad_lines) logger_.warn(fmt::format("line {}: {} (skipped)", number, message));
            if (bad == reported_bad_lines) logger_.warn("further bad lines are counted, not shown");
          },
          strict, max_line) {}

void LineStream::on_data(std::span<const std::uint8_t> bytes, std::uint64_t /*now_us*/) {
  reader_.feed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void LineStream::on_end(std::uint64_t /*now_us*/) {
  // Stopped by SIGINT/SIGTERM: the input did not end, so a line not yet complete was cut by
  // the signal, not written that way. It is left out (whole lines only), not reported.
  if (stop_requested() != 0) return reader_.stop();
  if (handing_over()) return;  // run_stream_chunks goes on with what is pending, to the end
  reader_.finish();
}

unsigned LineStream::threads_for(unsigned requested) noexcept {
  if (requested != 0) return requested;
  return std::clamp(std::thread::hardware_concurrency(), 1U, max_threads);
}

namespace {

// Where the whole lines of [begin, end) end: after the last newline there (begin if none).
// The threads read up to it; the rest goes line by line with whatever is added later.
std::uint64_t end_of_whole_lines(int fd, std::uint64_t begin, std::uint64_t end) {
  constexpr std::size_t window = std::size_t{64} << 10U;
  std::string tail(window, '\0');
  while (end > begin) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(window, end - begin));
    const std::uint64_t from = end - size;
    const std::size_t got = read_at(fd, tail.data(), size, from);
    const void* newline = ::memrchr(tail.data(), '\n', got);
    if (newline != nullptr) return from + static_cast<std::size_t>(static_cast<const char*>(newline) - tail.data()) + 1;
    end = from;
  }
  return begin;
}

}  // namespace

bool LineStream::run_chunks(ByteSource& source, std::vector<ChunkHandler> handlers, BatchedWriter& writer,
                            Progress& progress, std::uint64_t max_output_lines) {
  max_output_lines_ = max_output_lines;
  const ByteSource::Range range = source.unread_range();  // a lambda may not capture a structured binding
  const std::uint64_t whole_end = end_of_whole_lines(source.fd(), range.begin, range.end);
  NdjsonChunkOptions options;
  options.mark_outputs = max_output_lines != 0;
  options.max_line = max_line_;
  options.name = source.name();
  bool read_on = true;
  read_ndjson_chunks(
      source.fd(), range.begin, whole_end, std::move(handlers),
      [&](const NdjsonChunk& chunk) {
        progress.update(chunk.end_offset - range.begin);
        read_on = take_chunk(chunk, writer);
        return read_on;
      },
      options);
  writer.flush();
  if (!read_on || done_ || stop_requested() != 0) {
    progress.finish();
    return false;
  }
  source.seek_to(whole_end);
  return true;
}

namespace {

// The stream loop's side of NdjsonStreamChunks: reads go in place into the piece being
// gathered, a pause hands every line read so far to the workers and takes their chunks back.
class StreamChunksHandler final : public StreamHandler {
 public:
  explicit StreamChunksHandler(NdjsonStreamChunks& chunks) : chunks_(chunks) {}

  void go_on(bool go_on) noexcept { stopped_ = stopped_ || !go_on; }
  std::span<std::uint8_t> room(std::size_t at_most) override {
    const std::span<char> room = chunks_.room(at_most);
    return {reinterpret_cast<std::uint8_t*>(room.data()), room.size()};
  }
  void on_data(std::span<const std::uint8_t> bytes, std::uint64_t now_us) override {
    go_on(chunks_.feed_room(bytes.size(), now_us));
  }
  void on_idle(std::uint64_t /*now_us*/) override { go_on(chunks_.catch_up()); }
  [[nodiscard]] bool wants_idle() const override { return !chunks_.idle(); }
  void on_end(std::uint64_t /*now_us*/) override {
    if (stopped_) return;
    // A signal: a line not complete is left out (it was cut, not written that way), as
    // LineStream::on_end does; the whole lines read so far are still handled.
    go_on(stop_requested() != 0 ? chunks_.catch_up() : chunks_.finish());
  }
  [[nodiscard]] bool done() const override { return stopped_; }

 private:
  NdjsonStreamChunks& chunks_;
  bool stopped_ = false;
};

}  // namespace

void LineStream::run_stream_chunks(ByteSource& source, std::vector<ChunkHandler> handlers, BatchedWriter& writer,
                                   Progress& progress, std::uint64_t max_output_lines) {
  max_output_lines_ = max_output_lines;
  NdjsonChunkOptions options;
  options.mark_outputs = max_output_lines != 0;
  options.max_line = max_line_;
  // A signal stops the reading, not the handing back of lines already read.
  NdjsonStreamChunks chunks(
      std::move(handlers), [&](const NdjsonChunk& chunk) { return take_chunk(chunk, writer, false); }, options);
  const StreamLoopOptions loop_options;
  grow_pipe(source.fd(), loop_options.read_size);  // the writer fills it while the threads parse
  StreamChunksHandler handler(chunks);
  NdjsonReader::Pending pending = reader_.take_pending();  // after a stream loop (hand_over_when)
  if (pending.skipping) chunks.skip_rest_of_line();
  handler.go_on(chunks.feed(pending.bytes, monotonic_us()));
  run_stream_loop(source, handler, writer, progress, loop_options);
}

bool LineStream::take_chunk(const NdjsonChunk& chunk, BatchedWriter& writer, bool stop_on_signal) {
  const std::string_view output(chunk.output.data(), chunk.output.size());
  const std::uint64_t lines_before = reader_.lines();
  std::size_t written = 0;
  std::size_t next_mark = 0;
  // Counts the lines that wrote output before `line` against the limit; at the limit writes
  // up to that line's output and stops there, as reading line by line stops.
  const auto within_limit = [&](std::uint64_t line) {
    for (; max_output_lines_ != 0 && next_mark < chunk.marks.size() && chunk.marks[next_mark].line < line;
         ++next_mark) {
      if (++output_lines_ < max_output_lines_) continue;
      writer.write(output.substr(written, chunk.marks[next_mark].output_end - written));
      reader_.count_lines(chunk.marks[next_mark].line);
      done_ = true;
      return false;
    }
    return true;
  };
  const auto write_up_to = [&](std::size_t end) {
    const std::string_view part = output.substr(written, end - written);
    if (counting_output_ && max_output_lines_ == 0) {
      output_lines_ += static_cast<std::uint64_t>(std::count(part.begin(), part.end(), '\n'));
    }
    writer.write(part);
    written = end;
  };
  for (const NdjsonChunk::BadLine& bad : chunk.bad_lines) {
    if (!within_limit(bad.line)) return false;
    write_up_to(bad.output_size);
    reader_.report_bad_line(lines_before + bad.line, bad.message);
  }
  if (!within_limit(~std::uint64_t{0})) return false;
  write_up_to(output.size());
  reader_.count_lines(chunk.lines);
  return !stop_on_signal || stop_requested() == 0;
}

void LineStream::report_summary(std::string_view source_name) const {
  if (reader_.bad_lines() == 0) return;
  logger_.warn(
      fmt::format("{}: {} of {} lines were bad (not records, or a field that could not be judged) and were skipped",
                  source_name, reader_.bad_lines(), reader_.lines()));
}

}  // namespace tp
