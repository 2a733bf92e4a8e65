#include "decode/record_writer.hpp"

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "itm/exception_names.hpp"
#include "records/record_line.hpp"

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

// " function file:line" after a PC in the terminal format.
void text_place(OutBuffer& out, const symbols::CodePlace& place) {
  if (!place.function.empty()) fmt::format_to(std::back_inserter(out), " {}", place.function);
  if (place.line) fmt::format_to(std::back_inserter(out), " {}:{}", place.line->file, place.line->line);
}

// The "data" of tracepipe's extended kinds (DESIGN.md "Extended kinds").
void extended_data(RecordData& data, const Event& e) {
  switch (e.kind) {
    case EventKind::exception:
      data.uint("number", e.a)
          .name("name", itm::exception_name(static_cast<std::uint16_t>(e.a)))
          .name("action", exception_action_name(e.b));
      break;
    case EventKind::pc_sample:
      data.uint("pc", e.a).boolean("sleep", e.b != 0);
      break;
    case EventKind::data_trace:
      data.uint("comparator", e.a)
          .name("type", data_trace_type_name(static_cast<DataTraceType>(e.c)))
          .uint("value", e.b)
          .uint("size", e.d);
      break;
    case EventKind::event_counter:
      for (unsigned bit = 0; bit < 6; ++bit) data.boolean(event_counter_bits[bit], ((e.a >> bit) & 1U) != 0);
      break;
    case EventKind::overflow:
      data.empty();
      break;
    case EventKind::hardware:
      data.uint("discriminator", e.a).uint("value", e.b).uint("size", e.d);
      break;
    case EventKind::extension:
      data.uint("sh", e.a).uint("value", e.b);
      break;
    case EventKind::malformed:
      data.string("reason", e.text).uint("bytes", e.a);
      if (!e.bytes.empty()) data.bytes("data", e.bytes);
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

void RecordFormatter::symbol_data(RecordData& data, const Event& e) const {
  if (e.kind == EventKind::exception) {
    if (const std::string_view handler = symbols_->handler(static_cast<std::uint32_t>(e.a)); !handler.empty()) {
      data.string("handler", handler);
    }
    return;
  }
  if (e.kind != EventKind::pc_sample || e.b != 0) return;  // a sleep sample has no PC
  const symbols::CodePlace place = symbols_->place(e.a);
  if (!place.function.empty()) data.string("function", place.function);
  if (place.line) data.string("file", place.line->file).uint("line", place.line->line);
}

void RecordFormatter::ndjson_body(OutBuffer& out, const Event& e) const {
  RecordBody body(out, e.port, event_kind_name(e.kind));
  RecordData& data = body.data();
  switch (e.kind) {
    case EventKind::text:
      data.string("message", e.text);
      break;
    case EventKind::marker:
      data.uint("id", e.a);
      if (!e.text.empty()) data.string("name", e.text);  // the name only when there is one
      break;
    case EventKind::task_switch:
      data.uint("from_task", e.a).uint("to_task", e.b);
      break;
    case EventKind::isr_enter:
      data.uint("isr_id", e.a);
      if (!e.text.empty()) data.string("name", e.text);
      break;
    case EventKind::isr_exit:
      data.uint("isr_id", e.a);
      break;
    case EventKind::idle_enter:
    case EventKind::idle_exit:
      break;
    case EventKind::counter:
      data.uint("counter_id", e.a).uint("value", e.b);
      break;
    case EventKind::raw:
      data.bytes("data", e.bytes);
      break;
    default:
      extended_data(data, e);
      if (symbols_ != nullptr) symbol_data(data, e);
      break;
  }
  body.end(e.source == EventSource::dwt ? "dwt" : "itm");
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
      fmt::format_to(it, "{} {} ({})", exception_action_name(e.b), itm::exception_name(static_cast<std::uint16_t>(e.a)),
                     e.a);
      if (symbols_ != nullptr && !symbols_->handler(static_cast<std::uint32_t>(e.a)).empty()) {
        fmt::format_to(it, " {}", symbols_->handler(static_cast<std::uint32_t>(e.a)));
      }
      break;
    case EventKind::pc_sample:
      if (e.b != 0) {
        out += "sleep"sv;
      } else {
        fmt::format_to(it, "0x{:08x}", e.a);
        if (symbols_ != nullptr) text_place(out, symbols_->place(e.a));
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

void RecordFormatter::stamp(Stamp& stamp, std::uint64_t timestamp, std::string_view clock, bool exact) const {
  if (format_ == OutputFormat::ndjson) {
    stamp.set(timestamp, clock, exact);
  } else if (format_ == OutputFormat::text) {
    stamp.prefix.clear();
    stamp.suffix.clear();
    fmt::format_to(std::back_inserter(stamp.prefix), "{:>14}{}", timestamp, exact ? ' ' : '~');
    stamp.suffix += '\n';
  }
}

}  // namespace tp
