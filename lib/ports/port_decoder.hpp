// A decoder for the writes to one stimulus port. Push-style: each SWIT payload goes in,
// events come out through the sink; no I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "ports/event.hpp"
#include "ports/port_map.hpp"

namespace tp {

enum class FlushReason : std::uint8_t {
  idle,      // input paused: emit partial text lines
  overflow,  // the target dropped packets: partial binary records are now unreliable
  end,       // end of input
};

class PortDecoder {
 public:
  PortDecoder() = default;
  PortDecoder(const PortDecoder&) = delete;
  PortDecoder& operator=(const PortDecoder&) = delete;
  PortDecoder(PortDecoder&&) = delete;
  PortDecoder& operator=(PortDecoder&&) = delete;
  virtual ~PortDecoder() = default;

  // One SWIT write: `size` (1, 2 or 4) little-endian bytes of `value`.
  virtual void write(std::uint32_t value, std::uint8_t size, EventSink& sink) = 0;
  virtual void flush(FlushReason reason, EventSink& sink) = 0;
  // The writes made at EventSink::moment() `moment` or later came after a pause longer than
  // the line timeout (seen in target time, replaying a file): a partial line ends before
  // them, as a live decode would have ended it when input paused.
  virtual void cut_before(std::uint64_t moment, EventSink& sink) {
    (void)moment;
    (void)sink;
  }
  // A run of 1-byte writes; decoders override it when they can do better than a loop.
  virtual void write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) {
    for (const std::uint8_t b : bytes) write(b, 1, sink);
  }
};

struct PortDecoderLimits {
  std::size_t max_line = 4096;  // Text: a longer line is emitted in pieces
};

std::unique_ptr<PortDecoder> make_port_decoder(std::uint16_t port, const PortConfig& config,
                                               const PortDecoderLimits& limits);

}  // namespace tp
