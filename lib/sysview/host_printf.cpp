#include "sysview/host_printf.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <utility>

namespace tp::sysview {
namespace {

struct Spec {
  bool left = false;
  bool zero = false;
  bool plus = false;
  bool space = false;
  bool alternate = false;
  std::size_t width = 0;
  int precision = -1;
};

void pad(std::string& out, std::string_view sign, std::string_view digits, const Spec& spec) {
  const std::size_t zeros = spec.precision >= 0 && digits.size() < static_cast<std::size_t>(spec.precision)
                                ? static_cast<std::size_t>(spec.precision) - digits.size()
                                : 0;
  const std::size_t length = sign.size() + zeros + digits.size();
  const std::size_t fill = spec.width > length ? spec.width - length : 0;
  if (!spec.left && !(spec.zero && spec.precision < 0)) out.append(fill, ' ');
  out += sign;
  if (!spec.left && spec.zero && spec.precision < 0) out.append(fill, '0');
  out.append(zeros, '0');
  out += digits;
  if (spec.left) out.append(fill, ' ');
}

// The digits of `value` in a buffer of the caller's (no allocation per conversion).
template <class... Args>
std::string_view digits_of(std::array<char, 24>& buffer, fmt::format_string<Args...> format, Args&&... args) {
  const auto end = fmt::format_to_n(buffer.data(), buffer.size(), format, std::forward<Args>(args)...).out;
  return {buffer.data(), static_cast<std::size_t>(end - buffer.data())};
}

void convert(char conversion, std::uint32_t value, const Spec& spec, std::string& out) {
  std::array<char, 24> buffer{};
  switch (conversion) {
    case 'd':
    case 'i': {
      const auto v = static_cast<std::int32_t>(value);
      const std::uint64_t magnitude =
          v < 0 ? static_cast<std::uint64_t>(-static_cast<std::int64_t>(v)) : static_cast<std::uint64_t>(v);
      const std::string_view sign = v < 0 ? "-" : spec.plus ? "+" : spec.space ? " " : "";
      pad(out, sign, digits_of(buffer, "{}", magnitude), spec);
      return;
    }
    case 'u':
      pad(out, "", digits_of(buffer, "{}", value), spec);
      return;
    case 'x':
      pad(out, spec.alternate && value != 0 ? "0x" : "", digits_of(buffer, "{:x}", value), spec);
      return;
    case 'X':
      pad(out, spec.alternate && value != 0 ? "0X" : "", digits_of(buffer, "{:X}", value), spec);
      return;
    case 'o':
      pad(out, spec.alternate ? "0" : "", digits_of(buffer, "{:o}", value), spec);
      return;
    case 'p':
      pad(out, "0x", digits_of(buffer, "{:08x}", value), spec);
      return;
    case 'c': {
      const char c = static_cast<char>(value & 0xFFU);
      pad(out, "", std::string_view(&c, 1), Spec{spec.left, false, false, false, false, spec.width, -1});
      return;
    }
    case 's':
      out += "(string at 0x";
      out += digits_of(buffer, "{:08x}", value);
      out += ')';
      return;
    default:
      return;
  }
}

}  // namespace

void format_host(std::string_view format, std::span<const std::uint32_t> arguments, std::string& out) {
  std::size_t next = 0;
  std::size_t i = 0;
  while (i < format.size()) {
    const char c = format[i++];
    if (c != '%') {
      out += c;
      continue;
    }
    const std::size_t start = i - 1;
    if (i < format.size() && format[i] == '%') {
      ++i;
      out += '%';
      continue;
    }
    const std::size_t slot = next++;
    Spec spec;
    for (; i < format.size(); ++i) {
      const char flag = format[i];
      if (flag == '-') {
        spec.left = true;
      } else if (flag == '0') {
        spec.zero = true;
      } else if (flag == '+') {
        spec.plus = true;
      } else if (flag == ' ') {
        spec.space = true;
      } else if (flag == '#') {
        spec.alternate = true;
      } else {
        break;
      }
    }
    while (i < format.size() && format[i] >= '0' && format[i] <= '9' && spec.width < 1000) {
      spec.width = spec.width * 10 + static_cast<std::size_t>(format[i++] - '0');
    }
    if (i < format.size() && format[i] == '.') {
      spec.precision = 0;
      ++i;
      while (i < format.size() && format[i] >= '0' && format[i] <= '9' && spec.precision < 1000) {
        spec.precision = spec.precision * 10 + (format[i++] - '0');
      }
    }
    while (i < format.size() && (format[i] == 'l' || format[i] == 'h' || format[i] == 'z')) ++i;
    if (i >= format.size()) {
      out.append(format.substr(start));
      return;
    }
    const char conversion = format[i++];
    constexpr std::string_view known = "diuxXopcs";
    if (known.find(conversion) == std::string_view::npos || slot >= arguments.size()) {
      out.append(format.substr(start, i - start));
      continue;
    }
    convert(conversion, arguments[slot], spec, out);
  }
}

}  // namespace tp::sysview
