// sysview-decode's work: a SystemView stream (a file, stdin, a growing file) through the
// framing and the record writer to NDJSON records; so tools/sysview-decode is wiring only.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"

namespace tp::sysview {

struct DecodeOptions {
  std::string input = "-";
  std::uint64_t timestamp_hz = 0;  // --cpu-hz: 0 = as the target announces it
  bool ticks = false;
  std::uint32_t port = 1;
  bool no_sync = false;  // the input starts at a packet (no sync needed first)
  bool follow = false;
  bool stats = false;
  bool no_malformed = false;
  bool count_only = false;  // --format none: frame and parse, write nothing (with --stats)
};

// Throws Error for an input that cannot be opened; undecodable bytes are Malformed records
// (and a warning), not an error.
ExitCode decode(const DecodeOptions& o, const std::string& output, bool append, const Logger& log);

}  // namespace tp::sysview
