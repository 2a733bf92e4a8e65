#include "ports/port_router.hpp"

namespace tp {

PortRouter::PortRouter(PortMap map, std::uint32_t allow_mask, PortDecoderLimits limits)
    : map_(std::move(map)), allow_mask_(allow_mask), limits_(limits) {
  // Build every decoder now so that a bad format in the map fails at start-up.
  for (std::uint16_t port = 0; port < PortMap::port_count; ++port) {
    const PortConfig& config = map_.at(port);
    if (config.enabled) decoders_[port] = make_port_decoder(port, config, limits_);
    const bool masked = port < 32 && ((allow_mask_ >> port) & 1U) == 0;
    if (masked) continue;
    routed_[port] = decoders_[port].get();
    text_[port] = dynamic_cast<TextDecoder*>(routed_[port]);
  }
}

bool PortRouter::write_bytes(std::uint16_t port, std::span<const std::uint8_t> bytes, EventSink& sink) {
  PortDecoder* decoder = routed_[port % PortMap::port_count];
  if (decoder == nullptr) {
    filtered_ += bytes.size();
    return false;
  }
  mark_used(port);
  decoder->write_bytes(bytes, sink);
  return true;
}

void PortRouter::flush(FlushReason reason, EventSink& sink) {
  for (PortDecoder* decoder : active_) decoder->flush(reason, sink);
}

void PortRouter::cut_before(std::uint64_t moment, EventSink& sink) {
  for (PortDecoder* decoder : active_) decoder->cut_before(moment, sink);
}

}  // namespace tp
