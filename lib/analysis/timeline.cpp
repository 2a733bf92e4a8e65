#include "analysis/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "core/json_writer.hpp"
#include "records/vocabulary.hpp"

namespace tp::analysis {
namespace {

// Instant events show their text as the name: a long console line is cut there (at a UTF-8
// character boundary) and kept whole in args.
constexpr std::size_t max_instant_name = 120;

std::string_view cut_utf8(std::string_view text, std::size_t max) noexcept {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
  return text.substr(0, end);
}

}  // namespace

void TimelineWriter::begin(OutBuffer& out) {
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += R"({"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"target"}})";
  events_ = 1;
}

void TimelineWriter::append_time(OutBuffer& out, std::uint64_t at) {
  // Exact decimals (no floating point): nanosecond resolution is what Perfetto keeps.
  std::uint64_t ns = 0;
  if (options_.cpu_hz != 0 &&
      (clock_ == clock_name(RecordClock::cycles) || clock_.empty() || clock_ == clock_name(RecordClock::ticks))) {
    // Whole seconds apart, so that the product stays in 64 bits for any clock below 17 GHz.
    const std::uint64_t hz = options_.cpu_hz;
    constexpr std::uint64_t max_whole_seconds = std::numeric_limits<std::uint64_t>::max() / 1'000'000'000U - 1;
    if (at / hz > max_whole_seconds) {
      // Past 584 years of nanoseconds (a cycle count of 2^61 at 1 Hz) the microseconds do not
      // fit 64 bits either: the whole seconds' digits, then the six of the microseconds.
      const std::uint64_t sub_ns = at % hz * 1'000'000'000U / hz;
      fmt::format_to(std::back_inserter(out), "{}{:06}.{:03}", at / hz, sub_ns / 1000, sub_ns % 1000);
      return;
    }
    ns = at / hz * 1'000'000'000U + at % hz * 1'000'000'000U / hz;
  } else if (clock_ == clock_name(RecordClock::ns)) {
    ns = at;
  } else {
    unscaled_ = unscaled_ || clock_ != clock_name(RecordClock::us);
    append_uint(out, at);
    return;
  }
  append_uint(out, ns / 1000);
  const std::uint64_t fraction = ns % 1000;
  char* digits = out.ensure(4);
  digits[0] = '.';
  digits[1] = static_cast<char>('0' + fraction / 100);
  digits[2] = static_cast<char>('0' + fraction / 10 % 10);
  digits[3] = static_cast<char>('0' + fraction % 10);
  out.commit(4);
}

void TimelineWriter::event_start(OutBuffer& out, char phase, std::uint64_t at) {
  out += ",\n{\"ph\":\"";
  out += phase;
  out += "\",\"pid\":1,\"ts\":";
  append_time(out, at);
  ++events_;
}

void TimelineWriter::announce(Track& track, OutBuffer& out) {
  if (track.announced) return;
  track.announced = true;
  out += ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":";
  append_uint(out, static_cast<std::uint64_t>(track.tid));
  out += ",\"name\":\"thread_name\",\"args\":{\"name\":";
  append_json_string(out, track.name);
  out += "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":";
  append_uint(out, static_cast<std::uint64_t>(track.tid));
  out += ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":";
  append_uint(out, static_cast<std::uint64_t>(track.sort_index));
  out += "}}";
  events_ += 2;
}

TimelineWriter::Track& TimelineWriter::track(TrackKind kind, std::uint32_t id, std::string_view label) {
  const auto [found, created] = tracks_.try_emplace({kind, id});
  Track& t = found->second;
  if (created) {
    // Numbered by kind, in order of appearance: tasks first, then idle and the handlers, then
    // the samples and the instants (Perfetto orders by sort index, speedscope by tid).
    const auto kind_index = static_cast<std::size_t>(kind);
    t.tid = static_cast<int>(kind_index) * tids_per_kind + ++tracks_of_kind_[kind_index];
    t.name.assign(label);
    t.sort_index = t.tid;
  }
  return t;
}

void TimelineWriter::SliceStack::push(std::string_view name) {
  if (depth_ == slots_.size()) slots_.emplace_back();
  Slice& slice = slots_[depth_++];
  slice.name.assign(name);
  slice.uncertain = false;
}

template <typename MakeLabel>
TimelineWriter::Track& TimelineWriter::track_made(TrackKind kind, std::uint32_t id, const MakeLabel& make_label) {
  const auto found = tracks_.find({kind, id});
  return found != tracks_.end() ? found->second : track(kind, id, make_label());
}

void TimelineWriter::open_slice(Track& track, std::string_view name, std::uint64_t at, OutBuffer& out) {
  track.open.push(name);
  if (!in_window_) return;
  announce(track, out);
  write_begin(track, name, at, out);
}

void TimelineWriter::write_begin(const Track& track, std::string_view name, std::uint64_t at, OutBuffer& out) {
  event_start(out, 'B', at);
  out += ",\"tid\":";
  append_uint(out, static_cast<std::uint64_t>(track.tid));
  out += ",\"name\":";
  append_json_string(out, name);
  out += '}';
}

void TimelineWriter::close_slice(Track& track, std::uint64_t at, OutBuffer& out) {
  if (track.open.empty()) return;
  const Slice& slice = track.open.pop();
  if (!in_window_) return;
  // The same name as its B (speedscope pairs them by name); an end that spanned a loss says so.
  event_start(out, 'E', at);
  out += ",\"tid\":";
  append_uint(out, static_cast<std::uint64_t>(track.tid));
  out += ",\"name\":";
  append_json_string(out, slice.name);
  if (slice.uncertain) out += ",\"args\":{\"uncertain\":true}";
  out += '}';
}

void TimelineWriter::close_all(std::uint64_t at, OutBuffer& out) {
  for (auto& [key, t] : tracks_) {
    while (!t.open.empty()) close_slice(t, at, out);
  }
}

// The window opens: what is already running starts there.
void TimelineWriter::enter_window(std::uint64_t at, OutBuffer& out) {
  in_window_ = true;
  for (auto& [key, t] : tracks_) {
    if (t.open.empty()) continue;
    announce(t, out);
    for (const Slice& slice : t.open.open()) write_begin(t, slice.name, at, out);
  }
}

void TimelineWriter::add(const Observation& o, OutBuffer& out) {
  if (done_) return;
  if (clock_.empty() && !o.clock.empty()) clock_.assign(o.clock);
  const std::uint64_t at = seen_ ? std::max(o.timestamp, last_time_) : o.timestamp;  // per track, never backwards
  if (options_.until && at >= *options_.until) {
    // A window that no record fell into still shows what ran through it.
    if (!in_window_ && options_.since && *options_.since < *options_.until) enter_window(*options_.since, out);
    close_all(*options_.until, out);
    done_ = true;
    return;
  }
  if (!in_window_ && (!options_.since || at >= *options_.since)) enter_window(options_.since.value_or(at), out);
  seen_ = true;
  last_time_ = at;
  Observation now = o;
  now.timestamp = at;
  switch (o.kind) {
    case ObservationKind::task_switch:
      return on_task_switch(now, out);
    case ObservationKind::idle_enter:
    case ObservationKind::idle_exit:
      return on_idle(o.kind == ObservationKind::idle_enter, at, out);
    case ObservationKind::exception:
      if (o.action == ExceptionAction::enter) on_handler_enter(exceptions_, now, out);
      if (o.action == ExceptionAction::exit) on_handler_exit(exceptions_, now, out);
      return;
    case ObservationKind::isr_enter:
      return on_handler_enter(isrs_, now, out);
    case ObservationKind::isr_exit:
      return on_handler_exit(isrs_, now, out);
    case ObservationKind::pc_sample:
      return on_sample(now, out);
    case ObservationKind::marker:
    case ObservationKind::text:
    case ObservationKind::counter:
    case ObservationKind::malformed:
      return on_instant(now, out);
    case ObservationKind::overflow:
      return on_overflow(at, out);
    case ObservationKind::other:
      return;
  }
}

void TimelineWriter::on_task_switch(const Observation& o, OutBuffer& out) {
  if (running_task_ && !idle_) close_slice(track(TrackKind::task, *running_task_, ""), o.timestamp, out);
  running_task_ = o.number;
  Track& next = track_made(TrackKind::task, o.number,
                           [&] { return o.name.empty() ? fmt::format("task {}", o.number) : std::string(o.name); });
  if (!o.name.empty() && next.name != o.name && !next.announced) next.name.assign(o.name);
  // While the CPU is idle the switch only says which task gets it back (trace-top alike).
  if (!idle_) open_slice(next, next.name, o.timestamp, out);
}

void TimelineWriter::on_idle(bool enter, std::uint64_t at, OutBuffer& out) {
  if (enter == idle_) return;
  Track& idle = track(TrackKind::idle, 0, "idle");
  if (enter) {
    if (running_task_) close_slice(track(TrackKind::task, *running_task_, ""), at, out);
    open_slice(idle, "idle", at, out);
  } else {
    close_slice(idle, at, out);
    if (running_task_) {
      Track& task = track(TrackKind::task, *running_task_, "");
      open_slice(task, task.name, at, out);
    }
  }
  idle_ = enter;
}

std::string TimelineWriter::handler_label(const HandlerStack& stack, std::uint32_t number, std::string_view name) {
  if (!name.empty()) return std::string(name);
  return fmt::format("{} {}", stack.own == TrackKind::exception ? "exception" : "ISR", number);
}

void TimelineWriter::on_handler_enter(HandlerStack& stack, const Observation& o, OutBuffer& out) {
  Track& own = track_made(stack.own, o.number, [&] { return handler_label(stack, o.number, o.name); });
  Track& nesting = track(stack.nesting, 0, stack.own == TrackKind::exception ? "exceptions" : "interrupts");
  stack.active.push_back(o.number);
  open_slice(own, own.name, o.timestamp, out);
  open_slice(nesting, own.name, o.timestamp, out);
}

void TimelineWriter::on_handler_exit(HandlerStack& stack, const Observation& o, OutBuffer& out) {
  const auto open = std::find(stack.active.rbegin(), stack.active.rend(), o.number);
  if (open == stack.active.rend()) return;  // entered before the trace began, or its entry was lost
  Track& nesting = track(stack.nesting, 0, "");
  // Handlers above it whose exits are missing end here, as uncertain (trace-top alike).
  while (stack.active.back() != o.number) {
    Track& own = track(stack.own, stack.active.back(), "");
    for (Track* t : {&own, &nesting}) {
      if (!t->open.empty()) t->open.top().uncertain = true;
      close_slice(*t, o.timestamp, out);
    }
    stack.active.pop_back();
  }
  close_slice(track(stack.own, o.number, ""), o.timestamp, out);
  close_slice(nesting, o.timestamp, out);
  stack.active.pop_back();
}

void TimelineWriter::on_sample(const Observation& o, OutBuffer& out) {
  // Only with symbols (a track of addresses would be noise): from the first sample that
  // names its function on. A sample without one ends the run; sleep is a run of its own.
  if (o.name.empty() && !symbols_seen_) return;
  symbols_seen_ = true;
  Track& samples = track(TrackKind::samples, 0, "PC samples");
  const std::string_view function = o.sleep ? std::string_view("[sleep]") : o.name;
  if (!samples.open.empty() && samples.open.top().name == function) return;
  close_slice(samples, o.timestamp, out);
  if (!function.empty()) open_slice(samples, function, o.timestamp, out);
}

void TimelineWriter::on_instant(const Observation& o, OutBuffer& out) {
  if (!in_window_) return;
  if (o.kind == ObservationKind::counter) {
    event_start(out, 'C', o.timestamp);
    out += ",\"tid\":0,\"name\":\"counter ";
    append_uint(out, o.number);
    out += '"';
    out += ",\"args\":{\"value\":";
    append_uint(out, o.value);
    out += "}}";
    return;
  }
  if (o.kind == ObservationKind::malformed) {
    mark_open_uncertain();  // bytes were skipped: packets were lost, as at an overflow
    event_start(out, 'i', o.timestamp);
    out += ",\"tid\":0,\"s\":\"g\",\"name\":";
    append_json_string(out, fmt::format("resync: {}", o.text));
    out += '}';
    return;
  }
  const bool marker = o.kind == ObservationKind::marker;
  Track& t = marker ? track(TrackKind::markers, 0, "markers")
                    : track_made(TrackKind::console, o.port, [&] { return fmt::format("console port {}", o.port); });
  announce(t, out);
  event_start(out, 'i', o.timestamp);
  out += ",\"tid\":";
  append_uint(out, static_cast<std::uint64_t>(t.tid));
  out += ",\"s\":\"t\",\"name\":";
  if (marker) {
    if (o.name.empty()) {
      out += "\"marker ";
      append_uint(out, o.number);
      out += '"';
    } else {
      append_json_string(out, o.name);
    }
    out += ",\"args\":{\"id\":";
    append_uint(out, o.number);
    out += '}';
  } else {
    const std::string_view shown = cut_utf8(o.text, max_instant_name);
    append_json_string(out, shown);
    if (shown.size() != o.text.size()) {
      out += ",\"args\":{\"text\":";
      append_json_string(out, o.text);
      out += '}';
    }
  }
  out += '}';
}

// Everything open spans a loss; the task's stretch too (trace-top marks them alike).
void TimelineWriter::mark_open_uncertain() {
  for (auto& [key, t] : tracks_) {
    for (Slice& slice : t.open.open()) slice.uncertain = true;
  }
}

void TimelineWriter::on_overflow(std::uint64_t at, OutBuffer& out) {
  mark_open_uncertain();
  if (!in_window_) return;
  event_start(out, 'i', at);
  out += ",\"tid\":0,\"s\":\"g\",\"name\":\"overflow: packets lost\"}";
}

void TimelineWriter::finish(OutBuffer& out) {
  if (!done_ && seen_) close_all(last_time_, out);
  done_ = true;
  out += "\n],\"otherData\":{\"producer\":\"tracepipe trace-timeline\",\"clock\":";
  append_json_string(out, clock_.empty() ? clock_name(RecordClock::none) : std::string_view(clock_));
  if (options_.cpu_hz != 0) {
    out += ",\"cpu_hz\":";
    append_uint(out, options_.cpu_hz);
  }
  out += "}}\n";
}

}  // namespace tp::analysis
