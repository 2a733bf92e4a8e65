#include "core/stream_loop.hpp"

#include <vector>

#include "core/clock.hpp"
#include "core/signals.hpp"

namespace tp {

void run_stream_loop(ByteSource& source, StreamHandler& handler, BatchedWriter& writer, Progress& progress,
                     const StreamLoopOptions& options) {
  std::vector<std::uint8_t> buffer;
  std::uint64_t next_report = monotonic_us() + options.report_every_us;
  while (stop_requested() == 0 && !handler.done()) {
    const bool idle_work = handler.wants_idle() || writer.has_pending();
    std::span<std::uint8_t> room = handler.room(options.read_size);
    if (room.empty()) {
      buffer.resize(options.read_size);
      room = buffer;
    }
    const ReadResult result = source.read(room, idle_work ? options.idle_poll_ms : -1);
    const std::uint64_t now = monotonic_us();
    if (result.status == ReadStatus::end_of_input) break;
    if (result.status == ReadStatus::data) {
      handler.on_data(room.first(result.size), now);
      writer.flush_if_stale(now);
      progress.update(source.bytes_read());
    } else if (result.status == ReadStatus::timeout) {
      handler.on_idle(now);
      writer.flush();
    }
    if (options.report_every_us != 0 && options.on_report && now >= next_report) {
      options.on_report();
      next_report = now + options.report_every_us;
    }
  }
  progress.finish();
  handler.on_end(monotonic_us());
  writer.flush();
}

}  // namespace tp
