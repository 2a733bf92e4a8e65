// rtt-capture --format ndjson: a channel's bytes as Text records, one per line (a '\r' before
// the '\n' dropped), split at --max-line, a partial line written when the channel stays quiet
// (--line-timeout) and at the end. A line is dated when its first character was read (host
// monotonic microseconds, clock us), as itm-decode dates console lines by their start.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/out_buffer.hpp"

namespace tp::rtt {

class TextLines {
 public:
  TextLines(unsigned channel, std::size_t max_line) : channel_(channel), max_line_(max_line) {}

  void add(std::span<const std::uint8_t> bytes, std::uint64_t now_us, OutBuffer& out);
  // Writes a partial line that began before `older_than_us`.
  void flush_stale(std::uint64_t older_than_us, OutBuffer& out);
  void finish(OutBuffer& out);
  [[nodiscard]] std::uint64_t lines() const noexcept { return lines_; }

 private:
  void emit(OutBuffer& out);

  unsigned channel_;
  std::size_t max_line_;
  std::string line_;
  std::uint64_t began_us_ = 0;
  bool open_ = false;
  std::uint64_t lines_ = 0;
};

}  // namespace tp::rtt
