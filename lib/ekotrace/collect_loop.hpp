// The poll loop: one collect -> write -> clear -> resume cycle per interval, until a
// count, a duration or SIGINT/SIGTERM ends it. The target is resumed on every way out
// (TargetMemory::release), and each poll's rows are on disk before its log is cleared.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/log.hpp"
#include "ekotrace/collector.hpp"
#include "ekotrace/row_writer.hpp"

namespace tp::ekotrace {

struct LoopSettings {
  std::chrono::milliseconds interval{500};
  std::uint64_t polls = 0;                // 0 = until stopped
  std::chrono::milliseconds duration{0};  // 0 = no limit
  bool stats = false;                     // a summary on stderr at the end (also with -q)
};

struct LoopSummary {
  std::uint64_t polls = 0;
  std::uint64_t round_trips = 0;
  std::uint64_t busy_us = 0;  // halted + reading + writing, summed over polls
  std::uint64_t longest_poll_us = 0;
  std::uint64_t late_polls = 0;  // polls that took longer than the interval
};

// Runs until done; returns what it measured. Errors propagate after the target is released.
LoopSummary run_collect_loop(Collector& collector, target::TargetMemory& memory, RowWriter& writer,
                             const LoopSettings& settings, const Logger& log);

}  // namespace tp::ekotrace
