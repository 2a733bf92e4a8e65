// ITM/DWT encoder: the exact inverse of ItmDecoder, for tests, benchmarks and the
// simulated target. encode_packet() writes one packet as given; ItmStreamEncoder adds
// the bookkeeping a target does (stimulus pages, timestamp compression).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "itm/packet.hpp"

namespace tp::itm {

using ByteBuffer = std::vector<std::uint8_t>;

// Appends the bytes of `packet` (any kind but malformed, which has no encoding).
// Fields are used as the decoder reports them, so decode(encode(p)) == p.
void encode_packet(const Packet& packet, ByteBuffer& out);

// Packet constructors with the field conventions of packet.hpp.
Packet make_sync();
Packet make_overflow();
Packet make_local_timestamp(std::uint64_t delta, std::uint8_t time_control = 0);  // LTS2 when it fits
Packet make_global_timestamp1(std::uint32_t low_bits, bool clock_change = false, bool wrap = false);
Packet make_global_timestamp2(std::uint64_t high_bits, bool wide = false);
Packet make_stimulus_page(std::uint8_t page);
Packet make_instrumentation(std::uint16_t port, std::uint32_t value, std::uint8_t size);
Packet make_event_counter(std::uint8_t bits);
Packet make_exception(std::uint16_t number, ExceptionAction action);
Packet make_pc_sample(std::uint32_t pc);
Packet make_sleeping_pc_sample();
Packet make_data_trace_pc(std::uint8_t comparator, std::uint32_t pc);
Packet make_data_trace_address(std::uint8_t comparator, std::uint16_t address);
Packet make_data_trace_value(std::uint8_t comparator, bool write, std::uint32_t value, std::uint8_t size);

// Minimal number of 7-bit groups for a continuation payload.
std::uint8_t continuation_length(std::uint64_t value, std::uint8_t max_length);

// Stateful encoder that writes page packets for ports above 31 as a target would.
class ItmStreamEncoder {
 public:
  explicit ItmStreamEncoder(ByteBuffer& out) : out_(out) {}
  void packet(const Packet& p);
  void sync();
  void write(std::uint16_t port, std::uint32_t value, std::uint8_t size);
  // Text as 1-byte writes (the usual ITM_SendChar way).
  void text(std::uint16_t port, std::string_view text);
  // A byte record (e.g. TaskIsr's 9 bytes) as writes of `chunk` bytes (1, 2 or 4).
  void bytes(std::uint16_t port, std::span<const std::uint8_t> data, std::uint8_t chunk);
  void timestamp(std::uint64_t delta, std::uint8_t time_control = 0);

 private:
  ByteBuffer& out_;
  std::uint8_t page_ = 0;
};

}  // namespace tp::itm
