#include "analysis/live_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace tp::analysis {

void Durations::add(std::uint64_t duration, bool certain) noexcept {
  ++count;
  total += duration;
  if (!certain) {
    ++uncertain;
    return;
  }
  min = std::min(min, duration);
  max = std::max(max, duration);
}

void LoadSeries::double_width() {
  if (bins_.empty()) {
    width_ *= 2;
    return;
  }
  const std::uint64_t first = first_ / 2;
  std::vector<std::uint64_t> merged((first_ + bins_.size() + 1) / 2 - first, 0);
  for (std::size_t i = 0; i < bins_.size(); ++i) merged[(first_ + i) / 2 - first] += bins_[i];
  bins_ = std::move(merged);
  first_ = first;
  width_ *= 2;
}

// Makes bins from_bin..to_bin (at the current width) exist, widening while they are too many.
void LoadSeries::cover(std::uint64_t from_bin, std::uint64_t to_bin) {
  if (bins_.empty()) {
    first_ = from_bin;
  } else if (from_bin < first_) {  // a handler's stretch closed after a later one's
    bins_.insert(bins_.begin(), first_ - from_bin, 0);
    first_ = from_bin;
  }
  if (to_bin - first_ + 1 > bins_.size()) bins_.resize(to_bin - first_ + 1, 0);
}

void LoadSeries::add(std::uint64_t from, std::uint64_t to) {
  if (to <= from) return;
  const auto fits = [&] {
    const std::uint64_t low = bins_.empty() ? from / width_ : std::min(first_, from / width_);
    const std::uint64_t high =
        bins_.empty() ? (to - 1) / width_ : std::max(first_ + bins_.size() - 1, (to - 1) / width_);
    return high - low < max_bins;
  };
  while (!fits()) double_width();
  cover(from / width_, (to - 1) / width_);
  const std::uint64_t last = (to - 1) / width_;
  for (std::uint64_t bin = from / width_; bin <= last; ++bin) {
    const std::uint64_t start = std::max(from, bin * width_);
    const std::uint64_t end = bin == last ? to : (bin + 1) * width_;  // (last + 1) * width may not fit
    bins_[bin - first_] += end - start;
  }
}

void LoadSeries::add(const LoadSeries& other) {
  // An interval's time is at most its width, so it goes back into the same interval whatever
  // this series' width.
  for (std::size_t i = 0; i < other.bins_.size(); ++i) {
    const std::uint64_t start = (other.first_ + i) * other.width_;
    if (other.bins_[i] != 0) add(start, start + other.bins_[i]);
  }
}

LoadSeries LoadSeries::widened_to(std::uint64_t width) const {
  LoadSeries widened = *this;
  while (widened.width_ < width) widened.double_width();
  return widened;
}

std::uint64_t LoadSeries::total() const noexcept {
  std::uint64_t sum = 0;
  for (const std::uint64_t bin : bins_) sum += bin;
  return sum;
}

void Profile::add(const Observation& sample) {
  ++samples_;
  if (sample.sleep) {
    ++sleeping_;
    return;
  }
  if (sample.name.empty()) {
    ++by_pc_[sample.pc];
    return;
  }
  std::string_view key = sample.name;
  if (by_line_ && !sample.file.empty()) {
    key_.clear();
    fmt::format_to(std::back_inserter(key_), "{} {}:{}", sample.name, sample.file, sample.line);
    key = key_;
  }
  if (const auto found = by_function_.find(key); found != by_function_.end()) {
    ++found->second;
  } else {
    by_function_.emplace(std::string(key), 1);
  }
}

std::vector<Profile::Entry> Profile::top(std::size_t n) const {
  std::vector<Entry> entries;
  entries.reserve(by_function_.size() + by_pc_.size());
  for (const auto& [function, samples] : by_function_) entries.push_back(Entry{function, samples});
  for (const auto& [pc, samples] : by_pc_) entries.push_back(Entry{fmt::format("0x{:08x}", pc), samples});
  const auto most_first = [](const Entry& a, const Entry& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.function < b.function;
  };
  const auto shown = std::min(n, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(shown), entries.end(), most_first);
  entries.resize(shown);
  return entries;
}

namespace {

// The series of `number`, made when there is room for one more; else nothing.
template <typename Entry>
Entry* series_of(std::map<std::uint32_t, Entry>& entries, std::uint32_t number) {
  if (const auto found = entries.find(number); found != entries.end()) return &found->second;
  if (entries.size() >= LoadSeries::max_series) return nullptr;
  return &entries[number];
}

}  // namespace

std::size_t DurationHistogram::bucket_of(std::uint64_t duration) noexcept {
  if (duration < 16) return duration;
  const auto exponent = static_cast<std::size_t>(std::bit_width(duration) - 1);  // 4..63
  return 16 + (exponent - 4) * 8 + ((duration >> (exponent - 3)) & 7U);
}

std::uint64_t DurationHistogram::bucket_low(std::size_t bucket) noexcept {
  if (bucket < 16) return bucket;
  const std::size_t exponent = (bucket - 16) / 8 + 4;
  return (8U + (bucket - 16) % 8) << (exponent - 3);
}

void DurationHistogram::add(std::uint64_t duration) {
  const std::size_t bucket = bucket_of(duration);
  if (counts_.empty()) {
    first_ = bucket;
  } else if (bucket < first_) {
    counts_.insert(counts_.begin(), first_ - bucket, 0);
    first_ = bucket;
  }
  if (bucket - first_ >= counts_.size()) counts_.resize(bucket - first_ + 1, 0);
  ++counts_[bucket - first_];
  ++count_;
}

std::uint64_t DurationHistogram::quantile_high(double q) const noexcept {
  if (count_ == 0) return 0;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  std::size_t i = 0;
  while (i + 1 < counts_.size() && (seen += counts_[i]) < rank) ++i;
  const std::size_t next = first_ + i + 1;
  return next < bucket_count ? bucket_low(next) - 1 : std::numeric_limits<std::uint64_t>::max();
}

const HandlerTracker::Chart* HandlerTracker::chart(std::uint32_t number) const {
  const auto found = charts_.find(number);
  return found == charts_.end() ? nullptr : &found->second;
}

const LoadSeries* HandlerTracker::load(std::uint32_t number) const {
  const Chart* found = chart(number);
  return found == nullptr ? nullptr : &found->load;
}

// A closed interval of the handler on top, at `at`, into its chart.
void HandlerTracker::chart_top(const Active& top, std::uint64_t at, bool certain) {
  Chart* chart = series_of(charts_, top.number);
  if (chart == nullptr) return;
  chart->load.add(top.stretches);
  if (!certain) return;
  chart->durations.add(top.self);
  if (chart->durations.count() == 1 || top.self > chart->worst) {
    chart->worst = top.self;
    chart->worst_start = top.entered;
    chart->worst_end = at;
  }
}

// The top of the stack ran from its `since` to `at`.
void HandlerTracker::run_top(std::uint64_t at) {
  Active& top = stack_.back();
  if (at <= top.since) return;
  top.self += at - top.since;
  if (keep_load_) top.stretches.add(top.since, at);
}

void HandlerTracker::close_top(std::uint64_t at, bool uncertain) {
  run_top(at);
  Active& top = stack_.back();
  const bool certain = !top.uncertain && !uncertain;
  Handler& handler = handlers_[top.number];
  handler.durations.add(top.self, certain);
  if (keep_load_) chart_top(top, at, certain);
  total_time_ += top.self;
  stack_.pop_back();
  if (!stack_.empty()) stack_.back().since = at;  // the preempted one runs again
}

void HandlerTracker::enter(std::uint32_t number, std::uint64_t at, std::string_view name) {
  if (!stack_.empty()) run_top(at);  // the preempted one's stretch ends
  const Chart* known = keep_load_ ? chart(number) : nullptr;
  stack_.push_back(Active{number, at, at, 0, false, LoadSeries(known == nullptr ? 1 : known->load.width())});
  Handler& handler = handlers_[number];
  if (handler.name.empty() && !name.empty()) handler.name.assign(name);
  const auto depth = static_cast<std::uint32_t>(stack_.size());
  handler.max_nesting = std::max(handler.max_nesting, depth);
  max_nesting_ = std::max(max_nesting_, depth);
}

void HandlerTracker::exit(std::uint32_t number, std::uint64_t at) {
  const auto open =
      std::find_if(stack_.rbegin(), stack_.rend(), [number](const Active& a) { return a.number == number; });
  if (open == stack_.rend()) {  // entered before the trace began, or its entry was lost
    ++unmatched_exits_;
    return;
  }
  // Handlers above it whose exits are missing: closed here, as uncertain.
  while (stack_.back().number != number) close_top(at, true);
  close_top(at, false);
}

std::vector<std::pair<std::uint32_t, const HandlerTracker::Handler*>> HandlerTracker::heaviest(std::size_t n) const {
  std::vector<std::pair<std::uint32_t, const Handler*>> entries;
  entries.reserve(handlers_.size());
  for (const auto& [number, handler] : handlers_) entries.emplace_back(number, &handler);
  const auto heaviest_first = [](const auto& a, const auto& b) {
    const std::uint64_t ta = a.second->durations.total;
    const std::uint64_t tb = b.second->durations.total;
    return ta != tb ? ta > tb : a.first < b.first;
  };
  const auto shown = std::min(n, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(shown), entries.end(),
                    heaviest_first);
  entries.resize(shown);
  return entries;
}

void HandlerTracker::lose() noexcept {
  for (Active& active : stack_) active.uncertain = true;
}

void TaskTracker::close_stretch(std::uint64_t at) {
  if (!running_ || idle_since_) return;  // no task, or the CPU is idle: nothing runs
  Task& task = tasks_[*running_];
  const std::uint64_t stretch = at >= since_ ? at - since_ : 0;
  task.time += stretch;
  if (LoadSeries* load = keep_load_ ? series_of(loads_, *running_) : nullptr) load->add(since_, at);
  if (stretch_uncertain_) task.uncertain_time += stretch;
}

void TaskTracker::switch_to(std::uint32_t from, std::uint32_t to, std::uint64_t at, std::string_view name) {
  (void)from;
  close_stretch(at);
  running_ = to;
  since_ = at;
  stretch_uncertain_ = false;
  Task& next = tasks_[to];
  if (!name.empty()) next.name.assign(name);
  running_label_ = next.name.empty() ? fmt::format("task {}", to) : next.name;
}

void TaskTracker::idle_enter(std::uint64_t at) {
  if (idle_since_) return;
  close_stretch(at);
  idle_since_ = at;
}

void TaskTracker::idle_exit(std::uint64_t at) noexcept {
  if (!idle_since_) return;
  if (at >= *idle_since_) idle_time_ += at - *idle_since_;
  if (keep_load_) idle_load_.add(*idle_since_, at);
  idle_since_.reset();
  since_ = at;  // the running task has the CPU again
}

void TaskTracker::lose() noexcept {
  stretch_uncertain_ = running_.has_value();
}

std::map<std::uint32_t, TaskTracker::Task> TaskTracker::tasks_until(std::uint64_t at) const {
  std::map<std::uint32_t, Task> tasks = tasks_;
  if (running_ && !idle_since_ && at >= since_) {
    Task& task = tasks[*running_];
    task.time += at - since_;
    if (stretch_uncertain_) task.uncertain_time += at - since_;
  }
  return tasks;
}

LoadSeries TaskTracker::idle_load_until(std::uint64_t at) const {
  LoadSeries load = idle_load_;
  if (keep_load_ && idle_since_) load.add(*idle_since_, at);
  return load;
}

std::optional<LoadSeries> TaskTracker::load_until(std::uint32_t task, std::uint64_t at) const {
  const bool open = keep_load_ && running_ == task && !idle_since_ && at > since_;
  const auto found = loads_.find(task);
  if (found == loads_.end() && !(open && loads_.size() < LoadSeries::max_series)) return std::nullopt;
  LoadSeries load = found == loads_.end() ? LoadSeries() : found->second;
  if (open) load.add(since_, at);
  return load;
}

std::vector<std::pair<std::uint32_t, TaskTracker::Task>> TaskTracker::heaviest_until(std::uint64_t at,
                                                                                     std::size_t n) const {
  const std::map<std::uint32_t, Task> all = tasks_until(at);
  std::vector<std::pair<std::uint32_t, Task>> entries(all.begin(), all.end());
  const auto heaviest_first = [](const auto& a, const auto& b) {
    return a.second.time != b.second.time ? a.second.time > b.second.time : a.first < b.first;
  };
  const auto shown = std::min(n, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(shown), entries.end(),
                    heaviest_first);
  entries.resize(shown);
  return entries;
}

void PlaceProfile::add(const PlaceView& place) {
  if (const auto found = samples_.find(place); found != samples_.end()) {
    ++found->second;
    return;
  }
  samples_.emplace(Place{std::string(place.task), std::string(place.function), std::string(place.file), place.line}, 1);
}

void LiveStats::add_place(const Observation& sample) {
  std::array<char, 2 + 16> pc_text{};  // "0x" and a 64-bit PC in hex
  std::string_view function = sample.name;
  if (sample.sleep) {
    function = "[sleep]";
  } else if (function.empty()) {
    const auto written = fmt::format_to_n(pc_text.data(), pc_text.size(), "0x{:08x}", sample.pc);
    function = std::string_view(pc_text.data(), written.size);
  }
  places_.add(PlaceProfile::PlaceView{tasks_.current(), function, sample.file, sample.line});
}

void LiveStats::add(const Observation& record) {
  if (records_ == 0) first_ = record.timestamp;
  Observation o = record;
  if (records_ != 0 && o.timestamp < last_) {
    ++time_anomalies_;
    o.timestamp = last_;  // as trace-timeline: never backwards
  }
  ++records_;
  last_ = o.timestamp;
  if (clock_.empty() && !o.clock.empty()) clock_.assign(o.clock);
  if (!o.clock.empty() && o.clock != clock_) ++other_clock_records_;
  switch (o.kind) {
    case ObservationKind::pc_sample:
      profile_.add(o);
      if (keep_places_) add_place(o);
      break;
    case ObservationKind::exception:
      if (o.action == ExceptionAction::enter) exceptions_.enter(o.number, o.timestamp, o.name);
      if (o.action == ExceptionAction::exit) exceptions_.exit(o.number, o.timestamp);
      break;
    case ObservationKind::isr_enter:
      isrs_.enter(o.number, o.timestamp, o.name);
      break;
    case ObservationKind::isr_exit:
      isrs_.exit(o.number, o.timestamp);
      break;
    case ObservationKind::task_switch:
      tasks_.switch_to(o.from_task, o.number, o.timestamp, o.name);
      break;
    case ObservationKind::idle_enter:
      tasks_.idle_enter(o.timestamp);
      break;
    case ObservationKind::idle_exit:
      tasks_.idle_exit(o.timestamp);
      break;
    case ObservationKind::overflow:
    case ObservationKind::malformed:
      ++(o.kind == ObservationKind::overflow ? overflows_ : resyncs_);
      exceptions_.lose();
      isrs_.lose();
      tasks_.lose();
      break;
    case ObservationKind::marker:
    case ObservationKind::text:
    case ObservationKind::counter:
    case ObservationKind::other:
      break;
  }
}

}  // namespace tp::analysis
