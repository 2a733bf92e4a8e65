#include "json/json_writer.hpp"

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

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    default: {
      static constexpr char hex[] = "0123456789abcdef";
      const char escaped[6] = {'\\', 'u', '0', '0', hex[c >> 4U], hex[c & 0xFU]};
      out.append(escaped, sizeof escaped);
    }
  }
}

constexpr char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t run_start = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::uint8_t cls = char_class[c];
    if (cls == 0) {
      ++i;
      continue;
    }
    if (cls == 2) {
      const std::size_t len = valid_utf8_sequence(text.substr(i));
      if (len != 0) {
        i += len;
        continue;
      }
    }
    out.append(text.data() + run_start, i - run_start);
    if (cls == 1) {
      append_escape(out, c);
    } else {
      out += replacement_character;
    }
    ++i;
    run_start = i;
  }
  out.append(text.data() + run_start, text.size() - run_start);
  out += '"';
}

void append_uint(std::string& out, std::uint64_t value) {
  char buffer[20];
  char* end = buffer + sizeof buffer;
  char* p = end;
  while (value >= 100) {
    const auto pair = static_cast<std::size_t>(value % 100) * 2;
    value /= 100;
    p -= 2;
    std::memcpy(p, digit_pairs + pair, 2);
  }
  if (value >= 10) {
    p -= 2;
    std::memcpy(p, digit_pairs + value * 2, 2);
  } else {
    *--p = static_cast<char>('0' + value);
  }
  out.append(p, static_cast<std::size_t>(end - p));
}

void append_int(std::string& out, std::int64_t value) {
  if (value < 0) {
    out += '-';
    append_uint(out, ~static_cast<std::uint64_t>(value) + 1U);
  } else {
    append_uint(out, static_cast<std::uint64_t>(value));
  }
}

void append_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";  // JSON has no NaN or infinity
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

void append_byte_array(std::string& out, std::span<const std::uint8_t> bytes) {
  out += '[';
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) out += ',';
    append_uint(out, bytes[i]);
  }
  out += ']';
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
JsonWriter& JsonWriter::integer(std::int64_t value) {
  before_value();
  append_int(out_, value);
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
