#include "ports/user_format.hpp"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <bit>
#include <cstring>

#include "core/error.hpp"

namespace tp {

UserFormat UserFormat::parse(std::string_view format) {
  UserFormat result;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    result.format_ += c;
    if (c != '%') continue;
    ++i;
    if (i < format.size() && format[i] == '%') {
      result.format_ += '%';
      continue;
    }
    while (i < format.size() && std::strchr("-+ #0", format[i]) != nullptr) result.format_ += format[i++];
    const auto digits = [&](std::string_view what) {
      const std::size_t start = i;
      while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i])) != 0) ++i;
      const std::string_view text = format.substr(start, i - start);
      // A 32-bit value never needs more; a huge width would make every record that long.
      if (text.size() > 3 || (!text.empty() && std::stoi(std::string(text)) > max_user_format_width)) {
        throw Error(ExitCode::bad_input,
                    fmt::format("format '{}': {} {} is over {}", format, what, text, max_user_format_width));
      }
      result.format_ += text;
    };
    digits("width");
    if (i < format.size() && format[i] == '.') {
      result.format_ += format[i++];
      digits("precision");
    }
    while (i < format.size() && std::strchr("hlzjtL", format[i]) != nullptr) ++i;  // sizes come from the write
    if (i >= format.size())
      throw Error(ExitCode::bad_input, fmt::format("format '{}' ends inside a conversion", format));
    const char conversion = format[i];
    Conversion kind = Conversion::none;
    if (std::strchr("di", conversion) != nullptr)
      kind = Conversion::signed_int;
    else if (std::strchr("uxXo", conversion) != nullptr)
      kind = Conversion::unsigned_int;
    else if (conversion == 'c')
      kind = Conversion::character;
    else if (std::strchr("fFeEgGaA", conversion) != nullptr)
      kind = Conversion::floating;
    else
      throw Error(ExitCode::bad_input, fmt::format("format '{}': unsupported conversion '%{}'", format, conversion));
    if (result.conversion_ != Conversion::none) {
      throw Error(ExitCode::bad_input, fmt::format("format '{}' has more than one conversion", format));
    }
    result.conversion_ = kind;
    result.format_ += conversion;
  }
  return result;
}

void UserFormat::format(std::string& out, std::uint32_t value, std::uint8_t size) const {
  const fmt::string_view spec(format_);
  switch (conversion_) {
    case Conversion::none:
      out += fmt::sprintf(spec);
      return;
    case Conversion::unsigned_int:
      out += fmt::sprintf(spec, value);
      return;
    case Conversion::character:
      out += fmt::sprintf(spec, static_cast<char>(value & 0xFFU));
      return;
    case Conversion::signed_int: {
      const unsigned bits = 8U * size;
      const std::int64_t v = bits >= 32 ? static_cast<std::int32_t>(value)
                                        : static_cast<std::int64_t>(value ^ (1U << (bits - 1))) - (1LL << (bits - 1));
      out += fmt::sprintf(spec, v);
      return;
    }
    case Conversion::floating: {
      const double v = size == 4 ? static_cast<double>(std::bit_cast<float>(value)) : static_cast<double>(value);
      out += fmt::sprintf(spec, v);
      return;
    }
  }
}

}  // namespace tp
