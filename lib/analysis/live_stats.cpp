#include "analysis/live_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

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

void HandlerTracker::close_top(std::uint64_t at, bool uncertain) {
  Active& top = stack_.back();
  top.self += at >= top.since ? at - top.since : 0;
  const bool certain = !top.uncertain && !uncertain;
  handlers_[top.number].durations.add(top.self, certain);
  total_time_ += top.self;
  stack_.pop_back();
  if (!stack_.empty()) stack_.back().since = at;  // the preempted one runs again
}

void HandlerTracker::enter(std::uint32_t number, std::uint64_t at, std::string_view name) {
  if (!stack_.empty()) {
    Active& preempted = stack_.back();
    preempted.self += at >= preempted.since ? at - preempted.since : 0;
  }
  stack_.push_back(Active{number, at});
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
