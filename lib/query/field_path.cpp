#include "query/field_path.hpp"

#include <array>
#include <utility>

#include "core/number.hpp"

namespace tp {

std::string dotted_to_pointer(std::string_view dotted) {
  std::string pointer = "/";
  for (const char c : dotted) {
    if (c == '.') {
      pointer += '/';
    } else if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
  return pointer;
}

FieldPath::FieldPath(std::string_view dotted) : pointer_(dotted_to_pointer(dotted)) {
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    keys_.emplace_back(dotted.substr(start, dot - start));
    start = dot + 1;
  }
}

simdjson::error_code FieldPath::find(simdjson::dom::object root, simdjson::dom::element& out) const {
  simdjson::dom::element at;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::string& key = keys_[i];
    simdjson::dom::object object = root;
    if (i == 0 || at.get_object().get(object) == simdjson::SUCCESS) {
      if (const auto error = object.at_key(key).get(at); error != simdjson::SUCCESS) return error;
      continue;
    }
    simdjson::dom::array array;
    if (at.get_array().get(array) != simdjson::SUCCESS) return simdjson::INCORRECT_TYPE;
    const auto index = parse_whole_number<std::size_t>(key);
    if (!index) return simdjson::INCORRECT_TYPE;
    if (const auto error = array.at(*index).get(at); error != simdjson::SUCCESS) return error;
  }
  out = at;
  return simdjson::SUCCESS;
}

std::string_view resolve_field_alias(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> aliases{{
      {"time", "timestamp"},
      {"ts", "timestamp"},
      {"kind", "event.kind"},
      {"message", "event.data.message"},
      {"msg", "event.data.message"},
      {"data", "event.data"},
  }};
  for (const auto& [alias, path] : aliases) {
    if (alias == name) return path;
  }
  return name;
}

}  // namespace tp
