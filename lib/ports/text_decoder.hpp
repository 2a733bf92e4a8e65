// Text ports: characters from 1-byte writes (and packed in 2/4-byte writes) assembled
// into lines; a line is emitted at '\n' (a '\r' before it is dropped), at a NUL from a
// 1-byte write (C strings), at the size cap, when input pauses and at end of input.
// A line began with its first character (Event::began): its time is when the firmware
// started printing it, as orbcat dates console lines.
#pragma once

#include <optional>
#include <string>

#include "ports/port_decoder.hpp"
#include "ports/user_format.hpp"

namespace tp {

class TextDecoder final : public PortDecoder {
 public:
  TextDecoder(std::uint16_t port, std::size_t max_line, std::optional<UserFormat> value_format);
  void write(std::uint32_t value, std::uint8_t size, EventSink& sink) override;
  void flush(FlushReason reason, EventSink& sink) override;
  void write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) override;
  void cut_before(std::uint64_t moment, EventSink& sink) override;

 private:
  void emit_line(EventSink& sink);
  void add_char(std::uint8_t c, bool from_byte_write, EventSink& sink);
  // Bookkeeping before characters are appended at the sink's current moment.
  void note_append(EventSink& sink);

  std::uint16_t port_;
  std::size_t max_line_;
  std::optional<UserFormat> value_format_;
  std::string line_;
  std::uint64_t line_began_ = began_now;
  std::uint64_t tail_moment_ = 0;  // the moment of the line's last characters
  std::size_t tail_start_ = 0;     // where in line_ the characters of tail_moment_ start
  std::string scratch_;
};

}  // namespace tp
