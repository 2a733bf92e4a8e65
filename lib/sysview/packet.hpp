// SEGGER SystemView's stream as SEGGER_SYSVIEW.c writes it (its "Packet format" comment):
//
//   ID 0..23   <ID><fields><TimeStampDelta>          fields fixed per ID, no length
//   ID 24..    <ID><Length><payload><TimeStampDelta>  ID 31: <ID_EX> first in the payload
//
// IDs, lengths, fields and the delta are variable-length integers: 7 bits per byte, least
// significant first, bit 7 set on every byte but the last (at most 5 bytes for a U32). A
// string is a length byte (255: a 16-bit big-endian length follows) and its bytes. The sync
// is 10 zero bytes (five NOP packets with delta 0). The host commands go the other way, one
// byte each, on the down buffer of the same RTT channel.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tp::sysview {

// SEGGER_SYSVIEW.h SYSVIEW_EVTID_*.
enum class EventId : std::uint32_t {
  nop = 0,
  overflow = 1,
  isr_enter = 2,
  isr_exit = 3,
  task_start_exec = 4,
  task_stop_exec = 5,
  task_start_ready = 6,
  task_stop_ready = 7,
  task_create = 8,
  task_info = 9,
  trace_start = 10,
  trace_stop = 11,
  systime_cycles = 12,
  systime_us = 13,
  sysdesc = 14,
  mark_start = 15,
  mark_stop = 16,
  idle = 17,
  isr_to_scheduler = 18,
  timer_enter = 19,
  timer_exit = 20,
  stack_info = 21,
  module_desc = 22,
  data_sample = 23,
  init = 24,
  name_resource = 25,
  print_formatted = 26,
  num_modules = 27,
  end_call = 28,
  task_terminate = 29,
  extended = 31,
};

// SEGGER_SYSVIEW.h SYSVIEW_EVTID_EX_*: the first field of an extended (ID 31) packet.
enum class ExtendedId : std::uint32_t {
  mark = 0,
  name_marker = 1,
  heap_define = 2,
  heap_alloc = 3,
  heap_alloc_ex = 4,
  heap_free = 5,
  register_data = 6,
};

// The host's commands (SEGGER_SYSVIEW_COMMAND_ID_*) are written once, where they are sent:
// lib/rtt/capture_options.hpp (rtt-capture; rtt cannot use this layer without moving above it).

inline constexpr std::size_t sync_length = 10;
// The first ID with a length field, and the first OS/user-defined ID.
inline constexpr std::uint32_t first_sized_id = 24;
inline constexpr std::uint32_t first_user_id = 32;
// SEGGER_SYSVIEW_MAX_ARGUMENTS is 16 by default; a packet with more is taken as malformed.
inline constexpr std::size_t max_arguments = 32;
inline constexpr std::size_t max_fields = 8;

// One packet, its strings pointing into the bytes it was decoded from.
struct Packet {
  std::uint32_t id = 0;
  std::uint32_t extended_id = 0;  // ID 31 only
  std::uint32_t delta = 0;        // timestamp delta since the previous packet
  std::array<std::uint32_t, max_fields> values{};
  std::uint8_t value_count = 0;
  std::string_view text;  // the packet's string (task name, description, format), if it has one
  std::string_view unit;  // register-data: the unit string
  std::array<std::uint32_t, max_arguments> arguments{};  // print-formatted's arguments
  std::uint8_t argument_count = 0;
  std::span<const std::uint8_t> payload;  // IDs >= 24: the whole payload (user events' data)
  std::uint32_t size = 0;                 // bytes of the packet in the stream

  [[nodiscard]] std::uint32_t value(std::size_t i) const noexcept { return i < value_count ? values[i] : 0; }
};

enum class ParseStatus : std::uint8_t { complete, need_more, malformed };

struct ParseResult {
  ParseStatus status = ParseStatus::need_more;
  std::size_t consumed = 0;  // complete: the packet's bytes
  std::string_view reason;   // malformed: why
};

// Decodes the packet at the start of `bytes` (whole or cut short). Pure; no allocation.
ParseResult parse_packet(std::span<const std::uint8_t> bytes, Packet& packet) noexcept;

// The name of a known ID ("TaskStartExec"), or empty.
std::string_view event_name(std::uint32_t id) noexcept;

}  // namespace tp::sysview
