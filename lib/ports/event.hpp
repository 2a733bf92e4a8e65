// Decoded events, before they are stamped with a time and written as records.
// Views (text, bytes) are only valid during the EventSink call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "records/vocabulary.hpp"

namespace tp {

// The kinds of record decoding produces: RecordKind's first 17 (text..malformed). What each
// carries is read through Event's named accessors.
using EventKind = RecordKind;
inline constexpr std::size_t event_kind_count = static_cast<std::size_t>(RecordKind::malformed) + 1;

[[nodiscard]] constexpr std::string_view event_kind_name(EventKind kind) noexcept {
  return kind_name(kind);
}

enum class EventSource : std::uint8_t { itm, dwt };

// EventSink::moment() for an event that began when it ended (most do).
inline constexpr std::uint64_t began_now = ~std::uint64_t{0};

// One decoded event. Made by the function of its kind; its values are read by name
// (marker_id(), from_task(), ...): each accessor belongs to the kinds its comment names.
class Event {
 public:
  EventKind kind = EventKind::raw;
  EventSource source = EventSource::itm;
  std::uint16_t port = 0;
  // Text: the message. Marker, IsrEnter: the name (empty when unknown). Malformed: why.
  std::string_view text;
  // Raw: the bytes written. Malformed: the bytes dropped (when kept).
  std::span<const std::uint8_t> bytes;
  // Where the stream was (EventSink::moment()) when the event began, for one assembled
  // over time: a text line began at its first character.
  std::uint64_t began = began_now;

  // A kind that carries no values (or only text/bytes): Text, Raw, IdleEnter, IdleExit, Overflow.
  static constexpr Event of(EventKind kind, std::uint16_t port = 0) noexcept { return Event(kind, port); }
  static constexpr Event marker(std::uint16_t port, std::uint32_t id, std::string_view name) noexcept {
    return with(EventKind::marker, port, id, 0, name);
  }
  static constexpr Event task_switch(std::uint16_t port, std::uint32_t from, std::uint32_t to) noexcept {
    return with(EventKind::task_switch, port, from, to);
  }
  static constexpr Event isr_enter(std::uint16_t port, std::uint32_t isr_id, std::string_view name) noexcept {
    return with(EventKind::isr_enter, port, isr_id, 0, name);
  }
  static constexpr Event isr_exit(std::uint16_t port, std::uint32_t isr_id) noexcept {
    return with(EventKind::isr_exit, port, isr_id);
  }
  static constexpr Event counter(std::uint16_t port, std::uint32_t id, std::uint64_t value) noexcept {
    return with(EventKind::counter, port, id, value);
  }
  static constexpr Event exception(std::uint16_t number, ExceptionAction action) noexcept {
    return dwt(with(EventKind::exception, 0, number, static_cast<std::uint64_t>(action)));
  }
  // A sleeping sample has no PC.
  static constexpr Event pc_sample(std::uint64_t pc, bool sleeping) noexcept {
    return dwt(with(EventKind::pc_sample, 0, sleeping ? 0 : pc, sleeping ? 1 : 0));
  }
  static constexpr Event data_trace(std::uint16_t comparator, DataTraceType type, std::uint64_t value,
                                    std::uint8_t size) noexcept {
    Event event = dwt(with(EventKind::data_trace, 0, comparator, value));
    event.c_ = static_cast<std::uint8_t>(type);
    event.d_ = size;
    return event;
  }
  static constexpr Event event_counter(std::uint8_t wrapped_counters) noexcept {
    return dwt(with(EventKind::event_counter, 0, wrapped_counters));
  }
  static constexpr Event hardware(std::uint8_t discriminator, std::uint64_t value, std::uint8_t size) noexcept {
    Event event = dwt(with(EventKind::hardware, 0, discriminator, value));
    event.d_ = size;
    return event;
  }
  static constexpr Event extension(std::uint8_t source_hardware, std::uint64_t value) noexcept {
    return with(EventKind::extension, 0, source_hardware, value);
  }
  static constexpr Event malformed(std::uint16_t port, std::string_view reason, std::uint64_t byte_count,
                                   std::span<const std::uint8_t> kept = {}) noexcept {
    Event event = with(EventKind::malformed, port, byte_count, 0, reason);
    event.bytes = kept;
    return event;
  }

  // Marker: its id. Counter: its id.
  [[nodiscard]] constexpr std::uint32_t id() const noexcept { return static_cast<std::uint32_t>(a_); }
  // TaskSwitch.
  [[nodiscard]] constexpr std::uint32_t from_task() const noexcept { return static_cast<std::uint32_t>(a_); }
  [[nodiscard]] constexpr std::uint32_t to_task() const noexcept { return static_cast<std::uint32_t>(b_); }
  // IsrEnter, IsrExit.
  [[nodiscard]] constexpr std::uint32_t isr_id() const noexcept { return static_cast<std::uint32_t>(a_); }
  // Exception: the exception number (ARMv7-M ARM B1.5.2) and what happened to it.
  [[nodiscard]] constexpr std::uint16_t exception_number() const noexcept { return static_cast<std::uint16_t>(a_); }
  [[nodiscard]] constexpr ExceptionAction action() const noexcept { return static_cast<ExceptionAction>(b_ & 3); }
  // PcSample.
  [[nodiscard]] constexpr std::uint64_t pc() const noexcept { return a_; }
  [[nodiscard]] constexpr bool sleeping() const noexcept { return b_ != 0; }
  // DataTrace.
  [[nodiscard]] constexpr std::uint16_t comparator() const noexcept { return static_cast<std::uint16_t>(a_); }
  [[nodiscard]] constexpr DataTraceType data_type() const noexcept { return static_cast<DataTraceType>(c_ & 3); }
  // EventCounter: the counters that wrapped, bit by bit (CPI, Exc, Sleep, LSU, Fold, Cyc).
  [[nodiscard]] constexpr std::uint8_t wrapped_counters() const noexcept { return static_cast<std::uint8_t>(a_); }
  // Hardware: the packet's discriminator. Extension: its SH bit.
  [[nodiscard]] constexpr std::uint8_t discriminator() const noexcept { return static_cast<std::uint8_t>(a_); }
  [[nodiscard]] constexpr std::uint8_t source_hardware() const noexcept { return static_cast<std::uint8_t>(a_); }
  // Counter, DataTrace, Hardware, Extension: the value carried.
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return b_; }
  // DataTrace, Hardware: the payload size in bytes (1, 2 or 4).
  [[nodiscard]] constexpr std::uint8_t size() const noexcept { return d_; }
  // Malformed: how many bytes were dropped.
  [[nodiscard]] constexpr std::uint64_t byte_count() const noexcept { return a_; }

  // Every value at once, for code that stores events whole (the background formatter's
  // staging); what they mean is the accessors' business.
  struct Values {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::uint8_t c = 0;
    std::uint8_t d = 0;
  };
  [[nodiscard]] constexpr Values values() const noexcept { return {a_, b_, c_, d_}; }
  static constexpr Event restored(EventKind kind, const Values& values) noexcept {
    Event event(kind, 0);
    event.a_ = values.a;
    event.b_ = values.b;
    event.c_ = values.c;
    event.d_ = values.d;
    return event;
  }

  constexpr Event() noexcept = default;

 private:
  constexpr Event(EventKind kind_of, std::uint16_t port_of) noexcept : kind(kind_of), port(port_of) {}
  static constexpr Event with(EventKind kind, std::uint16_t port, std::uint64_t a, std::uint64_t b = 0,
                              std::string_view text = {}) noexcept {
    Event event(kind, port);
    event.a_ = a;
    event.b_ = b;
    event.text = text;
    return event;
  }
  static constexpr Event dwt(Event event) noexcept {
    event.source = EventSource::dwt;
    return event;
  }
  std::uint64_t a_ = 0;
  std::uint64_t b_ = 0;
  std::uint8_t c_ = 0;
  std::uint8_t d_ = 0;
};

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
