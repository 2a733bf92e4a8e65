#include "ports/text_decoder.hpp"

#include <algorithm>
#include <cstring>

namespace tp {

TextDecoder::TextDecoder(std::uint16_t port, std::size_t max_line, std::optional<UserFormat> value_format)
    : port_(port),
      max_line_(max_line == 0 ? 1 : max_line),
      value_format_(std::move(value_format)),
      plain_(!value_format_) {
  reserve_more(std::min<std::size_t>(max_line_, 252));
}

void TextDecoder::reserve_more(std::size_t more) {
  const std::size_t needed = std::min(length_ + more, max_line_) + 4;
  if (needed > line_.size()) line_.resize(std::min(std::max(needed, 2 * line_.size()), max_line_ + 4));
  fast_limit_ = std::min(max_line_, line_.size() - 3);
}

void TextDecoder::emit_line(EventSink& sink) {
  Event event = Event::of(EventKind::text, port_);
  event.text = line();
  event.began = line_began_;
  sink.on_event(event);
  length_ = 0;
}

void TextDecoder::cut_before(std::uint64_t moment, EventSink& sink) {
  if (length_ == 0) return;
  if (tail_moment_ < moment) {  // all of it came before the pause
    emit_line(sink);
    return;
  }
  if (tail_start_ == 0) return;  // all of it came after
  // Characters from before the pause, then the ones after it: two lines.
  const std::string after(line().substr(tail_start_));
  length_ = tail_start_;
  emit_line(sink);
  reserve_more(after.size());
  std::memcpy(line_.data(), after.data(), after.size());
  length_ = after.size();
  line_began_ = tail_moment_;
  tail_start_ = 0;
}

void TextDecoder::add_char(std::uint8_t c, bool from_byte_write, EventSink& sink) {
  if (c == '\n') {
    if (length_ != 0 && line_[length_ - 1] == '\r') --length_;
    emit_line(sink);
    return;
  }
  if (c == 0) {
    // A NUL from a 1-byte write ends a C string; in wider writes it is padding.
    if (from_byte_write && length_ != 0) emit_line(sink);
    return;
  }
  note_append(sink);
  reserve_more(1);
  line_[length_++] = static_cast<char>(c);
  if (length_ >= max_line_) emit_line(sink);
}

void TextDecoder::write_special(std::uint32_t value, std::uint8_t size, EventSink& sink) {
  if (size != 1 && value_format_) {
    if (length_ != 0) emit_line(sink);
    scratch_.clear();
    value_format_->format(scratch_, value, size);
    Event event = Event::of(EventKind::text, port_);
    event.text = scratch_;
    sink.on_event(event);
    return;
  }
  for (std::uint8_t i = 0; i < size; ++i) add_char(static_cast<std::uint8_t>(value >> (8U * i)), size == 1, sink);
}

namespace {
// Index of the first '\n' or NUL in bytes[from, limit), or limit.
std::size_t find_line_end(std::span<const std::uint8_t> bytes, std::size_t from, std::size_t limit) {
  const std::uint8_t* data = bytes.data();
  std::size_t end = limit;
  if (const void* newline = std::memchr(data + from, '\n', limit - from)) {
    end = static_cast<std::size_t>(static_cast<const std::uint8_t*>(newline) - data);
  }
  if (const void* nul = std::memchr(data + from, 0, end - from)) {
    end = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - data);
  }
  return end;
}
}  // namespace

void TextDecoder::write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) {
  // Same rules as add_char() for byte writes, but ordinary characters are appended in
  // spans rather than one by one.
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::size_t limit = std::min(bytes.size(), i + (max_line_ - length_));
    std::size_t j = find_line_end(bytes, i, limit);
    if (j > i) note_append(sink);
    reserve_more(j - i);
    std::memcpy(line_.data() + length_, bytes.data() + i, j - i);
    length_ += j - i;
    if (j == limit && length_ >= max_line_) {
      emit_line(sink);
    } else if (j < limit) {
      add_char(bytes[j], true, sink);
      ++j;
    }
    i = j;
  }
}

void TextDecoder::flush(FlushReason reason, EventSink& sink) {
  if (reason != FlushReason::overflow && length_ != 0) emit_line(sink);
}

}  // namespace tp
