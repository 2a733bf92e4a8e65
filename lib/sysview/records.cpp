#include "sysview/records.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "records/record_line.hpp"
#include "sysview/host_printf.hpp"

namespace tp::sysview {
namespace {

constexpr std::string_view source = source_name(RecordSource::sysview);

// SEGGER_SYSVIEW.h SEGGER_SYSVIEW_LOG / WARNING / ERROR: PrintFormatted's options.
std::string_view level_name(std::uint32_t options) {
  switch (options & 3U) {
    case 1:
      return "warning";
    case 2:
      return "error";
    default:
      return "log";
  }
}

__extension__ using uint128 = unsigned __int128;  // ticks * 1e9 before the division

// `ticks` at `hz` in ns; past 2^64 ns (584 years: a wrong rate, or a stream that is not
// SystemView's) refused rather than wrapped.
std::uint64_t ticks_in_ns(std::uint64_t ticks, std::uint64_t hz) {
  const uint128 ns = uint128{ticks} * 1'000'000'000U / hz;
  if (ns > std::numeric_limits<std::uint64_t>::max()) {
    throw Error(ExitCode::bad_input,
                fmt::format("a timestamp of {} ticks at {} Hz is past 2^64 ns (584 years): the rate is wrong (Init's "
                            "or --cpu-hz), or the stream is not SystemView's; --ticks keeps the ticks",
                            ticks, hz));
  }
  return static_cast<std::uint64_t>(ns);
}

void add_name(RecordData& data, std::string_view key, const std::unordered_map<std::uint32_t, std::string>& names,
              std::uint32_t id) {
  const auto found = names.find(id);
  if (found != names.end()) data.string(key, found->second);
}

}  // namespace

void RecordWriter::choose_clock() {
  if (settings_.timestamp_hz != 0) hz_ = settings_.timestamp_hz;
  clock_ = clock_name(hz_ != 0 && !settings_.ticks ? RecordClock::ns : RecordClock::cycles);
}

RecordWriter::Head RecordWriter::head() {
  // A held record may still get its clock from a rate that comes after it (Init after
  // TraceStart, or after bytes skipped before the first sync): it is chosen at the release.
  if (!clock_ && (!placing_ || settings_.timestamp_hz != 0 || settings_.ticks)) choose_clock();
  if (placing_) held_.push_back({time_, hold_.size(), clock_.has_value()});  // the record starts here
  ++counters_.records;
  if (!clock_) return {time_, unchosen_clock};
  if (*clock_ == clock_name(RecordClock::ns)) return {ticks_in_ns(time_, hz_), *clock_};
  return {time_, *clock_};
}

std::optional<std::string_view> RecordWriter::task_name(std::uint32_t task) const {
  const auto found = task_names_.find(task);
  if (found == task_names_.end()) return std::nullopt;
  return found->second;
}

// SEGGER's system description: comma-separated KEY=VALUE, "I#n=name" naming interrupt n.
void RecordWriter::describe(std::string_view description) {
  while (!description.empty()) {
    const std::size_t comma = description.find(',');
    const std::string_view item = description.substr(0, comma);
    description = comma == std::string_view::npos ? std::string_view{} : description.substr(comma + 1);
    if (!item.starts_with("I#")) continue;
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) continue;
    std::uint32_t number = 0;
    bool digits = equals > 2;
    for (const char c : item.substr(2, equals - 2)) {
      if (c < '0' || c > '9' || number > 100'000'000) {
        digits = false;
        break;
      }
      number = number * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (digits) isr_names_[number] = std::string(item.substr(equals + 1));
  }
}

std::uint64_t RecordWriter::in_clock(std::uint64_t ticks) const {
  if (clock_ && *clock_ == clock_name(RecordClock::ns)) return ticks_in_ns(ticks, hz_);
  return ticks;
}

// The records held before the target's clock was known, written with their times moved by
// `offset` ticks (the system time's value minus the sum of deltas at it).
void RecordWriter::release_held(std::int64_t offset, OutBuffer& out) {
  if (!clock_) choose_clock();
  const std::string_view text = hold_.view();
  std::size_t entry = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::size_t line_end = end == std::string_view::npos ? text.size() : end + 1;
    while (entry + 1 < held_.size() && held_[entry + 1].start <= at) ++entry;
    const std::int64_t placed = static_cast<std::int64_t>(held_[entry].time) + offset;
    const std::string_view line = text.substr(at, line_end - at);
    const std::size_t comma = line.find(',');  // after {"timestamp":T
    const std::uint64_t timestamp = in_clock(placed < 0 ? 0 : static_cast<std::uint64_t>(placed));
    out += R"({"timestamp":)";
    char* p = out.ensure(max_uint_digits);
    out.commit_to(write_uint(p, timestamp));
    const std::string_view rest = line.substr(comma);
    // A record held before the clock was chosen ends with the clock it was written with
    // (unchosen_clock: RecordLine writes the clock last).
    static const std::string unchosen_tail = std::string(R"("clock":")").append(unchosen_clock).append(R"("})");
    const std::size_t tail = held_[entry].clocked ? std::string_view::npos : rest.rfind(unchosen_tail);
    if (tail == std::string_view::npos) {
      out += rest;
    } else {
      out += rest.substr(0, tail);
      out += R"("clock":")";
      out += *clock_;
      out += R"("})";
      out += rest.substr(tail + unchosen_tail.size());
    }
    at = line_end;
  }
  hold_.clear();
  held_.clear();
  placing_ = false;
}

void RecordWriter::packet(const Packet& p, OutBuffer& out) {
  time_ += p.delta;
  const auto id = static_cast<EventId>(p.id);
  if (id == EventId::trace_start && time_placed_) {
    // A new recording, perhaps of a target that was reset: its own system time places it.
    time_placed_ = false;
    placing_ = true;
  }
  if (placing_ && id == EventId::systime_cycles) {
    release_held(static_cast<std::int64_t>(p.value(0)) - static_cast<std::int64_t>(time_), out);
  } else if (placing_ && held_.size() >= max_held) {
    release_held(0, out);  // no system time in sight: the times stay relative to the start
    time_placed_ = true;
  }
  dispatch(p, placing_ ? hold_ : out);
}

void RecordWriter::dispatch(const Packet& p, OutBuffer& out) {
  const auto id = static_cast<EventId>(p.id);
  // SEGGER_SYSVIEW_Start sends TraceStart, then Init with the timestamp rate: the rate chooses
  // the clock of the records held until the system time (TraceStart's among them).
  if (id == EventId::init && p.value(0) != 0 && !clock_) hz_ = p.value(0);
  if (id == EventId::trace_start) {  // a new recording: what ran before is not known to run now
    running_.reset();
    last_task_ = 0;
    idle_ = false;
    isr_stack_.clear();
  }
  switch (id) {
    case EventId::nop:
      return;
    case EventId::isr_enter:
    case EventId::isr_exit:
    case EventId::isr_to_scheduler:
      isr_packet(p, out);
      return;
    case EventId::task_start_exec:
    case EventId::task_stop_exec:
    case EventId::task_start_ready:
    case EventId::task_stop_ready:
    case EventId::task_create:
    case EventId::task_terminate:
    case EventId::task_info:
    case EventId::stack_info:
    case EventId::idle:
      task_packet(p, out);
      return;
    case EventId::extended:
      extended_packet(p, out);
      return;
    case EventId::trace_start:
    case EventId::trace_stop:
    case EventId::systime_cycles:
    case EventId::systime_us:
    case EventId::sysdesc:
    case EventId::module_desc:
    case EventId::init:
    case EventId::name_resource:
    case EventId::num_modules:
      info_packet(p, out);
      return;
    default:
      event_packet(p, out);
      return;
  }
}

// Overflow, marks, timers, data samples, prints, and the events tracepipe only carries.
void RecordWriter::event_packet(const Packet& p, OutBuffer& out) {
  const auto id = static_cast<EventId>(p.id);
  switch (id) {
    case EventId::overflow: {
      // SEGGER_SYSVIEW.c's DropCount is never cleared and does not count the first packet
      // of each overflow (that one only switches to the overflow state): this overflow's
      // losses are the counter's rise since the last one, plus that first packet.
      const std::uint32_t target_count = p.value(0);
      // A counter that went back belongs to a target that was reset (it counts from 0 again).
      const std::uint32_t since = target_count >= last_drop_count_ ? last_drop_count_ : 0;
      const std::uint64_t dropped = std::uint64_t{target_count - since} + 1;
      last_drop_count_ = target_count;
      ++counters_.overflows;
      counters_.dropped += dropped;
      const Head h = head();
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::overflow, source});
      r.data().uint("dropped", dropped).uint("target_count", target_count);
      r.end();
      return;
    }
    case EventId::mark_start:
    case EventId::mark_stop: {
      const Head h = head();
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::marker, source});
      r.data().uint("id", p.value(0));
      add_name(r.data(), "name", marker_names_, p.value(0));
      r.data().name("phase", id == EventId::mark_start ? "start" : "stop");
      r.end();
      return;
    }
    case EventId::timer_enter:
    case EventId::timer_exit: {
      const Head h = head();
      const bool enter = id == EventId::timer_enter;
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, enter ? RecordKind::timer_enter : RecordKind::timer_exit,
                         source});
      if (enter) {
        r.data().uint("timer", p.value(0));
        add_name(r.data(), "name", resource_names_, p.value(0));
      } else {
        r.data().empty();
      }
      r.end();
      return;
    }
    case EventId::data_sample: {
      const Head h = head();
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::data_sample, source});
      r.data().uint("id", p.value(0)).uint("raw", p.value(1)).number("value", std::bit_cast<float>(p.value(1)));
      r.end();
      return;
    }
    case EventId::print_formatted: {
      text_.clear();
      format_host(p.text, std::span(p.arguments.data(), p.argument_count), text_);
      const Head h = head();
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::text, source});
      r.data().string("message", text_).name("level", level_name(p.value(0)));
      r.end();
      return;
    }
    default: {  // EndCall, OS- and user-defined events
      const Head h = head();
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::user_event, source});
      r.data().uint("event_id", p.id).bytes("data", p.payload);
      r.end();
      return;
    }
  }
}

void RecordWriter::task_packet(const Packet& p, OutBuffer& out) {
  const auto id = static_cast<EventId>(p.id);
  const std::uint32_t task = p.value(0);
  if (id == EventId::task_stop_exec) {  // the next start (or idle) is the record
    if (running_) last_task_ = *running_;
    running_.reset();
    return;
  }
  if (id == EventId::idle) {
    if (running_) last_task_ = *running_;
    running_.reset();
    if (idle_) return;
    idle_ = true;
    const Head h = head();
    RecordLine(out, {h.timestamp, h.clock, settings_.port, RecordKind::idle_enter, source}).end();
    return;
  }
  if (id == EventId::task_info) task_names_[task] = std::string(p.text);
  const Head h = head();
  if (id == EventId::task_start_exec) {
    if (idle_) {
      idle_ = false;
      RecordLine(out, {h.timestamp, h.clock, settings_.port, RecordKind::idle_exit, source}).end();
      ++counters_.records;
    }
    const std::uint32_t from = running_.value_or(last_task_);
    RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::task_switch, source});
    r.data().uint("from_task", from).uint("to_task", task);
    if (const auto name = task_name(from)) r.data().string("from_name", *name);
    if (const auto name = task_name(task)) r.data().string("to_name", *name);
    r.end();
    running_ = task;
    last_task_ = task;
    return;
  }
  if (id == EventId::task_info) {
    RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::task_info, source});
    r.data().uint("task", task).string("name", p.text).uint("prio", p.value(1));
    r.end();
    return;
  }
  if (id == EventId::stack_info) {
    RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::stack_info, source});
    r.data().uint("task", task).uint("base", p.value(1)).uint("size", p.value(2)).uint("used", p.value(3));
    if (const auto name = task_name(task)) r.data().string("name", *name);
    r.end();
    return;
  }
  std::string_view state = "created";
  if (id == EventId::task_start_ready) state = "ready";
  if (id == EventId::task_stop_ready) state = "blocked";
  if (id == EventId::task_terminate) state = "terminated";
  RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::task_state, source});
  r.data().uint("task", task).name("state", state);
  if (id == EventId::task_stop_ready) r.data().uint("cause", p.value(1));
  if (const auto name = task_name(task)) r.data().string("name", *name);
  r.end();
}

void RecordWriter::isr_packet(const Packet& p, OutBuffer& out) {
  const Head h = head();
  if (static_cast<EventId>(p.id) == EventId::isr_enter) {
    isr_stack_.push_back(p.value(0));
    RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::isr_enter, source});
    r.data().uint("isr_id", p.value(0));
    add_name(r.data(), "name", isr_names_, p.value(0));
    r.end();
    return;
  }
  std::uint32_t isr = 0;
  if (isr_stack_.empty()) {
    ++counters_.unmatched_exits;
  } else {
    isr = isr_stack_.back();
    isr_stack_.pop_back();
  }
  RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::isr_exit, source});
  r.data().uint("isr_id", isr);
  if (static_cast<EventId>(p.id) == EventId::isr_to_scheduler) r.data().boolean("to_scheduler", true);
  r.end();
}

void RecordWriter::info_packet(const Packet& p, OutBuffer& out) {
  const auto id = static_cast<EventId>(p.id);
  if (id == EventId::systime_cycles) {
    if (!time_placed_) {
      time_ = p.value(0);
      time_placed_ = true;
    } else if (static_cast<std::uint32_t>(time_) != p.value(0)) {
      ++counters_.time_mismatches;
    }
  }
  if (id == EventId::sysdesc) describe(p.text);
  if (id == EventId::name_resource) resource_names_[p.value(0)] = std::string(p.text);
  const Head h = head();
  RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::system_info, source});
  RecordData& d = r.data();
  switch (id) {
    case EventId::trace_start:
      d.name("item", "trace_start");
      break;
    case EventId::trace_stop:
      d.name("item", "trace_stop");
      break;
    case EventId::systime_cycles:
      d.name("item", "systime").uint("cycles", p.value(0));
      break;
    case EventId::systime_us:
      d.name("item", "systime").uint("us", (std::uint64_t{p.value(1)} << 32U) | p.value(0));
      break;
    case EventId::sysdesc:
      d.name("item", "description").string("text", p.text);
      break;
    case EventId::module_desc:
      d.name("item", "module").uint("module", p.value(0)).uint("event_offset", p.value(1)).string("text", p.text);
      break;
    case EventId::init:
      d.name("item", "init").uint("sys_hz", p.value(0)).uint("cpu_hz", p.value(1));
      d.uint("ram_base", p.value(2)).uint("id_shift", p.value(3));
      break;
    case EventId::name_resource:
      d.name("item", "resource").uint("id", p.value(0)).string("text", p.text);
      break;
    default:  // num modules
      d.name("item", "modules").uint("count", p.value(0));
      break;
  }
  r.end();
}

void RecordWriter::extended_packet(const Packet& p, OutBuffer& out) {
  const auto ex = static_cast<ExtendedId>(p.extended_id);
  if (ex == ExtendedId::name_marker) marker_names_[p.value(0)] = std::string(p.text);
  const Head h = head();
  switch (ex) {
    case ExtendedId::mark: {
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::marker, source});
      r.data().uint("id", p.value(0));
      add_name(r.data(), "name", marker_names_, p.value(0));
      r.end();
      return;
    }
    case ExtendedId::name_marker:
    case ExtendedId::register_data: {
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::system_info, source});
      r.data().name("item", ex == ExtendedId::name_marker ? "marker" : "data").uint("id", p.value(0));
      r.data().string("text", p.text);
      if (!p.unit.empty()) r.data().string("unit", p.unit);
      r.end();
      return;
    }
    case ExtendedId::heap_define:
    case ExtendedId::heap_alloc:
    case ExtendedId::heap_alloc_ex:
    case ExtendedId::heap_free: {
      RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::heap_event, source});
      RecordData& d = r.data();
      const std::string_view action = ex == ExtendedId::heap_define ? "define"
                                      : ex == ExtendedId::heap_free ? "free"
                                                                    : "alloc";
      d.name("action", action).uint("heap", p.value(0)).uint("address", p.value(1));
      if (ex != ExtendedId::heap_free) d.uint("size", p.value(2));
      if (ex == ExtendedId::heap_define) d.uint("metadata", p.value(3));
      if (ex == ExtendedId::heap_alloc_ex) d.uint("tag", p.value(3));
      r.end();
      return;
    }
  }
  RecordLine r(out, {h.timestamp, h.clock, settings_.port, RecordKind::user_event, source});
  r.data().uint("event_id", p.id).uint("extended_id", p.extended_id).bytes("data", p.payload);
  r.end();
}

void RecordWriter::finish(OutBuffer& out) {
  if (placing_) release_held(0, out);
}

void RecordWriter::skipped(std::string_view reason, std::uint64_t bytes, OutBuffer& out) {
  OutBuffer& target = placing_ ? hold_ : out;  // placed with the records around it
  const Head h = head();
  RecordLine r(target, {h.timestamp, h.clock, settings_.port, RecordKind::malformed, source});
  r.data().string("reason", reason).uint("bytes", bytes);
  r.end();
}

}  // namespace tp::sysview
