// Fuzz target: every port decoder, driven by a stream of (size, value) writes.
#include <array>
#include <memory>

#include "ports/port_decoder.hpp"

namespace {
class CountingSink final : public tp::EventSink {
 public:
  void on_event(const tp::Event& event) override { total_ += event.text.size() + event.bytes.size() + 1; }
  std::size_t total_ = 0;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tp::PortConfig text{"t", tp::DecoderType::text, {}, true, {}};
  tp::PortConfig text_values{"v", tp::DecoderType::text, "%08x", true, {}};
  tp::PortConfig task{"r", tp::DecoderType::task_isr, {}, true, {{1, "one"}}};
  tp::PortConfig marker{"m", tp::DecoderType::marker, {}, true, {{2, "two"}}};
  tp::PortConfig counter{"c", tp::DecoderType::counter, {}, true, {}};
  tp::PortConfig user{"u", tp::DecoderType::user, "%+6.2f", true, {}};
  tp::PortConfig user_int{"i", tp::DecoderType::user, "%d", true, {}};
  tp::PortConfig raw{"w", tp::DecoderType::raw, {}, true, {}};
  const tp::PortDecoderLimits limits{64};
  std::array<std::unique_ptr<tp::PortDecoder>, 8> decoders{
      tp::make_port_decoder(0, text, limits),     tp::make_port_decoder(1, text_values, limits),
      tp::make_port_decoder(2, task, limits),     tp::make_port_decoder(3, marker, limits),
      tp::make_port_decoder(4, counter, limits),  tp::make_port_decoder(5, user, limits),
      tp::make_port_decoder(6, user_int, limits), tp::make_port_decoder(7, raw, limits)};
  CountingSink sink;
  std::size_t i = 0;
  while (i < size) {
    const std::uint8_t control = data[i++];
    const std::uint8_t write_size = std::array<std::uint8_t, 4>{1, 2, 4, 1}[control & 3U];
    std::uint32_t value = 0;
    for (std::uint8_t k = 0; k < write_size && i < size; ++k)
      value |= static_cast<std::uint32_t>(data[i++]) << (8U * k);
    auto& decoder = *decoders[(control >> 2U) & 7U];
    if ((control & 0xE0U) == 0xE0U) {
      decoder.flush(static_cast<tp::FlushReason>((control >> 2U) % 3U), sink);
    } else {
      decoder.write(value, write_size, sink);
    }
  }
  for (auto& decoder : decoders) decoder->flush(tp::FlushReason::end, sink);
  return 0;
}
