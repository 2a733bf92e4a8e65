// The record vocabulary: every name a record, a port map or a record tool spells, as typed
// constants with their name tables. This is the one place these names are written; the
// producers (decode, ports, chibios, palm, ekotrace, the simulator), the validator, the
// server's classifier and analysis all use it. A unit test keeps the tables equal to
// record.schema.json.
//
//   RecordKind      event.kind      Text, Marker, TaskSwitch, ... (Callisto's core kinds first)
//   ExceptionAction data.action     enter, exit, resume, reserved (ARMv7-M ARM D4.3.2)
//   DataTraceType   data.type       pc, address, read, write (ARMv7-M ARM D4.3.4)
//   DecoderType     a port map's    Text, TaskIsr, Marker, Counter, User, Raw
//                   "decoder"
//   RecordSource    source          itm, dwt, palm, chibios, ekotrace, sim, trace-top, ...
//   RecordClock     clock           cycles, ns, us, ticks, none
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tp {

// The kinds of record.schema.json, in its order: Callisto's TraceEvent kinds (text..raw),
// the ITM/DWT kinds itm-decode adds (exception..malformed), then the other producers'
// (chibi-pull, eko-collect, trace-top), then the fleet's (trace-ship's Loss), then
// SystemView's (sysview-decode).
enum class RecordKind : std::uint8_t {
  text,
  marker,
  task_switch,
  isr_enter,
  isr_exit,
  idle_enter,
  idle_exit,
  counter,
  raw,
  exception,
  pc_sample,
  data_trace,
  event_counter,
  overflow,
  hardware,
  extension,
  malformed,
  thread_exit,
  thread_stat,
  thread_usage,
  critical_usage,
  thread_info,
  switch_record,
  trigger,
  eko_event,
  eko_clock,
  top_summary,
  top_function,
  top_handler,
  top_task,
  loss,
  task_info,
  task_state,
  stack_info,
  timer_enter,
  timer_exit,
  data_sample,
  heap_event,
  system_info,
  user_event,
};

inline constexpr std::array<std::string_view, 40> record_kind_names{
    "Text",      "Marker",     "TaskSwitch", "IsrEnter",    "IsrExit",       "IdleEnter",  "IdleExit",     "Counter",
    "Raw",       "Exception",  "PcSample",   "DataTrace",   "EventCounter",  "Overflow",   "Hardware",     "Extension",
    "Malformed", "ThreadExit", "ThreadStat", "ThreadUsage", "CriticalUsage", "ThreadInfo", "SwitchRecord", "Trigger",
    "EkoEvent",  "EkoClock",   "TopSummary", "TopFunction", "TopHandler",    "TopTask",    "Loss",         "TaskInfo",
    "TaskState", "StackInfo",  "TimerEnter", "TimerExit",   "DataSample",    "HeapEvent",  "SystemInfo",   "UserEvent"};
static_assert(record_kind_names.size() == static_cast<std::size_t>(RecordKind::user_event) + 1);

// The Callisto TraceEvent kinds are the first nine (text..raw).
inline constexpr std::size_t callisto_kind_count = static_cast<std::size_t>(RecordKind::raw) + 1;

// trace-filter's and trace-serve's name for a frames line (it has no event, so no kind).
inline constexpr std::string_view frames_kind_name = "Itm";

[[nodiscard]] constexpr std::string_view kind_name(RecordKind kind) noexcept {
  return record_kind_names[static_cast<std::size_t>(kind)];
}
std::optional<RecordKind> record_kind_named(std::string_view name) noexcept;

// data.action of an Exception record: the function of the DWT exception trace packet.
enum class ExceptionAction : std::uint8_t { reserved = 0, enter = 1, exit = 2, resume = 3 };
inline constexpr std::array<std::string_view, 4> exception_action_names{"reserved", "enter", "exit", "resume"};
[[nodiscard]] constexpr std::string_view action_name(ExceptionAction action) noexcept {
  return exception_action_names[static_cast<std::size_t>(action) & 3];
}
std::optional<ExceptionAction> exception_action_named(std::string_view name) noexcept;

// data.type of a DataTrace record: which data trace packet it came from.
enum class DataTraceType : std::uint8_t { pc = 0, address = 1, read = 2, write = 3 };
inline constexpr std::array<std::string_view, 4> data_trace_type_names{"pc", "address", "read", "write"};
[[nodiscard]] constexpr std::string_view type_name(DataTraceType type) noexcept {
  return data_trace_type_names[static_cast<std::size_t>(type) & 3];
}

// How a port's writes become records (a port map's "decoder"); User takes a format.
enum class DecoderType : std::uint8_t { text, task_isr, marker, counter, user, raw };
inline constexpr std::array<std::string_view, 6> decoder_type_names{"Text",    "TaskIsr", "Marker",
                                                                    "Counter", "User",    "Raw"};
[[nodiscard]] constexpr std::string_view decoder_name(DecoderType type) noexcept {
  return decoder_type_names[static_cast<std::size_t>(type)];
}
std::optional<DecoderType> decoder_type_named(std::string_view name) noexcept;

// source: which producer wrote the record, in record.schema.json's order.
enum class RecordSource : std::uint8_t { itm, dwt, palm, chibios, ekotrace, sim, trace_top, trace_ship, sysview, rtt };
inline constexpr std::array<std::string_view, 10> record_source_names{
    "itm", "dwt", "palm", "chibios", "ekotrace", "sim", "trace-top", "trace-ship", "sysview", "rtt"};
static_assert(record_source_names.size() == static_cast<std::size_t>(RecordSource::rtt) + 1);
[[nodiscard]] constexpr std::string_view source_name(RecordSource source) noexcept {
  return record_source_names[static_cast<std::size_t>(source)];
}
std::optional<RecordSource> record_source_named(std::string_view name) noexcept;

// clock: the unit of timestamp, in record.schema.json's order: target cycles, nanoseconds
// (cycles and a known rate), host monotonic microseconds, ticks, none.
enum class RecordClock : std::uint8_t { cycles, ns, us, ticks, none };
inline constexpr std::array<std::string_view, 5> record_clock_names{"cycles", "ns", "us", "ticks", "none"};
static_assert(record_clock_names.size() == static_cast<std::size_t>(RecordClock::none) + 1);
[[nodiscard]] constexpr std::string_view clock_name(RecordClock clock) noexcept {
  return record_clock_names[static_cast<std::size_t>(clock)];
}
std::optional<RecordClock> record_clock_named(std::string_view name) noexcept;

// Every kind a record tool can select: record_kind_names, then frames_kind_name.
std::span<const std::string_view> known_record_kinds();

[[nodiscard]] bool is_known_record_kind(std::string_view name);

// A known kind that differs from `name` only in letter case (`text` -> Text), if any.
std::optional<std::string_view> kind_spelled_differently(std::string_view name);

}  // namespace tp
