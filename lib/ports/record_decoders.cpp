#include "ports/record_decoders.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/byte_order.hpp"
#include "ports/text_decoder.hpp"

namespace tp {
namespace {

std::string_view lookup(const std::map<std::uint32_t, std::string>& names, std::uint32_t id) {
  const auto it = names.find(id);
  return it == names.end() ? std::string_view{} : std::string_view{it->second};
}

}  // namespace

FixedRecordDecoder::FixedRecordDecoder(std::uint16_t port, std::size_t record_size, std::string_view name)
    : port_(port), record_size_(record_size), name_(name) {}

void FixedRecordDecoder::report_garbage(EventSink& sink) {
  if (garbage_bytes_ == 0) return;
  message_ = fmt::format("{}: bytes that do not start a record", name_);
  sink.on_event(Event::malformed(port_, message_, garbage_bytes_));
  garbage_bytes_ = 0;
}

void FixedRecordDecoder::report_partial(std::string_view reason, EventSink& sink) {
  report_garbage(sink);
  if (filled_ == 0) return;
  message_ = fmt::format("{}: {}", name_, reason);
  sink.on_event(Event::malformed(port_, message_, filled_, std::span<const std::uint8_t>(record_.data(), filled_)));
  filled_ = 0;
}

void FixedRecordDecoder::write(std::uint32_t value, std::uint8_t size, EventSink& sink) {
  std::array<std::uint8_t, 4> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8U * i));
  if (filled_ + size <= record_size_ && (filled_ != 0 || (garbage_bytes_ == 0 && valid_start(bytes[0])))) {
    // The write continues (or validly starts) the record and does not run past it: stored
    // whole (record_ has room for four bytes after any fill below record_size_).
    std::memcpy(record_.data() + filled_, bytes.data(), bytes.size());
    filled_ += size;
    if (filled_ == record_size_) {
      decode(record_.data(), sink);
      filled_ = 0;
    }
    return;
  }
  write_bytes(std::span<const std::uint8_t>(bytes.data(), size), sink);
}

void FixedRecordDecoder::write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (filled_ == 0) {
      if (!valid_start(bytes[i])) {
        ++garbage_bytes_;  // resync: skip until a byte that can start a record
        ++i;
        continue;
      }
      report_garbage(sink);
    }
    const std::size_t n = std::min(bytes.size() - i, record_size_ - filled_);
    std::memcpy(record_.data() + filled_, bytes.data() + i, n);
    filled_ += n;
    i += n;
    if (filled_ == record_size_) {
      decode(record_.data(), sink);
      filled_ = 0;
    }
  }
}

void FixedRecordDecoder::flush(FlushReason reason, EventSink& sink) {
  switch (reason) {
    case FlushReason::idle:
      return;  // a record may continue after a pause
    case FlushReason::overflow:
      report_partial("partial record dropped after an overflow", sink);
      return;
    case FlushReason::end:
      report_partial("input ended inside a record", sink);
      return;
  }
}

TaskIsrDecoder::TaskIsrDecoder(std::uint16_t port, std::map<std::uint32_t, std::string> isr_names)
    : FixedRecordDecoder(port, 9, decoder_name(DecoderType::task_isr)), isr_names_(std::move(isr_names)) {}

void TaskIsrDecoder::decode(const std::uint8_t* record, EventSink& sink) {
  const std::uint32_t first = load_le32(record + 1);
  switch (record[0]) {
    case 1:
      sink.on_event(Event::task_switch(port(), first, load_le32(record + 5)));
      return;
    case 2:
      sink.on_event(Event::isr_enter(port(), first, lookup(isr_names_, first)));
      return;
    case 3:
      sink.on_event(Event::isr_exit(port(), first));
      return;
    case 4:
      sink.on_event(Event::of(EventKind::idle_enter, port()));
      return;
    default:
      sink.on_event(Event::of(EventKind::idle_exit, port()));
      return;
  }
}

MarkerDecoder::MarkerDecoder(std::uint16_t port, std::map<std::uint32_t, std::string> names)
    : FixedRecordDecoder(port, 4, decoder_name(DecoderType::marker)), names_(std::move(names)) {}

void MarkerDecoder::decode(const std::uint8_t* record, EventSink& sink) {
  const std::uint32_t id = load_le32(record);
  sink.on_event(Event::marker(port(), id, lookup(names_, id)));
}

CounterDecoder::CounterDecoder(std::uint16_t port) : FixedRecordDecoder(port, 12, decoder_name(DecoderType::counter)) {}

void CounterDecoder::decode(const std::uint8_t* record, EventSink& sink) {
  sink.on_event(Event::counter(port(), load_le32(record), load_le64(record + 4)));
}

void UserDecoder::write(std::uint32_t value, std::uint8_t size, EventSink& sink) {
  scratch_.clear();
  format_.format(scratch_, value, size);
  Event event = Event::of(EventKind::text, port_);
  event.text = scratch_;
  sink.on_event(event);
}

void RawDecoder::write(std::uint32_t value, std::uint8_t size, EventSink& sink) {
  std::array<std::uint8_t, 4> bytes{};
  for (std::uint8_t i = 0; i < size; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8U * i));
  Event event = Event::of(EventKind::raw, port_);
  event.bytes = std::span<const std::uint8_t>(bytes.data(), size);
  sink.on_event(event);
}

std::unique_ptr<PortDecoder> make_port_decoder(std::uint16_t port, const PortConfig& config,
                                               const PortDecoderLimits& limits) {
  switch (config.decoder) {
    case DecoderType::text: {
      std::optional<UserFormat> value_format;
      if (!config.format.empty()) value_format = UserFormat::parse(config.format);
      return std::make_unique<TextDecoder>(port, limits.max_line, std::move(value_format));
    }
    case DecoderType::task_isr:
      return std::make_unique<TaskIsrDecoder>(port, config.names);
    case DecoderType::marker:
      return std::make_unique<MarkerDecoder>(port, config.names);
    case DecoderType::counter:
      return std::make_unique<CounterDecoder>(port);
    case DecoderType::user:
      return std::make_unique<UserDecoder>(port, UserFormat::parse(config.format));
    case DecoderType::raw:
      return std::make_unique<RawDecoder>(port);
  }
  return std::make_unique<RawDecoder>(port);
}

}  // namespace tp
