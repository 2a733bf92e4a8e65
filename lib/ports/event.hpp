// Decoded events, before they are stamped with a time and written as records.
// Views (text, bytes) are only valid during the EventSink call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tp {

enum class EventKind : std::uint8_t {
  // Callisto core kinds
  text,         // text = message
  marker,       // a = id, text = name (optional)
  task_switch,  // a = from_task, b = to_task
  isr_enter,    // a = isr_id, text = name (optional)
  isr_exit,     // a = isr_id
  idle_enter,
  idle_exit,
  counter,  // a = counter_id, b = value
  raw,      // bytes
  // tracepipe extended kinds
  exception,      // a = number (its name: itm::exception_name), b = action (itm::ExceptionAction)
  pc_sample,      // a = pc, b = 1 when sleeping
  data_trace,     // a = comparator, b = value, c = DataTraceType, d = size in bytes
  event_counter,  // a = counter bits (CPI, Exc, Sleep, LSU, Fold, Cyc)
  overflow,
  hardware,   // unknown hardware packet: a = discriminator, b = value, d = size
  extension,  // unknown extension packet: a = SH, b = EX value
  malformed,  // text = reason, a = byte count, bytes = the bytes (if kept)
};

enum class DataTraceType : std::uint8_t { pc = 0, address = 1, read = 2, write = 3 };

enum class EventSource : std::uint8_t { itm, dwt };

// EventSink::moment() for an event that began when it ended (most do).
inline constexpr std::uint64_t began_now = ~std::uint64_t{0};

struct Event {
  EventKind kind = EventKind::raw;
  EventSource source = EventSource::itm;
  std::uint16_t port = 0;
  std::uint8_t c = 0;
  std::uint8_t d = 0;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::string_view text;
  std::span<const std::uint8_t> bytes;
  // Where the stream was (EventSink::moment()) when the event began, for one assembled
  // over time: a text line began at its first character.
  std::uint64_t began = began_now;
};

// The record kinds of the schema (DESIGN.md), by EventKind: a table, as itm-decode names
// millions of records a second.
inline constexpr std::array<std::string_view, 17> event_kind_names{
    "Text",      "Marker",   "TaskSwitch", "IsrEnter",     "IsrExit",  "IdleEnter", "IdleExit",  "Counter",  "Raw",
    "Exception", "PcSample", "DataTrace",  "EventCounter", "Overflow", "Hardware",  "Extension", "Malformed"};
static_assert(event_kind_names.size() == static_cast<std::size_t>(EventKind::malformed) + 1);

[[nodiscard]] constexpr std::string_view event_kind_name(EventKind kind) noexcept {
  const auto index = static_cast<std::size_t>(kind);
  return index < event_kind_names.size() ? event_kind_names[index] : "Raw";
}
std::string_view data_trace_type_name(DataTraceType type) noexcept;

class EventSink {
 public:
  EventSink() = default;
  EventSink(const EventSink&) = default;
  EventSink& operator=(const EventSink&) = default;
  EventSink(EventSink&&) = default;
  EventSink& operator=(EventSink&&) = default;
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
  // An opaque mark of where the stream is now (the session counts timestamp packets), so an
  // event can say when it began; sinks without time stay at 0. Not virtual: port decoders
  // ask for it on every write.
  [[nodiscard]] std::uint64_t moment() const noexcept { return moment_; }

 protected:
  void set_moment(std::uint64_t moment) noexcept { moment_ = moment; }

 private:
  std::uint64_t moment_ = 0;
};

}  // namespace tp
