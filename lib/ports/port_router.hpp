// Routes SWIT writes to the decoder the port map gives each port (created on first use).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "ports/port_decoder.hpp"
#include "ports/port_map.hpp"

namespace tp {

class PortRouter {
 public:
  // allow_mask gates ports 0-31 (bit n = port n), as Callisto's Start.allow_mask.
  PortRouter(PortMap map, std::uint32_t allow_mask = 0xFFFFFFFFU, PortDecoderLimits limits = {});

  // Returns false when the port is disabled or masked (the write is counted, not decoded).
  bool write(std::uint16_t port, std::uint32_t value, std::uint8_t size, EventSink& sink);
  // A run of 1-byte writes to one port; returns false when the port is filtered.
  bool write_bytes(std::uint16_t port, std::span<const std::uint8_t> bytes, EventSink& sink);
  void flush(FlushReason reason, EventSink& sink);
  void cut_before(std::uint64_t moment, EventSink& sink);
  [[nodiscard]] const PortMap& map() const noexcept { return map_; }
  [[nodiscard]] std::uint64_t filtered_writes() const noexcept { return filtered_; }

 private:
  [[nodiscard]] PortDecoder* decoder_for(std::uint16_t port) const noexcept {
    const bool masked = port < 32 && ((allow_mask_ >> port) & 1U) == 0;
    return masked ? nullptr : decoders_[port % PortMap::port_count].get();
  }
  void mark_used(std::uint16_t port) {
    if (used_[port % PortMap::port_count]) return;
    used_[port % PortMap::port_count] = true;
    active_.push_back(decoders_[port % PortMap::port_count].get());
  }

  PortMap map_;
  std::uint32_t allow_mask_;
  PortDecoderLimits limits_;
  std::array<std::unique_ptr<PortDecoder>, PortMap::port_count> decoders_;
  std::array<bool, PortMap::port_count> used_{};  // decoders that have seen a write
  std::vector<PortDecoder*> active_;              // only these have anything to flush
  std::uint64_t filtered_ = 0;
};

}  // namespace tp
