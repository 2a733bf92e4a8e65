// Whole-text numbers: std::from_chars with nothing left over (options, file keys, replies).
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace tp {

// The number that is all of `text` in `base`; nothing for empty text, other characters
// or a value out of T's range.
template <typename T>
[[nodiscard]] std::optional<T> parse_whole_number(std::string_view text, int base = 10) noexcept {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace tp
