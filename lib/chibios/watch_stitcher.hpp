// `chibi-pull watch` pulls the whole switch log (a ring buffer) again and again; the
// stitcher turns those pulls into one timeline: it finds where each pull's new records
// start (after the records the previous pull ended with) and places each pull's tick 0 on
// one absolute tick axis, so the records it emits neither repeat nor jump back in time.
// Each pull's ticks are absolute already (its first record in the first wrap period): the
// offsets it adds are whole wrap periods.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "chibios/shell_output.hpp"
#include "chibios/timeline.hpp"

namespace tp::chibios {

// Where the new records of `now` start: after the last records of `previous` (up to eight,
// matched as a sequence); 0 when `previous` is empty, nothing when they are not found (the
// log was cleared, or it overflowed so that none of them is left).
std::optional<std::size_t> resume_point(const std::vector<SwitchRecord>& previous,
                                        const std::vector<SwitchRecord>& now);

class WatchStitcher {
 public:
  // wrap: where the logged time wraps (2^20, or 2^16 for a 16-bit system time).
  explicit WatchStitcher(std::uint64_t wrap = 1ULL << default_time_bits) : wrap_(static_cast<double>(wrap)) {}
  struct Step {
    std::size_t first = 0;   // the first new switch of this pull's timeline
    double tick_offset = 0;  // absolute tick of this pull's tick 0
    bool gap = false;        // the records the previous pull ended with are gone: some were lost
  };
  // `records` is this pull's log and `timeline` what reconstruct() made of it (one switch
  // per record, in the same order).
  Step next(const std::vector<SwitchRecord>& records, const Timeline& timeline);

 private:
  double wrap_;
  std::vector<SwitchRecord> previous_;
  double offset_ = 0;          // absolute tick of the current pull's tick 0
  double last_absolute_ = -1;  // absolute tick of the last switch emitted
};

}  // namespace tp::chibios
