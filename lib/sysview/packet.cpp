#include "sysview/packet.hpp"

#include <array>

namespace tp::sysview {
namespace {

// Strings and payloads are bounded: SEGGER_SYSVIEW_MAX_STRING_LEN is 128 by default and a
// string's length field is at most 16 bits; a longer payload is not a packet.
constexpr std::uint32_t max_payload = 65'535 + 16;

enum class Read : std::uint8_t { ok, short_input, bad };

struct Cursor {
  const std::uint8_t* p;
  const std::uint8_t* end;

  // SEGGER_SYSVIEW.c ENCODE_U32: 7 bits per byte, low bits first; a U32 takes at most 5.
  Read u32(std::uint32_t& value) noexcept {
    std::uint64_t result = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      if (p == end) return Read::short_input;
      const std::uint8_t byte = *p++;
      result |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
      if ((byte & 0x80U) == 0) {
        if (result > 0xFFFF'FFFFU) return Read::bad;
        value = static_cast<std::uint32_t>(result);
        return Read::ok;
      }
    }
    return Read::bad;
  }

  // SEGGER_SYSVIEW.c _EncodeStr: a length byte, 255 announcing a 16-bit big-endian length.
  Read string(std::string_view& text) noexcept {
    if (p == end) return Read::short_input;
    std::size_t length = *p++;
    if (length == 255) {
      if (end - p < 2) return Read::short_input;
      length = (static_cast<std::size_t>(p[0]) << 8U) | p[1];
      p += 2;
    }
    if (static_cast<std::size_t>(end - p) < length) return Read::short_input;
    text = std::string_view(reinterpret_cast<const char*>(p), length);
    p += length;
    return Read::ok;
  }
};

// The fields of the packets without a length (IDs 0..23): U a U32, S a string. From the
// SEGGER_SYSVIEW.c functions that send them (SEGGER_SYSVIEW_SendTaskInfo: id, prio, name...).
constexpr std::array<std::string_view, first_sized_id> fixed_layouts{
    "",      // nop
    "U",     // overflow: packets dropped
    "U",     // isr enter: interrupt id
    "",      // isr exit
    "U",     // task start exec: task
    "",      // task stop exec
    "U",     // task start ready: task
    "UU",    // task stop ready: task, cause
    "U",     // task create: task
    "UUS",   // task info: task, priority, name
    "",      // trace start
    "",      // trace stop
    "U",     // systime cycles
    "UU",    // systime us: low, high
    "S",     // sysdesc
    "U",     // mark start
    "U",     // mark stop
    "",      // idle
    "",      // isr to scheduler
    "U",     // timer enter: timer
    "",      // timer exit
    "UUUU",  // stack info: task, base, size, used
    "UUS",   // module desc: module, event offset, description
    "UU",    // data sample: id, value (a float's bits or an integer)
};

Read read_fields(Cursor& c, std::string_view layout, Packet& packet) noexcept {
  for (const char field : layout) {
    Read r = Read::ok;
    if (field == 'U') {
      r = c.u32(packet.values[packet.value_count]);
      if (r == Read::ok) ++packet.value_count;
    } else {
      r = c.string(packet.text);
    }
    if (r != Read::ok) return r;
  }
  return Read::ok;
}

// Up to `limit` more U32s, as many as the payload holds (fields a target's version may omit).
Read read_optional_values(Cursor& c, std::size_t limit, Packet& packet) noexcept {
  while (c.p != c.end && limit-- > 0 && packet.value_count < max_fields) {
    const Read r = c.u32(packet.values[packet.value_count]);
    if (r != Read::ok) return r;
    ++packet.value_count;
  }
  return Read::ok;
}

// The payload of a packet with a length: its fields where tracepipe knows them.
std::string_view parse_payload(std::span<const std::uint8_t> payload, Packet& packet) noexcept {
  Cursor c{payload.data(), payload.data() + payload.size()};
  const auto bad = [&](Read r, std::string_view what) -> std::string_view { return r == Read::ok ? "" : what; };
  switch (static_cast<EventId>(packet.id)) {
    case EventId::init:  // sys freq, cpu freq, RAM base, id shift
      return bad(read_optional_values(c, 4, packet), "init: bad field");
    case EventId::name_resource:
      return bad(read_fields(c, "US", packet), "name resource: fields past the packet's end");
    case EventId::print_formatted: {
      Read r = read_fields(c, "SUU", packet);  // format, options, argument count
      if (r != Read::ok) return "print formatted: fields past the packet's end";
      if (packet.values[1] > max_arguments) return "print formatted: too many arguments";
      for (std::uint32_t i = 0; i < packet.values[1]; ++i) {
        r = c.u32(packet.arguments[i]);
        if (r != Read::ok) return "print formatted: arguments past the packet's end";
      }
      packet.argument_count = static_cast<std::uint8_t>(packet.values[1]);
      return {};
    }
    case EventId::num_modules:
    case EventId::task_terminate:
      return bad(read_fields(c, "U", packet), "a field past the packet's end");
    case EventId::end_call:  // event id [, a U32 result]
      return bad(read_optional_values(c, 2, packet), "end call: bad field");
    case EventId::extended: {
      if (c.u32(packet.extended_id) != Read::ok) return "extended: no extended id";
      switch (static_cast<ExtendedId>(packet.extended_id)) {
        case ExtendedId::mark:
          return bad(read_fields(c, "U", packet), "mark: no marker id");
        case ExtendedId::name_marker:
          return bad(read_fields(c, "US", packet), "name marker: fields past the packet's end");
        case ExtendedId::heap_define:
        case ExtendedId::heap_alloc_ex:
          return bad(read_fields(c, "UUUU", packet), "heap: fields past the packet's end");
        case ExtendedId::heap_alloc:
          return bad(read_fields(c, "UUU", packet), "heap alloc: fields past the packet's end");
        case ExtendedId::heap_free:
          return bad(read_fields(c, "UU", packet), "heap free: fields past the packet's end");
        case ExtendedId::register_data: {  // id, name [, type, offset, min, max [, scale [, unit]]]
          if (read_fields(c, "US", packet) != Read::ok) return "register data: fields past the packet's end";
          std::uint32_t field = 0;
          while (c.p != c.end && packet.value_count < 6) {
            if (c.u32(field) != Read::ok) return "register data: bad field";
            packet.values[packet.value_count++] = field;
          }
          if (c.p != c.end && c.string(packet.unit) != Read::ok) return "register data: bad unit";
          return {};
        }
      }
      return {};  // an extended event of a later version: kept as its payload
    }
    default:
      return {};  // OS- and user-defined events: their payload as it is
  }
}

}  // namespace

ParseResult parse_packet(std::span<const std::uint8_t> bytes, Packet& packet) noexcept {
  packet.value_count = 0;
  packet.argument_count = 0;
  packet.extended_id = 0;
  packet.text = {};
  packet.unit = {};
  packet.payload = {};
  Cursor c{bytes.data(), bytes.data() + bytes.size()};
  const auto stop = [&](Read r, std::string_view reason) {
    return r == Read::short_input ? ParseResult{ParseStatus::need_more, 0, {}}
                                  : ParseResult{ParseStatus::malformed, 0, reason};
  };
  Read r = c.u32(packet.id);
  if (r != Read::ok) return stop(r, "event id over 5 bytes");
  if (packet.id < first_sized_id) {
    r = read_fields(c, fixed_layouts[packet.id], packet);
    if (r != Read::ok) return stop(r, "variable-length field over 5 bytes");
  } else {
    std::uint32_t length = 0;
    r = c.u32(length);
    if (r != Read::ok) return stop(r, "length over 5 bytes");
    if (length > max_payload) return {ParseStatus::malformed, 0, "payload longer than 64 KiB"};
    if (static_cast<std::size_t>(c.end - c.p) < length) return {ParseStatus::need_more, 0, {}};
    packet.payload = std::span(c.p, length);
    c.p += length;
    const std::string_view reason = parse_payload(packet.payload, packet);
    if (!reason.empty()) return {ParseStatus::malformed, 0, reason};
  }
  r = c.u32(packet.delta);
  if (r != Read::ok) return stop(r, "timestamp delta over 5 bytes");
  packet.size = static_cast<std::uint32_t>(c.p - bytes.data());
  return {ParseStatus::complete, packet.size, {}};
}

std::string_view event_name(std::uint32_t id) noexcept {
  static constexpr std::array<std::string_view, 32> names{"Nop",
                                                          "Overflow",
                                                          "IsrEnter",
                                                          "IsrExit",
                                                          "TaskStartExec",
                                                          "TaskStopExec",
                                                          "TaskStartReady",
                                                          "TaskStopReady",
                                                          "TaskCreate",
                                                          "TaskInfo",
                                                          "TraceStart",
                                                          "TraceStop",
                                                          "SystimeCycles",
                                                          "SystimeUs",
                                                          "SysDesc",
                                                          "MarkStart",
                                                          "MarkStop",
                                                          "Idle",
                                                          "IsrToScheduler",
                                                          "TimerEnter",
                                                          "TimerExit",
                                                          "StackInfo",
                                                          "ModuleDesc",
                                                          "DataSample",
                                                          "Init",
                                                          "NameResource",
                                                          "PrintFormatted",
                                                          "NumModules",
                                                          "EndCall",
                                                          "TaskTerminate",
                                                          "",
                                                          "Extended"};
  return id < names.size() ? names[id] : std::string_view{};
}

}  // namespace tp::sysview
