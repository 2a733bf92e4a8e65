// Text ports: characters from 1-byte writes (and packed in 2/4-byte writes) assembled
// into lines; a line is emitted at '\n' (a '\r' before it is dropped), at a NUL from a
// 1-byte write (C strings), at the size cap, when input pauses and at end of input.
// A line began with its first character (Event::began): its time is when the firmware
// started printing it, as orbcat dates console lines.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ports/port_decoder.hpp"
#include "ports/user_format.hpp"

namespace tp {

// Whether one of the `size` low bytes of `value` is a NUL or a '\n' (the bytes that end a
// line or are dropped), found for all of them at once (the zero-byte test of Hacker's
// Delight 6-1). Bytes above `size` are made 0xFF so that they are neither: the mask comes
// from a table, as a test of the size became a branch that write sizes mixed at random
// (1, 2 and 4 bytes) mispredict.
inline constexpr std::array<std::uint32_t, 5> bytes_above_size{0xFFFFFFFFU, 0xFFFFFF00U, 0xFFFF0000U, 0xFF000000U, 0U};
[[nodiscard]] inline bool has_line_control(std::uint32_t value, std::uint8_t size) noexcept {
  constexpr std::uint32_t ones = 0x01010101U;
  constexpr std::uint32_t highs = 0x80808080U;
  const std::uint32_t unused = bytes_above_size[std::min<std::size_t>(size, 4)];
  const std::uint32_t v = value | unused;
  const std::uint32_t n = (value ^ 0x0A0A0A0AU) | unused;
  return ((((v - ones) & ~v) | ((n - ones) & ~n)) & highs) != 0;
}

class TextDecoder final : public PortDecoder {
 public:
  TextDecoder(std::uint16_t port, std::size_t max_line, std::optional<UserFormat> value_format);
  // Inline for the common write (the router calls it directly for text ports): ordinary
  // characters that neither end nor fill the line are stored together.
  void write(std::uint32_t value, std::uint8_t size, EventSink& sink) override {
    if (plain_ && length_ + size < fast_limit_ && !has_line_control(value, size)) {
      note_append(sink);
      store_le32(value);
      length_ += size;
      return;
    }
    write_special(value, size, sink);
  }
  void flush(FlushReason reason, EventSink& sink) override;
  void write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) override;
  void cut_before(std::uint64_t moment, EventSink& sink) override;

 private:
  void write_special(std::uint32_t value, std::uint8_t size, EventSink& sink);
  void emit_line(EventSink& sink);
  void add_char(std::uint8_t c, bool from_byte_write, EventSink& sink);
  // Bookkeeping before characters are appended at the sink's current moment.
  void note_append(const EventSink& sink) noexcept {
    const std::uint64_t now = sink.moment();
    if (length_ == 0) {
      line_began_ = now;
      tail_moment_ = now;
      tail_start_ = 0;
    } else if (now != tail_moment_) {
      tail_moment_ = now;
      tail_start_ = length_;
    }
  }
  // The four bytes of a write at the end of the line, in stream order (the caller counts
  // only the write's size of them).
  void store_le32(std::uint32_t value) noexcept {
    std::array<char, 4> chars{};
    for (std::size_t i = 0; i < chars.size(); ++i) chars[i] = static_cast<char>(value >> (8U * i));
    std::memcpy(line_.data() + length_, chars.data(), chars.size());
  }
  [[nodiscard]] std::string_view line() const noexcept { return {line_.data(), length_}; }
  // Room for `more` bytes after the line and the four bytes a write stores.
  void reserve_more(std::size_t more);

  std::uint16_t port_;
  std::size_t max_line_;
  std::optional<UserFormat> value_format_;
  bool plain_;  // no value format: wider writes are characters too
  // The line so far: its first length_ bytes, with room after them for a write's four
  // bytes stored whole (only `size` of them are counted). It grows with the lines, up to
  // max_line_ + 4 (--max-line may be large: no port takes that memory before its lines do).
  std::vector<char> line_;
  std::size_t length_ = 0;
  std::size_t fast_limit_ = 0;  // below it a write neither fills the line nor needs more room
  std::uint64_t line_began_ = began_now;
  std::uint64_t tail_moment_ = 0;  // the moment of the line's last characters
  std::size_t tail_start_ = 0;     // where in line_ the characters of tail_moment_ start
  std::string scratch_;
};

}  // namespace tp
