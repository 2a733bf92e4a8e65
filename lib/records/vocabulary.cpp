#include "records/vocabulary.hpp"

#include <algorithm>

namespace tp {
namespace {

template <typename Enum, std::size_t count>
std::optional<Enum> named(const std::array<std::string_view, count>& names, std::string_view name) noexcept {
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) return std::nullopt;
  return static_cast<Enum>(found - names.begin());
}

constexpr std::array<std::string_view, record_kind_names.size() + 1> selectable_kinds = [] {
  std::array<std::string_view, record_kind_names.size() + 1> kinds{};
  std::copy(record_kind_names.begin(), record_kind_names.end(), kinds.begin());
  kinds.back() = frames_kind_name;
  return kinds;
}();

char lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::optional<RecordKind> record_kind_named(std::string_view name) noexcept {
  return named<RecordKind>(record_kind_names, name);
}

std::optional<ExceptionAction> exception_action_named(std::string_view name) noexcept {
  return named<ExceptionAction>(exception_action_names, name);
}

std::optional<DecoderType> decoder_type_named(std::string_view name) noexcept {
  return named<DecoderType>(decoder_type_names, name);
}

std::optional<RecordSource> record_source_named(std::string_view name) noexcept {
  return named<RecordSource>(record_source_names, name);
}

std::optional<RecordClock> record_clock_named(std::string_view name) noexcept {
  return named<RecordClock>(record_clock_names, name);
}

std::span<const std::string_view> known_record_kinds() {
  return selectable_kinds;
}

bool is_known_record_kind(std::string_view name) {
  return std::find(selectable_kinds.begin(), selectable_kinds.end(), name) != selectable_kinds.end();
}

std::optional<std::string_view> kind_spelled_differently(std::string_view name) {
  for (const std::string_view kind : selectable_kinds) {
    if (std::equal(kind.begin(), kind.end(), name.begin(), name.end(),
                   [](char a, char b) { return lower(a) == lower(b); })) {
      return kind;
    }
  }
  return std::nullopt;
}

}  // namespace tp
