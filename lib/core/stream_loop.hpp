// The streaming loop every filter shares: read with a timeout, hand bytes to a handler,
// keep output batched but flushed when input pauses or has waited too long, stop
// cleanly at end of input, on SIGINT/SIGTERM, or when the handler is done.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/progress.hpp"

namespace tp {

class StreamHandler {
 public:
  StreamHandler() = default;
  StreamHandler(const StreamHandler&) = delete;
  StreamHandler& operator=(const StreamHandler&) = delete;
  StreamHandler(StreamHandler&&) = delete;
  StreamHandler& operator=(StreamHandler&&) = delete;
  virtual ~StreamHandler() = default;

  // Where the next read goes, for a handler that takes its input in place (at most
  // `at_most` bytes; empty: into the loop's own buffer). on_data then gets the start of it.
  virtual std::span<std::uint8_t> room(std::size_t /*at_most*/) { return {}; }
  virtual void on_data(std::span<const std::uint8_t> bytes, std::uint64_t now_us) = 0;
  // Input paused for a moment: release what waits for more input.
  virtual void on_idle(std::uint64_t /*now_us*/) {}
  // Whether on_idle() still has work (otherwise the loop blocks until input comes).
  [[nodiscard]] virtual bool wants_idle() const { return false; }
  virtual void on_end(std::uint64_t now_us) = 0;
  // True once no more input is wanted (e.g. trace-filter --limit reached).
  [[nodiscard]] virtual bool done() const { return false; }
};

struct StreamLoopOptions {
  std::size_t read_size = std::size_t{1} << 20U;
  int idle_poll_ms = 20;              // how long a pause must last before idle work
  std::uint64_t report_every_us = 0;  // periodic callback interval (0 = never)
  std::function<void()> on_report;    // e.g. -v statistics
};

// Returns when input ends, a stop signal arrives or the handler is done; on_end() has
// run and everything written is flushed.
void run_stream_loop(ByteSource& source, StreamHandler& handler, BatchedWriter& writer, Progress& progress,
                     const StreamLoopOptions& options = {});

}  // namespace tp
