#include "serve/record_symbols.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_writer.hpp"
#include "records/vocabulary.hpp"

namespace tp::serve {
namespace {

// Fields to add to event.data: a name and either a string or an unsigned value.
struct Addition {
  std::string_view key;
  std::string text;
  std::optional<std::uint64_t> number;
};

bool has_text(simdjson::dom::object data, std::string_view key) {
  std::string_view value;
  return data[key].get_string().get(value) == simdjson::SUCCESS && !value.empty();
}

std::uint64_t unsigned_field(simdjson::dom::object data, std::string_view key, bool& present) {
  std::uint64_t value = 0;
  present = data[key].get_uint64().get(value) == simdjson::SUCCESS;
  return value;
}

std::vector<Addition> additions_for(std::string_view kind, simdjson::dom::object data,
                                    const symbols::Symbolizer& symbolizer) {
  std::vector<Addition> additions;
  bool present = false;
  if (kind == kind_name(RecordKind::pc_sample) && !has_text(data, "function")) {
    const std::uint64_t pc = unsigned_field(data, "pc", present);
    bool sleeping = false;
    if (!present || (data["sleep"].get_bool().get(sleeping) == simdjson::SUCCESS && sleeping)) return additions;
    const symbols::CodePlace place = symbolizer.place(pc);
    if (place.function.empty()) return additions;
    additions.push_back({"function", std::string(place.function), std::nullopt});
    if (place.line && data["file"].error() == simdjson::NO_SUCH_FIELD) {
      additions.push_back({"file", place.line->file, std::nullopt});
      additions.push_back({"line", {}, place.line->line});
    }
  } else if ((kind == kind_name(RecordKind::exception) && !has_text(data, "handler")) ||
             (kind == kind_name(RecordKind::isr_enter) && !has_text(data, "name"))) {
    const bool exception = kind == kind_name(RecordKind::exception);
    const std::uint64_t number = unsigned_field(data, exception ? "number" : "isr_id", present);
    const std::string_view handler = present ? symbolizer.handler(static_cast<std::uint32_t>(number)) : "";
    if (!handler.empty()) additions.push_back({exception ? "handler" : "name", std::string(handler), std::nullopt});
  }
  return additions;
}

void append_member(std::string& out, std::string_view key, simdjson::dom::element value, bool& first) {
  if (!first) out += ',';
  first = false;
  append_json_string(out, key);
  out += ':';
  out += simdjson::to_string(value);
}

// event.data with the additions; an IsrEnter's "name":null is replaced, not repeated.
void append_data(std::string& out, simdjson::dom::object data, const std::vector<Addition>& additions) {
  out += '{';
  bool first = true;
  for (const simdjson::dom::key_value_pair member : data) {
    const bool replaced =
        std::any_of(additions.begin(), additions.end(), [&](const Addition& a) { return a.key == member.key; });
    if (!replaced) append_member(out, member.key, member.value, first);
  }
  for (const Addition& addition : additions) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, addition.key);
    out += ':';
    if (addition.number) {
      append_uint(out, *addition.number);
    } else {
      append_json_string(out, addition.text);
    }
  }
  out += '}';
}

void append_object(std::string& out, simdjson::dom::object object, std::string_view replace_key,
                   const std::function<void(std::string&)>& replacement) {
  out += '{';
  bool first = true;
  for (const simdjson::dom::key_value_pair member : object) {
    if (member.key != replace_key) {
      append_member(out, member.key, member.value, first);
      continue;
    }
    if (!first) out += ',';
    first = false;
    append_json_string(out, member.key);
    out += ':';
    replacement(out);
  }
  out += '}';
}

}  // namespace

std::optional<std::string> RecordSymbols::named(simdjson::dom::object record) const {
  simdjson::dom::object event;
  simdjson::dom::object data;
  std::string_view kind;
  if (record["event"].get_object().get(event) != simdjson::SUCCESS ||
      event["kind"].get_string().get(kind) != simdjson::SUCCESS ||
      event["data"].get_object().get(data) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  const std::vector<Addition> additions = additions_for(kind, data, symbolizer_);
  if (additions.empty()) return std::nullopt;
  std::string out;
  append_object(out, record, "event", [&](std::string& event_out) {
    append_object(event_out, event, "data", [&](std::string& data_out) { append_data(data_out, data, additions); });
  });
  return out;
}

}  // namespace tp::serve
