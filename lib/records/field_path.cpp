#include "records/field_path.hpp"

#include <array>
#include <utility>

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
