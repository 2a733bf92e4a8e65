// One poll cycle of the collector design (docs/design.md "Peers and their protocols": ekotrace debug collector):
// halt the target, read every tracer (handle, history, clocks and new log items) in as
// few round trips as the link allows, skip tracers whose `in_use` flag is set, hand the
// new entries out, then clear what was read exactly as ekotrace's own end of a report does
// (report_finish.hpp: local clock incremented, log restarted from the clocks with the
// "produced report" event) and resume.
//
// collect() and finish() are separate so the caller can write the entries out before the
// target's log is cleared: if writing fails, nothing read is lost from the target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ekotrace/compact_log.hpp"
#include "ekotrace/layout.hpp"
#include "ekotrace/memory_snapshot.hpp"

namespace tp::ekotrace {

struct TracerSpec {
  std::string label;            // as given: a symbol or 0x...
  std::uint64_t reference = 0;  // address of the pointer to the tracer handle
};

struct TracerCounters {
  std::uint64_t collected_polls = 0;  // polls that read the tracer
  std::uint64_t entries = 0;          // log entries handed out
  std::uint64_t skipped_in_use = 0;   // polls that found in_use set
  std::uint64_t null_reference = 0;   // polls that found a NULL tracer or history pointer
  std::uint64_t unreadable = 0;       // polls where the target refused the tracer's memory
  std::uint64_t invalid = 0;          // polls where the history made no sense (len > capacity ...)
  std::uint64_t truncated = 0;        // logs that ended inside a two-word item
  std::uint64_t malformed = 0;        // entries that are not ekotrace's (event id 0), dropped
  std::uint64_t overflows = 0;        // "log overflowed" / "clock overflowed" events seen
};

struct TracerState {
  TracerSpec spec;
  TracerCounters counters;
  std::optional<std::uint64_t> handle;  // cached: re-checked every poll
  std::optional<std::uint64_t> history;
  std::uint64_t seen_log = 0;  // --no-clear: log address and length already handed out
  std::uint64_t seen_length = 0;
  std::vector<std::uint32_t> restarted;  // the log as the last clear left it (nothing new if unchanged)
  std::string last_problem;              // to warn once per change
};

struct CollectorOptions {
  Layout layout;
  elf::Endian endian = elf::Endian::little;
  bool clear = true;
  std::size_t merge_gap = 512;  // bytes between regions still read together
};

class Collector {
 public:
  Collector(target::TargetMemory& memory, std::vector<TracerSpec> tracers, CollectorOptions options,
            std::size_t max_read);

  // Halts the target and returns the new log entries of every tracer. The target stays
  // halted until finish().
  std::vector<Row> collect();
  // Clears what collect() handed out (unless read-only) and resumes the target.
  void finish();

  [[nodiscard]] const std::vector<TracerState>& tracers() const noexcept { return tracers_; }
  // Problems noticed since the last call, one line each (a tracer's state changed).
  std::vector<std::string> take_warnings();

 private:
  struct History {
    std::uint32_t tracer_id = 0;
    std::uint64_t clocks = 0, clocks_capacity = 0, clocks_length = 0;
    std::uint64_t log = 0, log_capacity = 0, log_length = 0;
    bool in_use = false;
  };
  struct Pending {
    std::size_t tracer = 0;
    History history;
    std::uint64_t history_address = 0;
    std::uint64_t first_item = 0;  // where the new items start
    bool fresh = false;            // it had new entries: clear (or remember) them in finish()
  };

  void resolve_pointers();
  std::optional<History> read_history(TracerState& tracer);
  void note(TracerState& tracer, std::string problem);
  void clear_log(const Pending& pending, TracerState& tracer);
  [[nodiscard]] std::uint64_t word(std::uint64_t address) const noexcept;

  target::TargetMemory& memory_;
  std::vector<TracerState> tracers_;
  CollectorOptions options_;
  MemorySnapshot snapshot_;
  Segmenter segmenter_;
  std::vector<Pending> pending_;
  std::vector<std::string> warnings_;
};

}  // namespace tp::ekotrace
