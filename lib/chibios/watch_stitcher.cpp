#include "chibios/watch_stitcher.hpp"

#include <algorithm>

namespace tp::chibios {

std::optional<std::size_t> resume_point(const std::vector<SwitchRecord>& previous,
                                        const std::vector<SwitchRecord>& now) {
  if (previous.empty()) return 0;
  const auto same = [](const SwitchRecord& a, const SwitchRecord& b) {
    return a.out == b.out && a.in == b.in && a.time == b.time;
  };
  const std::size_t context = std::min<std::size_t>(previous.size(), 8);
  for (std::size_t end = now.size(); end >= context && end > 0; --end) {
    bool match = true;
    for (std::size_t k = 0; k < context && match; ++k) {
      match = same(now[end - 1 - k], previous[previous.size() - 1 - k]);
    }
    if (match) return end;
  }
  return std::nullopt;
}

WatchStitcher::Step WatchStitcher::next(const std::vector<SwitchRecord>& records, const Timeline& timeline) {
  Step step;
  if (last_absolute_ >= 0) {
    const auto resume = previous_.empty() ? std::nullopt : resume_point(previous_, records);
    if (resume) {
      step.first = *resume;
      // The switch before the new ones was emitted last time: this pull's ticks are offset
      // so that it lands where it landed then.
      offset_ = last_absolute_ - static_cast<double>(timeline.switches[step.first - 1].tick);
    } else {
      // Cleared or overflowed (a gap), or empty last time: the new records go after the
      // last one emitted, never before it, whole wrap periods later if need be.
      step.gap = !previous_.empty();
      offset_ = 0;
      const double first = timeline.switches.empty() ? 0 : static_cast<double>(timeline.switches.front().tick);
      while (first + offset_ <= last_absolute_) offset_ += wrap_;
    }
  }
  step.tick_offset = offset_;
  if (step.first < timeline.switches.size()) {
    last_absolute_ = offset_ + static_cast<double>(timeline.switches.back().tick);
  }
  previous_ = records;
  return step;
}

}  // namespace tp::chibios
