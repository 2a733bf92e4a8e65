#include "decode/record_writer.hpp"

#include <fmt/format.h>

#include "json/json_writer.hpp"

namespace tp {

using namespace std::string_view_literals;

namespace {

std::string_view exception_action_name(std::uint64_t action) {
  switch (action) {
    case 1:
      return "enter";
    case 2:
      return "exit";
    case 3:
      return "resume";
    default:
      return "reserved";
  }
}

constexpr std::string_view event_counter_bits[] = {"cpi", "exc", "sleep", "lsu", "fold", "cyc"};

inline void key(OutBuffer& out, std::string_view name) {
  out += '"';
  out += name;
  out += "\":"sv;
}

inline void uint_field(OutBuffer& out, std::string_view name, std::uint64_t value) {
  key(out, name);
  append_uint(out, value);
}

// ,"data":{"<first>":a,"<second>":b}
void two_uint_fields(OutBuffer& out, std::string_view first, std::uint64_t a, std::string_view second,
                     std::uint64_t b) {
  out += ",\"data\":{"sv;
  uint_field(out, first, a);
  out += ',';
  uint_field(out, second, b);
  out += '}';
}

// ,"data":{"<id_key>":a[,"name":text]}: the name only when there is one.
void id_and_name(OutBuffer& out, std::string_view id_key, const Event& e) {
  out += ",\"data\":{"sv;
  uint_field(out, id_key, e.a);
  if (!e.text.empty()) {
    out += ",\"name\":"sv;
    append_json_string(out, e.text);
  }
  out += '}';
}

// Printable text for the terminal format: control characters as \xNN.
void append_printable(OutBuffer& out, std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", u);
    } else {
      out += c;
    }
  }
}

// The "data" of tracepipe's extended kinds (DESIGN.md "Extended kinds").
void extended_data(OutBuffer& out, const Event& e) {
  switch (e.kind) {
    case EventKind::exception:
      out += ",\"data\":{"sv;
      uint_field(out, "number", e.a);
      out += ",\"name\":"sv;
      append_json_string(out, e.text);
      out += ",\"action\":\""sv;
      out += exception_action_name(e.b);
      out += "\"}"sv;
      break;
    case EventKind::pc_sample:
      out += ",\"data\":{"sv;
      uint_field(out, "pc", e.a);
      out += e.b != 0 ? ",\"sleep\":true}"sv : ",\"sleep\":false}"sv;
      break;
    case EventKind::data_trace:
      out += ",\"data\":{"sv;
      uint_field(out, "comparator", e.a);
      out += ",\"type\":\""sv;
      out += data_trace_type_name(static_cast<DataTraceType>(e.c));
      out += "\","sv;
      uint_field(out, "value", e.b);
      out += ',';
      uint_field(out, "size", e.d);
      out += '}';
      break;
    case EventKind::event_counter:
      out += ",\"data\":{"sv;
      for (unsigned bit = 0; bit < 6; ++bit) {
        if (bit != 0) out += ',';
        key(out, event_counter_bits[bit]);
        out += ((e.a >> bit) & 1U) != 0 ? "true"sv : "false"sv;
      }
      out += '}';
      break;
    case EventKind::overflow:
      out += ",\"data\":{}"sv;
      break;
    case EventKind::hardware:
      out += ",\"data\":{"sv;
      uint_field(out, "discriminator", e.a);
      out += ',';
      uint_field(out, "value", e.b);
      out += ',';
      uint_field(out, "size", e.d);
      out += '}';
      break;
    case EventKind::extension:
      two_uint_fields(out, "sh", e.a, "value", e.b);
      break;
    case EventKind::malformed:
      out += ",\"data\":{\"reason\":"sv;
      append_json_string(out, e.text);
      out += ',';
      uint_field(out, "bytes", e.a);
      if (!e.bytes.empty()) {
        out += ",\"data\":"sv;
        append_byte_array(out, e.bytes);
      }
      out += '}';
      break;
    default:
      break;
  }
}

}  // namespace

void RecordFormatter::body(OutBuffer& out, const Event& event) const {
  if (format_ == OutputFormat::ndjson) {
    ndjson_body(out, event);
  } else if (format_ == OutputFormat::text) {
    text_body(out, event);
  }
}

void RecordFormatter::ndjson_body(OutBuffer& out, const Event& e) {
  out += "\"port\":"sv;
  append_uint(out, e.port);
  out += ",\"event\":{\"kind\":\""sv;
  out += event_kind_name(e.kind);
  out += '"';
  switch (e.kind) {
    case EventKind::text:
      out += ",\"data\":{\"message\":"sv;
      append_json_string(out, e.text);
      out += '}';
      break;
    case EventKind::marker:
      id_and_name(out, "id", e);
      break;
    case EventKind::task_switch:
      two_uint_fields(out, "from_task", e.a, "to_task", e.b);
      break;
    case EventKind::isr_enter:
      id_and_name(out, "isr_id", e);
      break;
    case EventKind::isr_exit:
      out += ",\"data\":{"sv;
      uint_field(out, "isr_id", e.a);
      out += '}';
      break;
    case EventKind::idle_enter:
    case EventKind::idle_exit:
      break;
    case EventKind::counter:
      two_uint_fields(out, "counter_id", e.a, "value", e.b);
      break;
    case EventKind::raw:
      out += ",\"data\":{\"data\":"sv;
      append_byte_array(out, e.bytes);
      out += '}';
      break;
    default:
      extended_data(out, e);
      break;
  }
  out += e.source == EventSource::dwt ? "},\"source\":\"dwt\""sv : "},\"source\":\"itm\""sv;
}

void RecordFormatter::text_body(OutBuffer& out, const Event& e) const {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{:>3} {:<12} ", e.port, event_kind_name(e.kind));
  switch (e.kind) {
    case EventKind::text: {
      if (port_map_ != nullptr && !port_map_->at(e.port).name.empty()) {
        fmt::format_to(it, "[{}] ", port_map_->at(e.port).name);
      }
      append_printable(out, e.text);
      break;
    }
    case EventKind::marker:
    case EventKind::isr_enter:
      fmt::format_to(it, "{}", e.a);
      if (!e.text.empty()) fmt::format_to(it, " {}", e.text);
      break;
    case EventKind::task_switch:
      fmt::format_to(it, "{} -> {}", e.a, e.b);
      break;
    case EventKind::isr_exit:
      fmt::format_to(it, "{}", e.a);
      break;
    case EventKind::idle_enter:
    case EventKind::idle_exit:
    case EventKind::overflow:
      break;
    case EventKind::counter:
      fmt::format_to(it, "#{} = {}", e.a, e.b);
      break;
    case EventKind::raw:
      for (const std::uint8_t b : e.bytes) fmt::format_to(it, "{:02x} ", b);
      break;
    case EventKind::exception:
      fmt::format_to(it, "{} {} ({})", exception_action_name(e.b), e.text, e.a);
      break;
    case EventKind::pc_sample:
      if (e.b != 0) {
        out += "sleep"sv;
      } else {
        fmt::format_to(it, "0x{:08x}", e.a);
      }
      break;
    case EventKind::data_trace:
      fmt::format_to(it, "comparator {} {} 0x{:0{}x}", e.a, data_trace_type_name(static_cast<DataTraceType>(e.c)), e.b,
                     2 * e.d);
      break;
    case EventKind::event_counter:
      for (unsigned bit = 0; bit < 6; ++bit) {
        if (((e.a >> bit) & 1U) != 0) fmt::format_to(it, "{} ", event_counter_bits[bit]);
      }
      break;
    case EventKind::hardware:
      fmt::format_to(it, "discriminator {} value 0x{:x}", e.a, e.b);
      break;
    case EventKind::extension:
      fmt::format_to(it, "sh {} value 0x{:x}", e.a, e.b);
      break;
    case EventKind::malformed:
      fmt::format_to(it, "{} ({} bytes)", e.text, e.a);
      break;
  }
}

void RecordFormatter::stamp(Stamp& stamp, std::uint64_t timestamp, std::string_view clock) const {
  stamp.prefix.clear();
  stamp.suffix.clear();
  if (format_ == OutputFormat::ndjson) {
    stamp.prefix += "{\"timestamp\":"sv;
    append_uint(stamp.prefix, timestamp);
    stamp.prefix += ',';
    stamp.suffix += ",\"clock\":\""sv;
    stamp.suffix += clock;
    stamp.suffix += "\"}\n"sv;
  } else if (format_ == OutputFormat::text) {
    fmt::format_to(std::back_inserter(stamp.prefix), "{:>14} ", timestamp);
    stamp.suffix += '\n';
  }
}

}  // namespace tp
