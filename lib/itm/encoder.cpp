#include "itm/encoder.hpp"

#include <stdexcept>

namespace tp::itm {
namespace {

std::uint8_t size_bits(std::uint8_t length) {
  switch (length) {
    case 1:
      return 1;
    case 2:
      return 2;
    case 4:
      return 3;
    default:
      throw std::invalid_argument("ITM source payload must be 1, 2 or 4 bytes");
  }
}

void append_le(ByteBuffer& out, std::uint64_t value, std::uint8_t length) {
  for (std::uint8_t i = 0; i < length; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8U * i)));
}

// 7-bit groups, LSB first, bit 7 set on every byte but the last.
void append_continuation(ByteBuffer& out, std::uint64_t value, std::uint8_t length) {
  for (std::uint8_t i = 0; i < length; ++i) {
    auto b = static_cast<std::uint8_t>((value >> (7U * i)) & 0x7FU);
    if (i + 1 < length) b |= 0x80U;
    out.push_back(b);
  }
}

void append_source(ByteBuffer& out, std::uint8_t address, bool hardware, std::uint64_t value, std::uint8_t length) {
  out.push_back(
      static_cast<std::uint8_t>((static_cast<unsigned>(address) << 3U) | (hardware ? 4U : 0U) | size_bits(length)));
  append_le(out, value, length);
}

}  // namespace

std::uint8_t continuation_length(std::uint64_t value, std::uint8_t max_length) {
  std::uint8_t length = 1;
  while (length < max_length && (value >> (7U * length)) != 0) ++length;
  return length;
}

void encode_packet(const Packet& p, ByteBuffer& out) {
  switch (p.kind) {
    case PacketKind::sync:
      out.insert(out.end(), {0, 0, 0, 0, 0, 0x80});
      return;
    case PacketKind::overflow:
      out.push_back(0x70);
      return;
    case PacketKind::local_timestamp:
      if (p.length == 0) {
        out.push_back(static_cast<std::uint8_t>(p.value << 4U));
      } else {
        out.push_back(static_cast<std::uint8_t>(0xC0U | (static_cast<unsigned>(p.info) << 4U)));
        append_continuation(out, p.value, p.length);
      }
      return;
    case PacketKind::global_timestamp1: {
      out.push_back(0x94);
      const std::uint64_t flags = p.length == 4 ? static_cast<std::uint64_t>(p.info) << 26U : 0;
      append_continuation(out, p.value | flags, p.length);
      return;
    }
    case PacketKind::global_timestamp2:
      out.push_back(0xB4);
      append_continuation(out, p.value, p.length);
      return;
    case PacketKind::stimulus_page:
      out.push_back(static_cast<std::uint8_t>(0x08U | (p.value << 4U)));
      return;
    case PacketKind::extension: {
      const bool more = p.length != 0;
      out.push_back(static_cast<std::uint8_t>((more ? 0x80U : 0U) | ((p.value & 7U) << 4U) | 0x08U |
                                              (static_cast<unsigned>(p.info) << 2U)));
      if (more) append_continuation(out, p.value >> 3U, p.length);
      return;
    }
    case PacketKind::instrumentation:
      append_source(out, static_cast<std::uint8_t>(p.port & 31U), false, p.value, p.length);
      return;
    case PacketKind::event_counter:
    case PacketKind::exception:
    case PacketKind::pc_sample:
    case PacketKind::data_trace_pc:
    case PacketKind::data_trace_address:
    case PacketKind::data_trace_value:
    case PacketKind::hardware:
      append_source(out, p.address, true, p.value, p.length);
      return;
    case PacketKind::malformed:
      return;
  }
}

Packet make_sync() {
  return Packet{PacketKind::sync, 0x80, 0, 0, 0, 0, 0};
}
Packet make_overflow() {
  return Packet{PacketKind::overflow, 0x70, 0, 0, 0, 0, 0};
}

Packet make_local_timestamp(std::uint64_t delta, std::uint8_t time_control) {
  if (time_control == 0 && delta >= 1 && delta <= 6) {
    return Packet{PacketKind::local_timestamp, static_cast<std::uint8_t>(delta << 4U), 0, 0, 0, 0, delta};
  }
  const std::uint8_t length = continuation_length(delta, 4);
  return Packet{PacketKind::local_timestamp,
                static_cast<std::uint8_t>(0xC0U | (static_cast<unsigned>(time_control) << 4U)),
                length,
                0,
                0,
                time_control,
                delta & ((1ULL << 28U) - 1U)};
}

Packet make_global_timestamp1(std::uint32_t low_bits, bool clock_change, bool wrap) {
  const auto info = static_cast<std::uint8_t>((clock_change ? 1U : 0U) | (wrap ? 2U : 0U));
  const std::uint8_t length = info != 0 ? 4 : continuation_length(low_bits & 0x3FFFFFFU, 4);
  return Packet{PacketKind::global_timestamp1, 0x94, length, 0, 0, info, low_bits & 0x3FFFFFFU};
}

Packet make_global_timestamp2(std::uint64_t high_bits, bool wide) {
  const std::uint8_t length = wide ? 6 : 4;
  const std::uint64_t mask = wide ? (1ULL << 38U) - 1U : (1ULL << 22U) - 1U;
  return Packet{PacketKind::global_timestamp2, 0xB4, length, 0, 0, 0, high_bits & mask};
}

Packet make_stimulus_page(std::uint8_t page) {
  return Packet{PacketKind::stimulus_page,
                static_cast<std::uint8_t>(0x08U | ((page & 7U) << 4U)),
                0,
                0,
                0,
                0,
                static_cast<std::uint64_t>(page & 7U)};
}

Packet make_instrumentation(std::uint16_t port, std::uint32_t value, std::uint8_t size) {
  const auto address = static_cast<std::uint8_t>(port & 31U);
  const std::uint64_t mask = size == 4 ? 0xFFFFFFFFULL : (1ULL << (8U * size)) - 1U;
  return Packet{PacketKind::instrumentation,
                static_cast<std::uint8_t>((address << 3U) | size_bits(size)),
                size,
                address,
                port,
                0,
                value & mask};
}

namespace {
Packet hardware_packet(PacketKind kind, std::uint8_t discriminator, std::uint64_t value, std::uint8_t size,
                       std::uint16_t port = 0, std::uint8_t info = 0) {
  const std::uint64_t mask = size == 4 ? 0xFFFFFFFFULL : (1ULL << (8U * size)) - 1U;
  return Packet{
      kind,        static_cast<std::uint8_t>((static_cast<unsigned>(discriminator) << 3U) | 4U | size_bits(size)),
      size,        discriminator,
      port,        info,
      value & mask};
}
}  // namespace

Packet make_event_counter(std::uint8_t bits) {
  return hardware_packet(PacketKind::event_counter, 0, bits & 0x3FU, 1);
}

Packet make_exception(std::uint16_t number, ExceptionAction action) {
  const auto function = static_cast<std::uint8_t>(action);
  const std::uint64_t value = (number & 0x1FFU) | (static_cast<std::uint64_t>(function) << 12U);
  return hardware_packet(PacketKind::exception, 1, value, 2, static_cast<std::uint16_t>(number & 0x1FFU), function);
}

Packet make_pc_sample(std::uint32_t pc) {
  return hardware_packet(PacketKind::pc_sample, 2, pc, 4);
}
Packet make_sleeping_pc_sample() {
  return hardware_packet(PacketKind::pc_sample, 2, 0, 1, 0, 1);
}

Packet make_data_trace_pc(std::uint8_t comparator, std::uint32_t pc) {
  return hardware_packet(PacketKind::data_trace_pc, static_cast<std::uint8_t>(8U + 2U * (comparator & 3U)), pc, 4,
                         comparator & 3U);
}

Packet make_data_trace_address(std::uint8_t comparator, std::uint16_t address) {
  return hardware_packet(PacketKind::data_trace_address, static_cast<std::uint8_t>(9U + 2U * (comparator & 3U)),
                         address, 2, comparator & 3U);
}

Packet make_data_trace_value(std::uint8_t comparator, bool write, std::uint32_t value, std::uint8_t size) {
  const auto discriminator = static_cast<std::uint8_t>(16U + 2U * (comparator & 3U) + (write ? 1U : 0U));
  return hardware_packet(PacketKind::data_trace_value, discriminator, value, size, comparator & 3U, write ? 1 : 0);
}

void ItmStreamEncoder::packet(const Packet& p) {
  if (p.kind == PacketKind::sync) page_ = 0;
  if (p.kind == PacketKind::stimulus_page) page_ = static_cast<std::uint8_t>(p.value);
  encode_packet(p, out_);
}

void ItmStreamEncoder::sync() {
  packet(make_sync());
}

void ItmStreamEncoder::write(std::uint16_t port, std::uint32_t value, std::uint8_t size) {
  const auto page = static_cast<std::uint8_t>(port >> 5U);
  if (page != page_) packet(make_stimulus_page(page));
  packet(make_instrumentation(port, value, size));
}

void ItmStreamEncoder::text(std::uint16_t port, std::string_view text) {
  for (const char c : text) write(port, static_cast<std::uint8_t>(c), 1);
}

void ItmStreamEncoder::bytes(std::uint16_t port, std::span<const std::uint8_t> data, std::uint8_t chunk) {
  std::size_t i = 0;
  while (i < data.size()) {
    std::uint8_t size = chunk;
    while (size > 1 && i + size > data.size()) size = static_cast<std::uint8_t>(size / 2);
    std::uint32_t value = 0;
    for (std::uint8_t k = 0; k < size; ++k) value |= static_cast<std::uint32_t>(data[i + k]) << (8U * k);
    write(port, value, size);
    i += size;
  }
}

void ItmStreamEncoder::timestamp(std::uint64_t delta, std::uint8_t time_control) {
  packet(make_local_timestamp(delta, time_control));
}

}  // namespace tp::itm
