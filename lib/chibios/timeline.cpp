#include "chibios/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ranges>

namespace tp::chibios {

namespace {

struct Ordered {
  ListedThread thread;
  bool deleted = false;
};

std::vector<Ordered> ordered(const ThreadList& list) {
  std::vector<Ordered> order;
  for (const ListedThread& thread : list.alive) order.push_back(Ordered{thread, false});
  for (std::size_t k = list.deleted.size(); k-- > 0;) {  // last deleted first
    const ListedThread& deleted = list.deleted[k];
    const auto index = static_cast<std::size_t>(std::max(deleted.number, 1) - 1);
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(std::min(index, order.size())), Ordered{deleted, true});
  }
  return order;
}

}  // namespace

std::vector<ListedThread> creation_order(const ThreadList& list) {
  std::vector<ListedThread> out;
  for (Ordered& entry : ordered(list)) out.push_back(std::move(entry.thread));
  return out;
}

TimelineReplay::TimelineReplay(const ThreadList& list, Sink sink) : sink_(std::move(sink)) {
  const std::vector<Ordered> order = ordered(list);
  for (std::size_t i = 0; i < order.size(); ++i) {
    TimelineThread thread;
    thread.id = static_cast<int>(i) + 1;
    thread.name = order[i].thread.name;
    thread.prio = order[i].thread.prio;
    thread.logged = order[i].thread.logged;
    thread.alive = !order[i].deleted;
    threads_.push_back(std::move(thread));
    current_.push_back(static_cast<int>(i) + 1);
  }
  open_.resize(threads_.size());
  marked_.resize(threads_.size());
}

void TimelineReplay::feed(const SwitchRecord& record) {
  if (count_++ == 0) {
    first_tick_ = record.time;
    previous_raw_ = record.time;
  }
  if (record.time < previous_raw_) epoch_ += time_wrap;  // the 20-bit time wrapped
  previous_raw_ = record.time;
  const std::uint64_t tick = epoch_ + record.time - first_tick_;
  if (!pending_.empty() && tick != tick_) flush_tick();
  tick_ = tick;
  pending_.push_back(record);
}

// Record k of the n that share a tick is at tick + k/n.
void TimelineReplay::flush_tick() {
  const auto n = static_cast<double>(pending_.size());
  for (std::size_t k = 0; k < pending_.size(); ++k) {
    const double time = static_cast<double>(tick_) + static_cast<double>(k) / n;
    end_ = time;
    replay(pending_[k], time, tick_);
  }
  pending_.clear();
}

void TimelineReplay::mark(int id, double time, bool in) {
  const auto index = static_cast<std::size_t>(id) - 1;
  TimelineThread& thread = threads_[index];
  if (sink_.on_mark) sink_.on_mark(thread, time, in);
  if (!thread.logged) return;
  const bool first = !marked_[index];
  marked_[index] = true;
  if (in) {
    if (!open_[index]) open_[index] = time;  // a second IN without an OUT keeps the first
  } else if (open_[index]) {
    if (sink_.on_run) sink_.on_run(thread, Run{*open_[index], time});
    open_[index].reset();
  } else if (first && sink_.on_run) {
    sink_.on_run(thread, Run{log_start, time});  // running when the log began
  }
}

void TimelineReplay::replay(const SwitchRecord& record, double time, std::uint64_t tick) {
  const auto lookup = [&](int number) -> int {
    if (number == 0) return 0;
    if (static_cast<std::size_t>(number) > current_.size()) {
      if (sink_.on_warning) {
        sink_.on_warning(
            fmt::format("tick {}: thread number {} but only {} threads are listed", tick, number, current_.size()));
      }
      return 0;
    }
    return current_[static_cast<std::size_t>(number) - 1];
  };
  Switch change{time, tick, 0, 0, false};
  if (record.out == record.in && record.out != 0) {
    const int id = lookup(record.out);
    change.from = id;
    change.to = id;
    change.exit = true;
    if (id != 0) {
      threads_[static_cast<std::size_t>(id) - 1].exit_time = time;
      mark(id, time, false);
      current_.erase(current_.begin() + record.out - 1);
    }
  } else {
    change.from = lookup(record.out);
    change.to = lookup(record.in);
    if (change.from != 0) mark(change.from, time, false);
    if (change.to != 0) mark(change.to, time, true);
  }
  if (sink_.on_switch) sink_.on_switch(change);
}

void TimelineReplay::finish() {
  if (!pending_.empty()) flush_tick();
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    if (open_[i] && sink_.on_run) sink_.on_run(threads_[i], Run{*open_[i], end_});  // running when read
    open_[i].reset();
  }
}

Timeline reconstruct(const ThreadList& list, const TimestampLog& log) {
  Timeline timeline;
  std::vector<std::vector<Run>> runs;
  std::vector<std::vector<double>> ins;
  std::vector<std::vector<double>> outs;
  TimelineReplay::Sink sink;
  sink.on_switch = [&](const Switch& change) { timeline.switches.push_back(change); };
  sink.on_run = [&](const TimelineThread& thread, const Run& run) {
    runs[static_cast<std::size_t>(thread.id) - 1].push_back(run);
  };
  sink.on_mark = [&](const TimelineThread& thread, double time, bool in) {
    (in ? ins : outs)[static_cast<std::size_t>(thread.id) - 1].push_back(time);
  };
  sink.on_warning = [&](const std::string& warning) { timeline.warnings.push_back(warning); };
  TimelineReplay replay(list, std::move(sink));
  runs.resize(replay.threads().size());
  ins.resize(replay.threads().size());
  outs.resize(replay.threads().size());
  for (const SwitchRecord& record : log.records) replay.feed(record);
  replay.finish();
  timeline.threads = replay.threads();
  for (std::size_t i = 0; i < timeline.threads.size(); ++i) {
    timeline.threads[i].runs = std::move(runs[i]);
    std::sort(timeline.threads[i].runs.begin(), timeline.threads[i].runs.end(),
              [](const Run& a, const Run& b) { return a.start < b.start; });
    timeline.threads[i].ins = std::move(ins[i]);
    timeline.threads[i].outs = std::move(outs[i]);
  }
  timeline.first_tick = replay.first_tick();
  timeline.start = TimelineReplay::log_start;
  timeline.end = replay.end();
  if (log.trigger && !log.records.empty()) {
    // The trigger is a full 32-bit time; the records keep 20 bits. Place it in the wrap
    // period that puts it inside (or nearest to) the log.
    const auto low =
        static_cast<std::int64_t>(*log.trigger & (time_wrap - 1)) - static_cast<std::int64_t>(timeline.first_tick);
    const auto last = static_cast<std::int64_t>(replay.last_tick());
    const auto distance = [&](std::int64_t t) { return t < 0 ? -t : t > last ? t - last : 0; };
    std::int64_t best = low;
    for (std::int64_t candidate = low; candidate <= last + static_cast<std::int64_t>(time_wrap);
         candidate += static_cast<std::int64_t>(time_wrap)) {
      if (distance(candidate) < distance(best)) best = candidate;
    }
    timeline.trigger = static_cast<double>(best);
  }
  return timeline;
}

std::vector<const TimelineThread*> display_order(const Timeline& timeline) {
  std::vector<const TimelineThread*> order;
  for (const auto& thread : timeline.threads) order.push_back(&thread);
  std::stable_sort(order.begin(), order.end(),
                   [](const TimelineThread* a, const TimelineThread* b) { return a->prio > b->prio; });
  return order;
}

}  // namespace tp::chibios
