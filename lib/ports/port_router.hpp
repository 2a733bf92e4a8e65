// Routes SWIT writes to the decoder the port map gives each port (created on first use).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "ports/port_decoder.hpp"
#include "ports/port_map.hpp"
#include "ports/text_decoder.hpp"

namespace tp {

class PortRouter {
 public:
  // allow_mask gates ports 0-31 (bit n = port n), as Callisto's Start.allow_mask.
  PortRouter(PortMap map, std::uint32_t allow_mask = 0xFFFFFFFFU, PortDecoderLimits limits = {});

  // Returns false when the port is disabled or masked (the write is counted, not decoded).
  // Inline: the session calls it for most packets of a stream.
  [[gnu::always_inline]] bool write(std::uint16_t port, std::uint32_t value, std::uint8_t size, EventSink& sink) {
    const std::size_t slot = port % PortMap::port_count;
    if (TextDecoder* text = text_[slot]; text != nullptr) {  // called directly: its write is inline
      mark_used(port);
      text->write(value, size, sink);
      return true;
    }
    PortDecoder* decoder = routed_[slot];
    if (decoder == nullptr) {
      ++filtered_;
      return false;
    }
    mark_used(port);
    decoder->write(value, size, sink);
    return true;
  }
  // A run of 1-byte writes to one port; returns false when the port is filtered.
  bool write_bytes(std::uint16_t port, std::span<const std::uint8_t> bytes, EventSink& sink);
  void flush(FlushReason reason, EventSink& sink);
  void cut_before(std::uint64_t moment, EventSink& sink);
  [[nodiscard]] const PortMap& map() const noexcept { return map_; }
  [[nodiscard]] std::uint64_t filtered_writes() const noexcept { return filtered_; }

 private:
  void mark_used(std::uint16_t port) {
    if (used_[port % PortMap::port_count]) return;
    used_[port % PortMap::port_count] = true;
    active_.push_back(decoders_[port % PortMap::port_count].get());
  }

  PortMap map_;
  std::uint32_t allow_mask_;
  PortDecoderLimits limits_;
  std::array<std::unique_ptr<PortDecoder>, PortMap::port_count> decoders_;
  // By port: the decoder a write goes to (none: disabled or masked), and the same when it
  // is a text decoder.
  std::array<PortDecoder*, PortMap::port_count> routed_{};
  std::array<TextDecoder*, PortMap::port_count> text_{};
  std::array<bool, PortMap::port_count> used_{};  // decoders that have seen a write
  std::vector<PortDecoder*> active_;              // only these have anything to flush
  std::uint64_t filtered_ = 0;
};

}  // namespace tp
