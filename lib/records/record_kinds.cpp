#include "records/record_kinds.hpp"

#include <algorithm>
#include <array>

namespace tp {
namespace {

// Kept equal to record.schema.json by a unit test (test_records.cpp).
constexpr std::array<std::string_view, 27> kinds{
    "Text",       "Marker",       "TaskSwitch", "IsrEnter",   "IsrExit",    "IdleEnter",    "IdleExit",
    "Counter",    "Raw",          "Exception",  "PcSample",   "DataTrace",  "EventCounter", "Overflow",
    "Hardware",   "Extension",    "Malformed",  "ThreadExit", "ThreadStat", "ThreadUsage",  "CriticalUsage",
    "ThreadInfo", "SwitchRecord", "Trigger",    "EkoEvent",   "EkoClock",   "Itm"};

char lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::span<const std::string_view> known_record_kinds() noexcept {
  return kinds;
}

bool is_known_record_kind(std::string_view name) noexcept {
  return std::find(kinds.begin(), kinds.end(), name) != kinds.end();
}

std::optional<std::string_view> kind_spelled_differently(std::string_view name) noexcept {
  for (const std::string_view kind : kinds) {
    if (std::equal(kind.begin(), kind.end(), name.begin(), name.end(),
                   [](char a, char b) { return lower(a) == lower(b); })) {
      return kind;
    }
  }
  return std::nullopt;
}

}  // namespace tp
