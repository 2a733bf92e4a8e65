#include "decode/decode_loop.hpp"

#include <vector>

#include "core/clock.hpp"
#include "core/signals.hpp"

namespace tp {

void run_decode_loop(ByteSource& source, ItmSession& session, BatchedWriter& writer, Progress& progress,
                     const DecodeLoopOptions& options) {
  std::vector<std::uint8_t> buffer(1U << 20U);
  std::uint64_t next_report = monotonic_us() + options.report_every_us;
  while (stop_requested() == 0) {
    const bool idle_work = session.wants_idle() || writer.has_pending();
    const ReadResult result = source.read(buffer, idle_work ? options.idle_poll_ms : -1);
    const std::uint64_t now = monotonic_us();
    if (result.status == ReadStatus::end_of_input) break;
    if (result.status == ReadStatus::data) {
      session.feed(std::span<const std::uint8_t>(buffer.data(), result.size), now);
      writer.flush_if_stale(now);
      progress.update(source.bytes_read());
    } else if (result.status == ReadStatus::timeout) {
      session.idle(now);
      writer.flush();
    }
    if (options.report_every_us != 0 && options.on_report && now >= next_report) {
      options.on_report();
      next_report = now + options.report_every_us;
    }
  }
  progress.finish();
  session.finish(monotonic_us());
  writer.flush();
}

}  // namespace tp
