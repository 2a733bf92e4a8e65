#include "records/record_kinds.hpp"

#include <algorithm>
#include <vector>

#include "records/record_check.hpp"

namespace tp {
namespace {

// The validator's kinds (record_check: record.schema.json's, kept equal to it by a unit
// test), then "Itm".
const std::vector<std::string_view>& kind_list() {
  static const std::vector<std::string_view> list = [] {
    std::vector<std::string_view> kinds;
    for (const KindRule& rule : record_kind_rules()) kinds.push_back(rule.kind);
    kinds.emplace_back("Itm");
    return kinds;
  }();
  return list;
}

char lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::span<const std::string_view> known_record_kinds() {
  return kind_list();
}

bool is_known_record_kind(std::string_view name) {
  const auto& kinds = kind_list();
  return std::find(kinds.begin(), kinds.end(), name) != kinds.end();
}

std::optional<std::string_view> kind_spelled_differently(std::string_view name) {
  for (const std::string_view kind : kind_list()) {
    if (std::equal(kind.begin(), kind.end(), name.begin(), name.end(),
                   [](char a, char b) { return lower(a) == lower(b); })) {
      return kind;
    }
  }
  return std::nullopt;
}

}  // namespace tp
