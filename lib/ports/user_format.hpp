// printf-style formats for stimulus-port payloads (Callisto "User" decoders, orbcat -c):
// one conversion among %d %i %u %x %X %o %c %f %e %g (with flags, width, precision).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

// The largest width or precision a User format may ask for.
inline constexpr int max_user_format_width = 64;

class UserFormat {
 public:
  // Throws tp::Error(bad_input) naming the problem for an unusable format.
  static UserFormat parse(std::string_view format);

  // %d/%i sign-extend from the write size; %f/%e/%g read a 4-byte write as an IEEE float.
  void format(std::string& out, std::uint32_t value, std::uint8_t size) const;
  [[nodiscard]] const std::string& text() const noexcept { return format_; }

 private:
  enum class Conversion : std::uint8_t { none, signed_int, unsigned_int, character, floating };
  std::string format_;  // with length modifiers removed
  Conversion conversion_ = Conversion::none;
};

}  // namespace tp
