// The capture loop shared by every source: pull bytes, write them batched (flushed within
// 50 ms when the stream pauses, so a live pipeline stays live), stop at --duration,
// --max-bytes, end of input or SIGINT/SIGTERM, and always write out and close what was
// captured, also when the source fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "core/batched_writer.hpp"
#include "swo/swo_source.hpp"

namespace tp::swo {

struct CaptureLimits {
  std::uint64_t max_bytes = 0;            // 0 = none
  std::chrono::milliseconds duration{0};  // 0 = none
};

struct CaptureProgress {
  std::uint64_t bytes = 0;
  double seconds = 0;
  SourceCounters counters;
  [[nodiscard]] double bytes_per_second() const noexcept {
    return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
  }
};

enum class CaptureEnd { input_ended, limit_reached, stopped };

struct CaptureResult {
  CaptureEnd end = CaptureEnd::input_ended;
  CaptureProgress progress;
};

// `on_report` runs about once a second (for -v statistics). Errors from the source are
// rethrown after the output is flushed and the source closed.
CaptureResult run_capture(SwoSource& source, BatchedWriter& out, const CaptureLimits& limits,
                          const std::function<void(const CaptureProgress&)>& on_report = {});

// "12.3 MB in 4.0 s (3.1 MB/s); lost 0 bytes in 0 gaps, 0 duplicate bytes dropped, 0 overruns"
std::string format_progress(const CaptureProgress& progress);

}  // namespace tp::swo
