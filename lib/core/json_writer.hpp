// JSON output without a DOM: correct string escaping (RFC 8259 section 7) with invalid
// UTF-8 replaced by U+FFFD, and fast integer formatting. Appends to a std::string.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/out_buffer.hpp"

namespace tp {

// Appends `text` as a quoted JSON string. Control characters, quotes and backslashes are
// escaped; every byte sequence that is not valid UTF-8 becomes U+FFFD.
void append_json_string(OutBuffer& out, std::string_view text);
void append_uint(OutBuffer& out, std::uint64_t value);
// Writes `value`'s decimal digits at `at` (room for max_uint_digits); returns their end.
inline constexpr std::size_t max_uint_digits = 20;
char* write_uint(char* at, std::uint64_t value) noexcept;
// Appends [b0,b1,...] as a JSON array of integers.
void append_byte_array(OutBuffer& out, std::span<const std::uint8_t> bytes);
// The shortest text that reads back as `value`; null when it is not finite (JSON has no
// NaN or infinity).
void append_double(OutBuffer& out, double value);

// The same for std::string (diagnostics and other cold paths).
void append_json_string(std::string& out, std::string_view text);
void append_uint(std::string& out, std::uint64_t value);
void append_int(std::string& out, std::int64_t value);
void append_double(std::string& out, double value);

// Structured writer with automatic commas, for messages that are not on a hot path.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) noexcept : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view value);
  JsonWriter& uint(std::uint64_t value);
  JsonWriter& number(double value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // A value that is already JSON text (trusted: not checked).
  JsonWriter& raw(std::string_view json);

 private:
  void before_value();
  std::string& out_;
  std::uint64_t needs_comma_ = 0;  // one bit per nesting level
  unsigned depth_ = 0;
  bool after_key_ = false;
};

}  // namespace tp
