// swo-capture's work: choosing and opening the source its options name, then the capture
// loop, or listing the probes; so tools/swo-capture is wiring only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/batched_writer.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace tp::swo {

struct CaptureOptions {
  std::string probe;
  std::string serial_number;
  std::string serial_device;
  std::string tcp;
  std::string file;
  bool simulate = false;
  bool list = false;
  std::string list_format = "text";
  std::uint32_t baud = 2'000'000;
  double tolerance_percent = 2.0;
  bool allow_approx = false;
  std::string swo_mode = "uart";
  int reply_timeout_ms = 1000;
  bool realtime = false;
  std::optional<std::uint64_t> rate;  // bytes/s for --simulate and --file --realtime
  std::uint32_t seed = 1;
  std::uint32_t cpu_hz = 64'000'000;
  std::string sim_events;
  std::string duration;
  std::string max_bytes;
  bool reconnect = false;
};

// What the option parser cannot check: exactly one source, --realtime with --file only.
// Throws Error(usage).
void check_capture_options(const CaptureOptions& options);

// --list: one line per attached probe (text or NDJSON).
ExitCode list_probes(const CaptureOptions& options, BatchedWriter& out, const Logger& log);

// Captures from the chosen source until it ends, a limit is reached or a stop is asked for.
ExitCode capture(const CaptureOptions& options, BatchedWriter& out, const Logger& log);

}  // namespace tp::swo
