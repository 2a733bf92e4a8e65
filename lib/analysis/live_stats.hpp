// Running statistics over a stream of records, in memory bounded by what the trace names
// (functions, handlers, tasks), never by its length: a PC-sample profile, per-handler
// durations with nesting (DWT exception trace, or TaskIsr IsrEnter/IsrExit), and CPU time
// per task and idle. Loss-aware: an interval that was open when the target dropped packets
// (an Overflow record, or a Malformed one: the decoder skipped bytes) is counted but marked
// uncertain and kept out of min and max.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/observation.hpp"

namespace tp::analysis {

struct Durations {
  std::uint64_t count = 0;  // every closed interval
  std::uint64_t total = 0;
  std::uint64_t min = std::numeric_limits<std::uint64_t>::max();  // of the certain ones
  std::uint64_t max = 0;
  std::uint64_t uncertain = 0;  // intervals that spanned a loss

  void add(std::uint64_t duration, bool certain) noexcept;
  [[nodiscard]] bool has_certain() const noexcept { return count > uncertain; }
};

// CPU time per interval of one width, on a grid aligned to multiples of the width (so two
// series of one width line up), for a load-over-time chart: at most max_bins intervals, the
// width doubling (neighbours merged) when the trace outgrows them. Memory stays bounded and
// the intervals always add up to the time added.
class LoadSeries {
 public:
  static constexpr std::size_t max_bins = 1024;
  static constexpr std::size_t max_series = 512;  // kept per tracker (8 KiB each at most)

  LoadSeries() = default;
  // Starting on a grid of `width` (a power of two): a series that will be added to one of
  // that width is kept in as few intervals as it needs there.
  explicit LoadSeries(std::uint64_t width) : width_(width) {}

  void add(std::uint64_t from, std::uint64_t to);  // [from, to) had the CPU
  void add(const LoadSeries& other);               // its time too, interval by interval
  // The same series on a grid of `width` (a power of two at least width()).
  [[nodiscard]] LoadSeries widened_to(std::uint64_t width) const;
  [[nodiscard]] std::uint64_t width() const noexcept { return width_; }
  // bins()[i] covers [(first() + i) * width(), (first() + i + 1) * width()).
  [[nodiscard]] std::uint64_t first() const noexcept { return first_; }
  [[nodiscard]] const std::vector<std::uint64_t>& bins() const noexcept { return bins_; }
  [[nodiscard]] std::uint64_t total() const noexcept;

 private:
  void double_width();
  void cover(std::uint64_t from_bin, std::uint64_t to_bin);

  std::uint64_t width_ = 1;
  std::uint64_t first_ = 0;
  std::vector<std::uint64_t> bins_;
};

// Durations on a log scale, 8 buckets per doubling (each under 12.5% of its durations wide;
// exact below 16), for a histogram and its quantiles in memory bounded whatever the count.
class DurationHistogram {
 public:
  static constexpr std::size_t bucket_count = 16 + 60 * 8;

  void add(std::uint64_t duration);
  [[nodiscard]] static std::size_t bucket_of(std::uint64_t duration) noexcept;
  [[nodiscard]] static std::uint64_t bucket_low(std::size_t bucket) noexcept;  // its shortest duration
  // The last duration of the bucket holding the q-quantile (nearest rank): the quantile is in
  // that bucket, at most this. 0 when empty.
  [[nodiscard]] std::uint64_t quantile_high(double q) const noexcept;
  // counts()[i] is bucket first() + i's.
  [[nodiscard]] std::size_t first() const noexcept { return first_; }
  [[nodiscard]] const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

 private:
  std::size_t first_ = 0;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
};

class Profile {
 public:
  struct Entry {
    std::string function;  // the record's function (--elf), else the PC in hex
    std::uint64_t samples = 0;
  };

  // `by_line`: entries are "function file:line" where the sample has a line (--lines).
  explicit Profile(bool by_line = false) : by_line_(by_line) {}

  void add(const Observation& sample);
  // The n functions with the most samples, most first (ties by name).
  [[nodiscard]] std::vector<Entry> top(std::size_t n) const;
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }
  [[nodiscard]] std::uint64_t sleeping() const noexcept { return sleeping_; }

 private:
  // Heterogeneous lookup: a sample's function (a view into its line) finds its entry
  // without a string being made.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, std::uint64_t, NameHash, std::equal_to<>> by_function_;
  std::unordered_map<std::uint64_t, std::uint64_t> by_pc_;  // samples without a function
  bool by_line_;
  std::string key_;
  std::uint64_t samples_ = 0;
  std::uint64_t sleeping_ = 0;
};

// Handlers that preempt each other: the time of each is its own (self) time, without the
// handlers that preempted it.
class HandlerTracker {
 public:
  // What the charts draw of a handler: its own time per interval (of its closed intervals),
  // its certain durations as a histogram, and where the longest of them was.
  struct Chart {
    LoadSeries load;
    DurationHistogram durations;
    std::uint64_t worst = 0;  // the longest certain duration, entered at worst_start, left at worst_end
    std::uint64_t worst_start = 0;
    std::uint64_t worst_end = 0;
  };
  // Also keep a Chart per handler, for the first LoadSeries::max_series handlers seen: a
  // trace that names a million handlers gets no more.
  void keep_load() noexcept { keep_load_ = true; }
  // Nothing when not kept.
  [[nodiscard]] const LoadSeries* load(std::uint32_t number) const;
  [[nodiscard]] const Chart* chart(std::uint32_t number) const;
  struct Handler {
    std::string name;
    Durations durations;
    std::uint32_t max_nesting = 0;  // deepest stack it was on (1: preempted nothing)
  };

  void enter(std::uint32_t number, std::uint64_t at, std::string_view name);
  void exit(std::uint32_t number, std::uint64_t at);
  // Packets were lost: what is open now is uncertain.
  void lose() noexcept;

  [[nodiscard]] const std::map<std::uint32_t, Handler>& handlers() const noexcept { return handlers_; }
  // The n handlers with the most time, most first (ties by number).
  [[nodiscard]] std::vector<std::pair<std::uint32_t, const Handler*>> heaviest(std::size_t n) const;
  [[nodiscard]] std::uint32_t max_nesting() const noexcept { return max_nesting_; }
  [[nodiscard]] std::uint64_t total_time() const noexcept { return total_time_; }
  [[nodiscard]] std::uint64_t unmatched_exits() const noexcept { return unmatched_exits_; }

 private:
  struct Active {
    std::uint32_t number;
    std::uint64_t since;  // start of its current stretch on the CPU
    std::uint64_t entered;
    std::uint64_t self = 0;  // its time so far
    bool uncertain = false;
    // Its time so far per interval (bounded, however often it is preempted while open), on
    // its chart's grid: an activation shorter than an interval costs one interval, not one a
    // cycle (at width 1 it was most of trace-serve --top-interval's time).
    LoadSeries stretches;
  };
  void run_top(std::uint64_t at);
  void chart_top(const Active& top, std::uint64_t at, bool certain);
  void close_top(std::uint64_t at, bool uncertain);

  std::map<std::uint32_t, Handler> handlers_;
  std::vector<Active> stack_;
  bool keep_load_ = false;
  std::map<std::uint32_t, Chart> charts_;
  std::uint32_t max_nesting_ = 0;
  std::uint64_t total_time_ = 0;
  std::uint64_t unmatched_exits_ = 0;
};

// CPU time per task from TaskSwitch (a task runs until the next switch) without its idle
// stretches (IdleEnter to IdleExit: the CPU slept, or ran the idle loop, for it), so tasks
// and idle add up to the span; interrupt time counts for the task it interrupted.
class TaskTracker {
 public:
  // Also keep each task's time (and idle's) per interval, for the first max_load_series tasks.
  void keep_load() noexcept { keep_load_ = true; }
  // A task's time per interval up to `at`, as tasks_until; nothing when not kept.
  [[nodiscard]] std::optional<LoadSeries> load_until(std::uint32_t task, std::uint64_t at) const;
  struct Task {
    std::string name;
    std::uint64_t time = 0;
    std::uint64_t uncertain_time = 0;  // of it, in stretches that spanned a loss
  };

  void switch_to(std::uint32_t from, std::uint32_t to, std::uint64_t at, std::string_view name);
  void idle_enter(std::uint64_t at);
  void idle_exit(std::uint64_t at) noexcept;
  void lose() noexcept;
  // The running task's stretch up to `at` (for a snapshot); nothing changes.
  [[nodiscard]] std::map<std::uint32_t, Task> tasks_until(std::uint64_t at) const;
  // The n tasks with the most time up to `at`, most first (ties by number).
  [[nodiscard]] std::vector<std::pair<std::uint32_t, Task>> heaviest_until(std::uint64_t at, std::size_t n) const;
  // Idle time up to `at`, an open idle stretch included.
  [[nodiscard]] std::uint64_t idle_until(std::uint64_t at) const noexcept {
    return idle_time_ + (idle_since_ && at >= *idle_since_ ? at - *idle_since_ : 0);
  }
  // Idle time per interval up to `at`, as idle_until.
  [[nodiscard]] LoadSeries idle_load_until(std::uint64_t at) const;
  [[nodiscard]] bool seen() const noexcept { return running_ || !tasks_.empty(); }
  // What has the CPU now: "idle", the running task (its name, else "task N"), or empty.
  [[nodiscard]] std::string_view current() const noexcept {
    if (idle_since_) return "idle";
    return running_label_;
  }

 private:
  void close_stretch(std::uint64_t at);

  std::map<std::uint32_t, Task> tasks_;
  std::optional<std::uint32_t> running_;
  std::string running_label_;  // current()'s, set at each switch rather than per sample
  std::uint64_t since_ = 0;
  bool stretch_uncertain_ = false;
  std::optional<std::uint64_t> idle_since_;
  std::uint64_t idle_time_ = 0;
  bool keep_load_ = false;
  std::map<std::uint32_t, LoadSeries> loads_;
  LoadSeries idle_load_;
};

// Samples per place, for the exports: a flame graph's stacks (task;function) and
// KCacheGrind's file/function/line.
using PlaceKey = std::tuple<std::string_view, std::string_view, std::string_view, std::uint32_t>;

class PlaceProfile {
 public:
  struct Place {
    std::string task;  // "task 3", a task's name, "idle", or empty without task records
    std::string function;
    std::string file;
    std::uint32_t line = 0;
  };
  // A sample's place as views into its line: found without making strings, copied only
  // when it is new.
  struct PlaceView {
    std::string_view task;
    std::string_view function;
    std::string_view file;
    std::uint32_t line = 0;
  };

  void add(const PlaceView& place);
  [[nodiscard]] const std::map<Place, std::uint64_t, std::less<>>& samples() const noexcept { return samples_; }

 private:
  std::map<Place, std::uint64_t, std::less<>> samples_;
};

[[nodiscard]] inline PlaceKey place_key(const PlaceProfile::Place& p) noexcept {
  return {p.task, p.function, p.file, p.line};
}
[[nodiscard]] inline PlaceKey place_key(const PlaceProfile::PlaceView& p) noexcept {
  return {p.task, p.function, p.file, p.line};
}
// std::less<> orders places, and views against places, by the same key.
[[nodiscard]] inline bool operator<(const PlaceProfile::Place& a, const PlaceProfile::Place& b) noexcept {
  return place_key(a) < place_key(b);
}
[[nodiscard]] inline bool operator<(const PlaceProfile::Place& a, const PlaceProfile::PlaceView& b) noexcept {
  return place_key(a) < place_key(b);
}
[[nodiscard]] inline bool operator<(const PlaceProfile::PlaceView& a, const PlaceProfile::Place& b) noexcept {
  return place_key(a) < place_key(b);
}

class LiveStats {
 public:
  // `places`: also count samples per task, function, file and line (the exports need it);
  // `by_line`: the profile by function and line; `load`: the trackers keep time per interval.
  explicit LiveStats(bool places = false, bool by_line = false, bool load = false)
      : profile_(by_line), keep_places_(places) {
    if (!load) return;
    exceptions_.keep_load();
    isrs_.keep_load();
    tasks_.keep_load();
  }

  void add(const Observation& record);

  [[nodiscard]] std::uint64_t records() const noexcept { return records_; }
  [[nodiscard]] std::uint64_t overflows() const noexcept { return overflows_; }
  // Malformed records: the decoder resynchronised, bytes (so packets) were lost.
  [[nodiscard]] std::uint64_t resyncs() const noexcept { return resyncs_; }
  // Records whose timestamp was before an earlier record's (merged streams, a target that
  // reset its clock): each is taken at the latest time seen, as trace-timeline takes it, so
  // no interval runs backwards and no share exceeds the span.
  [[nodiscard]] std::uint64_t time_anomalies() const noexcept { return time_anomalies_; }
  // Records whose clock differs from the first record's: their times are not comparable.
  [[nodiscard]] std::uint64_t other_clock_records() const noexcept { return other_clock_records_; }
  [[nodiscard]] std::uint64_t first_time() const noexcept { return first_; }
  [[nodiscard]] std::uint64_t last_time() const noexcept { return last_; }
  [[nodiscard]] std::uint64_t span() const noexcept { return records_ == 0 ? 0 : last_ - first_; }
  [[nodiscard]] std::string_view clock() const noexcept { return clock_; }
  [[nodiscard]] const Profile& profile() const noexcept { return profile_; }
  [[nodiscard]] const HandlerTracker& exceptions() const noexcept { return exceptions_; }
  [[nodiscard]] const HandlerTracker& isrs() const noexcept { return isrs_; }
  [[nodiscard]] const TaskTracker& tasks() const noexcept { return tasks_; }
  [[nodiscard]] const PlaceProfile& places() const noexcept { return places_; }

 private:
  void add_place(const Observation& sample);

  Profile profile_;
  bool keep_places_;
  PlaceProfile places_;
  std::uint64_t records_ = 0;
  std::uint64_t overflows_ = 0;
  std::uint64_t resyncs_ = 0;
  std::uint64_t time_anomalies_ = 0;
  std::uint64_t other_clock_records_ = 0;
  std::uint64_t first_ = 0;
  std::uint64_t last_ = 0;
  std::string clock_;
  HandlerTracker exceptions_;
  HandlerTracker isrs_;
  TaskTracker tasks_;
};

}  // namespace tp::analysis
