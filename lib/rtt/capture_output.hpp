// Where rtt-capture's channel bytes go: raw (one channel's bytes as they are, flushed every
// poll that had some) or Text records per channel (text_lines.hpp), plus the Overflow record
// of a ring found full (NDJSON only; raw output cannot carry it, the warning says it).
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "core/batched_writer.hpp"
#include "rtt/text_lines.hpp"

namespace tp::rtt {

class CaptureOutput {
 public:
  CaptureOutput(BatchedWriter& writer, bool ndjson, std::size_t max_line) noexcept
      : writer_(writer), ndjson_(ndjson), max_line_(max_line) {}

  void bytes(unsigned channel, std::span<const std::uint8_t> data, std::uint64_t now_us);
  void buffer_full(unsigned channel, std::uint64_t now_us);
  // Partial lines older than `older_than_us`; then what waits is written out.
  void flush(std::uint64_t older_than_us);
  void finish();

 private:
  BatchedWriter& writer_;
  bool ndjson_;
  std::size_t max_line_;
  std::map<unsigned, TextLines> lines_;
};

}  // namespace tp::rtt
