#include "core/json_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
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

// Whether one of the 8 bytes of `word` is not printable ASCII to copy as is: below 0x20,
// '"', '\\' or from 0x80 (the word tests of Bit Twiddling Hacks, "determine if a word has a
// byte less than n" and "has a zero byte", exact as yes/no answers).
bool needs_care(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  const auto has_zero = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  const std::uint64_t below_space = (word - ones * 0x20U) & ~word & highs;
  return ((below_space | (word & highs) | has_zero(word ^ (ones * '"')) | has_zero(word ^ (ones * '\\')))) != 0;
}

}  // namespace

void append_json_string(OutBuffer& out, std::string_view text) {
  // Worst case: every byte becomes a 6-byte \u00XX escape.
  char* p = out.ensure(text.size() * 6 + 2);
  *p++ = '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // Eight plain characters (most of any log line) are copied together.
    if (std::uint64_t word = 0; text.size() - i >= 8 && (std::memcpy(&word, text.data() + i, 8), !needs_care(word))) {
      std::memcpy(p, &word, 8);
      p += 8;
      i += 8;
      continue;
    }
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
  out.commit_to(write_uint(out.ensure(max_uint_digits), value));
}

namespace {

constexpr std::array<std::uint64_t, 20> powers_of_10{1ULL,
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

unsigned decimal_digits(std::uint64_t value) noexcept {
  // From the bit length (log10(2) ~ 1233/4096), corrected by one compare.
  const auto bits = static_cast<unsigned>(64 - __builtin_clzll(value | 1U));
  const unsigned digits = (bits * 1233U) >> 12U;
  return digits + ((value | 1U) >= powers_of_10[digits] ? 1U : 0U);  // 0 has one digit too
}

// The eight decimal digits of value < 10^8 (leading zeros included) as ASCII, in the order
// they are written when stored little-endian: all eight at once, with multiplications by
// reciprocals instead of a chain of divisions (P. Khuong's SWAR conversion).
std::uint64_t eight_digits(std::uint32_t value) noexcept {
  const std::uint64_t merged = (value / 10000U) | (static_cast<std::uint64_t>(value % 10000U) << 32U);
  const std::uint64_t hundreds_high = ((merged * 10486U) >> 20U) & ((0x7FULL << 32U) | 0x7FULL);  // / 100
  const std::uint64_t hundreds = ((merged - 100U * hundreds_high) << 16U) + hundreds_high;
  std::uint64_t tens = ((hundreds * 103U) >> 10U) & ((0xFULL << 48U) | (0xFULL << 32U) | (0xFULL << 16U) | 0xFULL);
  tens += (hundreds - 10U * tens) << 8U;
  return tens + 0x3030303030303030ULL;
}

// The last `digits` (1-8) of eight_digits(value) at `at`; 8 bytes are stored.
char* put_digits(char* at, std::uint32_t value, unsigned digits) noexcept {
  std::uint64_t word = eight_digits(value) >> (8U * (8U - digits));
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);  // the same bytes in memory
  std::memcpy(at, &word, sizeof word);
  return at + digits;
}

}  // namespace

// Stores may reach past the digits, never past at + max_uint_digits.
char* write_uint(char* const at, std::uint64_t value) noexcept {
  if (value < 10) {
    *at = static_cast<char>('0' + value);
    return at + 1;
  }
  constexpr std::uint64_t e8 = 100'000'000;
  if (value < e8) return put_digits(at, static_cast<std::uint32_t>(value), decimal_digits(value));
  if (value < e8 * e8) {
    const auto high = static_cast<std::uint32_t>(value / e8);
    char* p = put_digits(at, high, decimal_digits(high));
    return put_digits(p, static_cast<std::uint32_t>(value % e8), 8);
  }
  const auto top = static_cast<std::uint32_t>(value / (e8 * e8));  // at most 1844: 4 digits
  const std::uint64_t rest = value % (e8 * e8);
  char* p = put_digits(at, top, decimal_digits(top));
  p = put_digits(p, static_cast<std::uint32_t>(rest / e8), 8);
  return put_digits(p, static_cast<std::uint32_t>(rest % e8), 8);
}

void append_byte_array(OutBuffer& out, std::span<const std::uint8_t> bytes) {
  out += '[';
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) out += ',';
    append_uint(out, bytes[i]);
  }
  out += ']';
}

// The std::string forms write through one buffer per thread: a buffer per call was a
// malloc and a free per field (trace-store's rows: seven strings a row).
namespace {
OutBuffer& scratch_buffer() {
  thread_local OutBuffer buffer(256);
  buffer.clear();
  return buffer;
}
}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  OutBuffer& buffer = scratch_buffer();
  append_json_string(buffer, text);
  out += buffer.view();
}

void append_uint(std::string& out, std::uint64_t value) {
  OutBuffer& buffer = scratch_buffer();
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
