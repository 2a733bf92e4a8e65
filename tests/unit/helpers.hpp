// Shared test helpers: run the decoder over bytes in chosen chunk sizes, collect events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "itm/decoder.hpp"
#include "itm/encoder.hpp"
#include "ports/event.hpp"

namespace tp::test {

inline std::vector<itm::Packet> decode_packets(const std::vector<std::uint8_t>& bytes, std::size_t chunk = 0,
                                               itm::DecoderOptions options = {}) {
  itm::ItmDecoder decoder(options);
  std::vector<itm::Packet> packets;
  const auto sink = [&](const itm::Packet& p) { packets.push_back(p); };
  if (chunk == 0) chunk = bytes.size() == 0 ? 1 : bytes.size();
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    const std::size_t n = std::min(chunk, bytes.size() - i);
    decoder.feed(std::span<const std::uint8_t>(bytes.data() + i, n), sink);
  }
  decoder.finish(sink);
  return packets;
}

// An owning copy of an Event, for assertions.
struct OwnedEvent {
  EventKind kind;
  std::uint16_t port;
  Event event;  // its values, read by name; text and bytes are the owned copies below
  std::string text;
  std::vector<std::uint8_t> bytes;
};

class CollectingSink final : public EventSink {
 public:
  void on_event(const Event& e) override {
    Event values = e;
    values.text = {};
    values.bytes = {};
    events.push_back(OwnedEvent{e.kind, e.port, values, std::string(e.text),
                                std::vector<std::uint8_t>(e.bytes.begin(), e.bytes.end())});
  }
  std::vector<OwnedEvent> events;
};

}  // namespace tp::test
