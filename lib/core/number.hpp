// Whole-text numbers: std::from_chars with nothing left over (options, file keys, replies),
// the one place that parses them.
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

// A number written as in C: hexadecimal after 0x or 0X, else decimal; all of `text`.
template <typename T>
[[nodiscard]] std::optional<T> parse_c_number(std::string_view text) noexcept {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    return parse_whole_number<T>(text.substr(2), 16);
  }
  return parse_whole_number<T>(text);
}

// The value of one hexadecimal digit (either case), or -1 for any other character.
[[nodiscard]] constexpr int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace tp
