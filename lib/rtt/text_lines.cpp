#include "rtt/text_lines.hpp"

#include "records/record_line.hpp"

namespace tp::rtt {

void TextLines::emit(OutBuffer& out) {
  RecordLine record(
      out, {began_us_, clock_name(RecordClock::us), channel_, RecordKind::text, source_name(RecordSource::rtt)});
  record.data().string("message", line_);
  record.end();
  line_.clear();
  open_ = false;
  ++lines_;
}

void TextLines::add(std::span<const std::uint8_t> bytes, std::uint64_t now_us, OutBuffer& out) {
  for (const std::uint8_t byte : bytes) {
    if (!open_) {
      open_ = true;
      began_us_ = now_us;
    }
    if (byte == '\n') {
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      emit(out);
      continue;
    }
    line_ += static_cast<char>(byte);
    if (line_.size() >= max_line_) emit(out);
  }
}

void TextLines::flush_stale(std::uint64_t older_than_us, OutBuffer& out) {
  if (open_ && !line_.empty() && began_us_ < older_than_us) emit(out);
}

void TextLines::finish(OutBuffer& out) {
  if (open_ && !line_.empty()) emit(out);
  open_ = false;
}

}  // namespace tp::rtt
