#include "chibios/timeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
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

TimelineReplay::TimelineReplay(const ThreadList& list, Sink sink, unsigned time_bits)
    : sink_(std::move(sink)), wrap_(1ULL << time_bits) {
  const std::vector<Ordered> order = ordered(list);
  int highest = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    TimelineThread thread;
    thread.id = static_cast<int>(i) + 1;
    thread.name = order[i].thread.name;
    thread.prio = order[i].thread.prio;
    thread.logged = order[i].thread.logged;
    thread.alive = !order[i].deleted;
    threads_.push_back(std::move(thread));
    current_.push_back(static_cast<int>(i) + 1);
    highest = std::max(highest, order[i].thread.number);
  }
  open_.resize(threads_.size());
  marked_.resize(threads_.size());
  listed_deleted_ = list.deleted.size();
  if (highest > max_record_number) {
    // The firmware's counter is a uint16; a log record keeps 6 bits of a number.
    warn(
        fmt::format("threads_list numbers threads up to {}, but log records keep numbers up to {} only: a record "
                    "naming n cannot tell thread n from n+64, so the log is ambiguous for those threads",
                    highest, max_record_number));
  }
}

void TimelineReplay::warn(const std::string& warning) const {
  if (sink_.on_warning) sink_.on_warning(warning);
}

void TimelineReplay::feed(const SwitchRecord& record) {
  std::uint32_t raw = record.time;
  if (raw >= wrap_) {
    if (!warned_width_) {
      warn(fmt::format("record time {} does not fit the {}-bit logged time (--time-bits): only its low bits are used",
                       raw, std::countr_zero(wrap_)));
    }
    warned_width_ = true;
    raw &= static_cast<std::uint32_t>(wrap_ - 1);
  }
  if (count_++ == 0) {
    first_tick_ = raw;
    previous_raw_ = raw;
  }
  if (raw < previous_raw_) {
    epoch_ += wrap_;  // the logged time wrapped
    constexpr std::uint32_t wrap16 = 1U << 16U;
    constexpr std::uint32_t near = 1U << 12U;
    if (wrap_ > wrap16 && previous_raw_ < wrap16 && previous_raw_ >= wrap16 - near && raw < near) {
      wrapped_near_16_bits_ = true;
    }
  }
  largest_raw_ = std::max(largest_raw_, raw);
  previous_raw_ = raw;
  const std::uint64_t tick = epoch_ + raw;
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
    if (sink_.on_run) sink_.on_run(thread, Run{*open_[index], time, false, false});
    open_[index].reset();
  } else if (first) {
    // Running when the log began. Switched out at the log's very first instant, its run has
    // no length: not written, the flag keeps the fact.
    thread.running_at_log_start = true;
    const auto start = static_cast<double>(first_tick_);
    if (time > start && sink_.on_run) sink_.on_run(thread, Run{start, time, true, false});
  }
}

void TimelineReplay::replay(const SwitchRecord& record, double time, std::uint64_t tick) {
  const auto lookup = [&](int number) -> int {
    if (number == 0) return 0;
    if (static_cast<std::size_t>(number) > current_.size()) {
      warn(fmt::format("tick {}: thread number {} but only {} threads are listed", tick, number, current_.size()));
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
    ++exit_records_;
    if (id != 0) {
      threads_[static_cast<std::size_t>(id) - 1].exit_time = time;
      exited_names_.push_back(threads_[static_cast<std::size_t>(id) - 1].name);
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

// The firmware keeps a deleted thread listed while its exit record is in the log; its
// expiry bugs (notes) break that, and numbering then shifts without a trace.
void TimelineReplay::check_deleted_list() {
  if (exit_records_ != listed_deleted_) {
    std::vector<std::string> listed;
    for (const TimelineThread& thread : threads_) {
      if (!thread.alive) listed.push_back(thread.name);
    }
    warn(
        fmt::format("the log has {} exit record(s) ({}) but threads_list lists {} deleted thread(s) ({}): the "
                    "firmware's deleted list is out of step with its log, so the numbers of threads created after "
                    "those may be shifted and their runs given to the wrong threads",
                    exit_records_, fmt::join(exited_names_, ", "), listed_deleted_, fmt::join(listed, ", ")));
  } else if (listed_deleted_ >= max_deleted_entries) {
    warn(
        fmt::format("the deleted list is full ({} entries): the firmware records no further exit, so later numbers "
                    "may be shifted",
                    max_deleted_entries));
  }
}

void TimelineReplay::finish() {
  if (!pending_.empty()) flush_tick();
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    if (!open_[i]) continue;
    threads_[i].running_when_read = true;
    // Still running when the log was read; switched in at its last instant, the run has no
    // length: not written, the flag keeps the fact.
    if (*open_[i] < end_ && sink_.on_run) sink_.on_run(threads_[i], Run{*open_[i], end_, false, true});
    open_[i].reset();
  }
  if (count_ > 0) check_deleted_list();
  if (wrapped_near_16_bits_ && largest_raw_ < (1U << 16U)) {
    warn(
        "the logged time wraps at 65536, not at 2^20: a 16-bit system time (CH_CFG_ST_RESOLUTION 16)? "
        "use --time-bits 16");
  }
}

Timeline reconstruct(const ThreadList& list, const TimestampLog& log, unsigned time_bits) {
  Timeline timeline;
  timeline.time_bits = time_bits;
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
  TimelineReplay replay(list, std::move(sink), time_bits);
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
  timeline.start = static_cast<double>(replay.first_tick());
  timeline.end = log.records.empty() ? timeline.start : replay.end();
  if (log.trigger && !log.records.empty()) {
    // The trigger is the full system time; the records keep its low bits. Place it in the
    // wrap period that puts it inside (or nearest to) the log.
    const auto wrap = static_cast<std::int64_t>(replay.time_wrap());
    const auto low = static_cast<std::int64_t>(*log.trigger % replay.time_wrap());
    const auto first = static_cast<std::int64_t>(timeline.first_tick);
    const auto last = static_cast<std::int64_t>(replay.last_tick());
    const auto distance = [&](std::int64_t t) { return t < first ? first - t : t > last ? t - last : 0; };
    std::int64_t best = low;
    for (std::int64_t candidate = low; candidate <= last + wrap; candidate += wrap) {
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
