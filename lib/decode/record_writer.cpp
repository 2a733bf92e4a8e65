#include "decode/record_writer.hpp"

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "itm/exception_names.hpp"
#include "records/record_line.hpp"

namespace tp {

using namespace std::string_view_literals;

namespace {

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

// The "data" of tracepipe's extended kinds (docs/design.md "The record").
void extended_data(RecordData& data, const Event& e) {
  switch (e.kind) {
    case EventKind::exception:
      data.uint("number", e.exception_number())
          .name("name", itm::exception_name(e.exception_number()))
          .name("action", action_name(e.action()));
      break;
    case EventKind::pc_sample:
      data.uint("pc", e.pc()).boolean("sleep", e.sleeping());
      break;
    case EventKind::data_trace:
      data.uint("comparator", e.comparator())
          .name("type", type_name(e.data_type()))
          .uint("value", e.value())
          .uint("size", e.size());
      break;
    case EventKind::event_counter:
      for (unsigned bit = 0; bit < 6; ++bit) {
        data.boolean(event_counter_bits[bit], ((e.wrapped_counters() >> bit) & 1U) != 0);
      }
      break;
    case EventKind::overflow:
      data.empty();
      break;
    case EventKind::hardware:
      data.uint("discriminator", e.discriminator()).uint("value", e.value()).uint("size", e.size());
      break;
    case EventKind::extension:
      data.uint("sh", e.source_hardware()).uint("value", e.value());
      break;
    case EventKind::malformed:
      data.string("reason", e.text).uint("bytes", e.byte_count());
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
    if (const std::string_view handler = symbols_->handler(e.exception_number()); !handler.empty()) {
      data.string("handler", handler);
    }
    return;
  }
  if (e.kind != EventKind::pc_sample || e.sleeping()) return;  // a sleep sample has no PC
  const symbols::CodePlace place = symbols_->place(e.pc());
  if (!place.function.empty()) data.string("function", place.function);
  if (place.line) data.string("file", place.line->file).uint("line", place.line->line);
}

void RecordFormatter::ndjson_body(OutBuffer& out, const Event& e) const {
  RecordBody body(out, e.port, e.kind);
  RecordData& data = body.data();
  switch (e.kind) {
    case EventKind::text:
      data.string("message", e.text);
      break;
    case EventKind::marker:
      data.uint("id", e.id());
      if (!e.text.empty()) data.string("name", e.text);  // the name only when there is one
      break;
    case EventKind::task_switch:
      data.uint("from_task", e.from_task()).uint("to_task", e.to_task());
      break;
    case EventKind::isr_enter:
      data.uint("isr_id", e.isr_id());
      if (!e.text.empty()) data.string("name", e.text);
      break;
    case EventKind::isr_exit:
      data.uint("isr_id", e.isr_id());
      break;
    case EventKind::idle_enter:
    case EventKind::idle_exit:
      break;
    case EventKind::counter:
      data.uint("counter_id", e.id()).uint("value", e.value());
      break;
    case EventKind::raw:
      data.bytes("data", e.bytes);
      break;
    default:
      extended_data(data, e);
      if (symbols_ != nullptr) symbol_data(data, e);
      break;
  }
  body.end(source_name(e.source == EventSource::dwt ? RecordSource::dwt : RecordSource::itm));
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
      fmt::format_to(it, "{}", e.kind == EventKind::marker ? e.id() : e.isr_id());
      if (!e.text.empty()) fmt::format_to(it, " {}", e.text);
      break;
    case EventKind::task_switch:
      fmt::format_to(it, "{} -> {}", e.from_task(), e.to_task());
      break;
    case EventKind::isr_exit:
      fmt::format_to(it, "{}", e.isr_id());
      break;
    case EventKind::idle_enter:
    case EventKind::idle_exit:
    case EventKind::overflow:
      break;
    case EventKind::counter:
      fmt::format_to(it, "#{} = {}", e.id(), e.value());
      break;
    case EventKind::raw:
      for (const std::uint8_t b : e.bytes) fmt::format_to(it, "{:02x} ", b);
      break;
    case EventKind::exception:
      fmt::format_to(it, "{} {} ({})", action_name(e.action()), itm::exception_name(e.exception_number()),
                     e.exception_number());
      if (symbols_ != nullptr && !symbols_->handler(e.exception_number()).empty()) {
        fmt::format_to(it, " {}", symbols_->handler(e.exception_number()));
      }
      break;
    case EventKind::pc_sample:
      if (e.sleeping()) {
        out += "sleep"sv;
      } else {
        fmt::format_to(it, "0x{:08x}", e.pc());
        if (symbols_ != nullptr) text_place(out, symbols_->place(e.pc()));
      }
      break;
    case EventKind::data_trace:
      fmt::format_to(it, "comparator {} {} 0x{:0{}x}", e.comparator(), type_name(e.data_type()), e.value(),
                     2 * e.size());
      break;
    case EventKind::event_counter:
      for (unsigned bit = 0; bit < 6; ++bit) {
        if (((e.wrapped_counters() >> bit) & 1U) != 0) fmt::format_to(it, "{} ", event_counter_bits[bit]);
      }
      break;
    case EventKind::hardware:
      fmt::format_to(it, "discriminator {} value 0x{:x}", unsigned{e.discriminator()}, e.value());
      break;
    case EventKind::extension:
      fmt::format_to(it, "sh {} value 0x{:x}", unsigned{e.source_hardware()}, e.value());
      break;
    case EventKind::malformed:
      fmt::format_to(it, "{} ({} bytes)", e.text, e.byte_count());
      break;
    default:  // the other producers' kinds: decoding makes none
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
