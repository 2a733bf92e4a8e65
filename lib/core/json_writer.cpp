#include "core/json_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>

namespace tp {
namespace {

// 0: copy as is, 1: needs an escape, 2: first byte of a multi-byte sequence (validate).
constexpr std::array<std::uint8_t, 256> make_char_class() {
  std::array<std::uint8_t, 256> table{};
  for (unsigned c = 0; c < 0x20; ++c) table[c] = 1;
  table['"'] = 1;
  table['\\'] = 1;
  table[0x7F] = 0;
  for (unsigned c = 0x80; c < 0x100; ++c) table[c] = 2;
  return table;
}
constexpr auto char_class = make_char_class();

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at the start of `s` (RFC 3629 section 4), or 0.
std::size_t valid_utf8_sequence(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  auto cont = [&](std::size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    if (i >= s.size()) return false;
    const auto b = static_cast<unsigned char>(s[i]);
    return b >= lo && b <= hi;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no UTF-16 surrogates
  if (b0 == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

char* write_escape(char* p, unsigned char c) {
  static constexpr char hex[] = "0123456789abcdef";
  *p++ = '\\';
  switch (c) {
    case '"':
      *p++ = '"';
      return p;
    case '\\':
      *p++ = '\\';
      return p;
    case '\n':
      *p++ = 'n';
      return p;
    case '\r':
      *p++ = 'r';
      return p;
    case '\t':
      *p++ = 't';
      return p;
    case '\b':
      *p++ = 'b';
      return p;
    case '\f':
      *p++ = 'f';
      return p;
    default:
      *p++ = 'u';
      *p++ = '0';
      *p++ = '0';
      *p++ = hex[c >> 4U];
      *p++ = hex[c & 0xFU];
      return p;
  }
}

constexpr char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

}  // namespace

void append_json_string(OutBuffer& out, std::string_view text) {
  // Worst case: every byte becomes a 6-byte \u00XX escape.
  char* p = out.ensure(text.size() * 6 + 2);
  *p++ = '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::uint8_t cls = char_class[c];
    if (cls == 0) {
      *p++ = static_cast<char>(c);
      ++i;
    } else if (cls == 1) {
      p = write_escape(p, c);
      ++i;
    } else if (const std::size_t len = valid_utf8_sequence(text.substr(i)); len != 0) {
      std::memcpy(p, text.data() + i, len);
      p += len;
      i += len;
    } else {
      std::memcpy(p, replacement_character.data(), replacement_character.size());
      p += replacement_character.size();
      ++i;
    }
  }
  *p++ = '"';
  out.commit_to(p);
}

void append_uint(OutBuffer& out, std::uint64_t value) {
  static constexpr std::uint64_t powers_of_10[] = {1ULL,
                                                   10ULL,
                                                   100ULL,
                                                   1000ULL,
                                                   10000ULL,
                                                   100000ULL,
                                                   1000000ULL,
                                                   10000000ULL,
                                                   100000000ULL,
                                                   1000000000ULL,
                                                   10000000000ULL,
                                                   100000000000ULL,
                                                   1000000000000ULL,
                                                   10000000000000ULL,
                                                   100000000000000ULL,
                                                   1000000000000000ULL,
                                                   10000000000000000ULL,
                                                   100000000000000000ULL,
                                                   1000000000000000000ULL,
                                                   10000000000000000000ULL};
  char* const start = out.ensure(20);
  // Digit count from the bit length (log10(2) ~ 1233/4096), corrected by one compare.
  const auto bits = static_cast<unsigned>(64 - __builtin_clzll(value | 1U));
  unsigned digits = (bits * 1233U) >> 12U;
  digits += (value | 1U) >= powers_of_10[digits] ? 1U : 0U;  // 0 has one digit too
  char* p = start + digits;
  // Most values fit 32 bits, where dividing by 100 is cheaper.
  auto small = static_cast<std::uint32_t>(value);
  if (value > 0xFFFFFFFFULL) {
    while (value > 0xFFFFFFFFULL) {
      const auto pair = static_cast<std::size_t>(value % 100) * 2;
      value /= 100;
      p -= 2;
      std::memcpy(p, digit_pairs + pair, 2);
    }
    small = static_cast<std::uint32_t>(value);
  }
  while (small >= 100) {
    const auto pair = static_cast<std::size_t>(small % 100) * 2;
    small /= 100;
    p -= 2;
    std::memcpy(p, digit_pairs + pair, 2);
  }
  if (small >= 10) {
    std::memcpy(p - 2, digit_pairs + static_cast<std::size_t>(small) * 2, 2);
  } else {
    *(p - 1) = static_cast<char>('0' + small);
  }
  out.commit(digits);
}

void append_byte_array(OutBuffer& out, std::span<const std::uint8_t> bytes) {
  out += '[';
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) out += ',';
    append_uint(out, bytes[i]);
  }
  out += ']';
}

void append_json_string(std::string& out, std::string_view text) {
  OutBuffer buffer;
  append_json_string(buffer, text);
  out += buffer.view();
}

void append_uint(std::string& out, std::uint64_t value) {
  OutBuffer buffer(32);
  append_uint(buffer, value);
  out += buffer.view();
}

void append_int(std::string& out, std::int64_t value) {
  if (value < 0) {
    out += '-';
    append_uint(out, ~static_cast<std::uint64_t>(value) + 1U);
  } else {
    append_uint(out, static_cast<std::uint64_t>(value));
  }
}

void append_double(OutBuffer& out, double value) {
  if (!std::isfinite(value)) {
    out += std::string_view("null");
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

void append_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";  // JSON has no NaN or infinity
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    const std::uint64_t bit = 1ULL << (depth_ - 1);
    if ((needs_comma_ & bit) != 0) out_ += ',';
    needs_comma_ |= bit;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  ++depth_;
  needs_comma_ &= ~(1ULL << (depth_ - 1));
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  --depth_;
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  ++depth_;
  needs_comma_ &= ~(1ULL << (depth_ - 1));
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  --depth_;
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(out_, name);
  out_ += ':';
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::string(std::string_view value) {
  before_value();
  append_json_string(out_, value);
  return *this;
}
JsonWriter& JsonWriter::uint(std::uint64_t value) {
  before_value();
  append_uint(out_, value);
  return *this;
}
JsonWriter& JsonWriter::number(double value) {
  before_value();
  append_double(out_, value);
  return *this;
}
JsonWriter& JsonWriter::boolean(bool value) {
  before_value();
  out_ += value ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace tp
