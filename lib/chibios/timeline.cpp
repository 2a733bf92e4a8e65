#include "chibios/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tp::chibios {

namespace {

struct Ordered {
  ListedThread thread;
  bool deleted = false;
};

std::vector<Ordered> ordered(const ThreadList& list) {
  std::vector<Ordered> order;
  for (const ListedThread& thread : list.alive) order.push_back(Ordered{thread, false});
  for (auto deleted = list.deleted.rbegin(); deleted != list.deleted.rend(); ++deleted) {
    const auto index = static_cast<std::size_t>(std::max(deleted->number, 1) - 1);
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(std::min(index, order.size())), Ordered{*deleted, true});
  }
  return order;
}

// Unwrapped ticks, then the sub-tick position: record k of the n that share a tick is at
// tick + k/n.
std::vector<std::pair<std::uint64_t, double>> record_times(const std::vector<SwitchRecord>& records) {
  std::vector<std::pair<std::uint64_t, double>> times;
  times.reserve(records.size());
  std::uint64_t epoch = 0;
  std::uint32_t previous = records.empty() ? 0 : records.front().time;
  const std::uint32_t first = previous;
  for (const SwitchRecord& record : records) {
    if (record.time < previous) epoch += time_wrap;  // the 20-bit time wrapped
    previous = record.time;
    times.emplace_back(epoch + record.time - first, 0.0);
  }
  for (std::size_t i = 0; i < times.size();) {
    std::size_t j = i;
    while (j < times.size() && times[j].first == times[i].first) ++j;
    const auto n = static_cast<double>(j - i);
    for (std::size_t k = i; k < j; ++k) {
      times[k].second = static_cast<double>(times[k].first) + static_cast<double>(k - i) / n;
    }
    i = j;
  }
  return times;
}

void build_runs(TimelineThread& thread, const std::vector<std::pair<double, bool>>& marks, double start, double end) {
  std::optional<double> open;
  bool first = true;
  for (const auto& [time, in] : marks) {
    if (in) {
      if (!open) open = time;  // a second IN without an OUT keeps the first
    } else if (open) {
      thread.runs.push_back(Run{*open, time});
      open.reset();
    } else if (first) {
      thread.runs.push_back(Run{start, time});  // running when the log began
    }
    first = false;
  }
  if (open) thread.runs.push_back(Run{*open, end});  // running when the log was read
}

}  // namespace

std::vector<ListedThread> creation_order(const ThreadList& list) {
  std::vector<ListedThread> out;
  for (Ordered& entry : ordered(list)) out.push_back(std::move(entry.thread));
  return out;
}

Timeline reconstruct(const ThreadList& list, const TimestampLog& log) {
  Timeline timeline;
  const std::vector<Ordered> order = ordered(list);
  for (std::size_t i = 0; i < order.size(); ++i) {
    TimelineThread thread;
    thread.id = static_cast<int>(i) + 1;
    thread.name = order[i].thread.name;
    thread.prio = order[i].thread.prio;
    thread.logged = order[i].thread.logged;
    thread.alive = !order[i].deleted;
    timeline.threads.push_back(std::move(thread));
  }

  const auto times = record_times(log.records);
  timeline.first_tick = log.records.empty() ? 0 : log.records.front().time;
  timeline.start = times.empty() ? 0.0 : times.front().second;
  timeline.end = times.empty() ? 0.0 : times.back().second;

  std::vector<int> current;  // shell number - 1 -> thread id, as the records see it
  for (const auto& thread : timeline.threads) current.push_back(thread.id);
  std::vector<std::vector<std::pair<double, bool>>> marks(timeline.threads.size());
  const auto lookup = [&](int number, std::size_t record) -> int {
    if (number == 0) return 0;
    if (static_cast<std::size_t>(number) > current.size()) {
      timeline.warnings.push_back(fmt::format("record {}: thread number {} but only {} threads are listed", record + 1,
                                              number, current.size()));
      return 0;
    }
    return current[static_cast<std::size_t>(number) - 1];
  };
  for (std::size_t r = 0; r < log.records.size(); ++r) {
    const SwitchRecord& record = log.records[r];
    const double time = times[r].second;
    Switch change{time, times[r].first, 0, 0, false};
    if (record.out == record.in && record.out != 0) {
      const int id = lookup(record.out, r);
      change.from = id;
      change.to = id;
      change.exit = true;
      if (id != 0) {
        auto& thread = timeline.threads[static_cast<std::size_t>(id) - 1];
        thread.exit_time = time;
        thread.outs.push_back(time);
        marks[static_cast<std::size_t>(id) - 1].emplace_back(time, false);
        current.erase(current.begin() + record.out - 1);
      }
    } else {
      change.from = lookup(record.out, r);
      change.to = lookup(record.in, r);
      if (change.from != 0) {
        timeline.threads[static_cast<std::size_t>(change.from) - 1].outs.push_back(time);
        marks[static_cast<std::size_t>(change.from) - 1].emplace_back(time, false);
      }
      if (change.to != 0) {
        timeline.threads[static_cast<std::size_t>(change.to) - 1].ins.push_back(time);
        marks[static_cast<std::size_t>(change.to) - 1].emplace_back(time, true);
      }
    }
    timeline.switches.push_back(change);
  }
  for (std::size_t i = 0; i < timeline.threads.size(); ++i) {
    if (timeline.threads[i].logged) build_runs(timeline.threads[i], marks[i], timeline.start, timeline.end);
  }
  if (log.trigger && !log.records.empty()) {
    // The trigger is a full 32-bit time; the records keep 20 bits. Place it in the wrap
    // period that puts it inside (or nearest to) the log.
    const auto low =
        static_cast<std::int64_t>(*log.trigger & (time_wrap - 1)) - static_cast<std::int64_t>(timeline.first_tick);
    const auto last = static_cast<std::int64_t>(times.back().first);
    std::int64_t best = low;
    for (std::int64_t candidate = low; candidate <= last + static_cast<std::int64_t>(time_wrap);
         candidate += static_cast<std::int64_t>(time_wrap)) {
      const auto distance = [&](std::int64_t t) { return t < 0 ? -t : t > last ? t - last : 0; };
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
