// Push-style ITM/DWT packet decoder: feed it any split of the byte stream, it calls the
// sink with each whole packet. Independent of I/O; memory use is constant.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

#include "itm/le64.hpp"
#include "itm/packet.hpp"

namespace tp::itm {

struct DecoderOptions {
  // After a malformed packet, skip everything until the next sync packet instead of
  // decoding the next byte as a header.
  bool strict_sync = false;
  // Start unsynchronized (wait for a sync before decoding anything).
  bool wait_for_sync = false;
};

class ItmDecoder {
 public:
  explicit ItmDecoder(DecoderOptions options = {}) noexcept;

  template <class Sink>
  void feed(std::span<const std::uint8_t> bytes, Sink&& sink);

  // End of input: reports a packet cut short and pending stray bytes.
  template <class Sink>
  void finish(Sink&& sink) {
    const int n = finish_pending();
    for (int i = 0; i < n; ++i) sink(ready_[static_cast<std::size_t>(i)]);
  }

  // Forget partial state (e.g. after the byte source reconnects); keeps options.
  void reset() noexcept;

 private:
  // skip_continuation: the rest of an over-long continuation packet, up to its byte with
  // bit 7 clear (as sigrok's arm_itm resyncs; reading those bytes as headers invents packets).
  enum class State : std::uint8_t { header, fixed_payload, continuation, skip_continuation, unsynced };

  int step(std::uint8_t byte);
  int finish_pending();
  int on_header(std::uint8_t h, std::uint32_t zeros_before);
  int on_fixed_payload(std::uint8_t byte);
  int on_continuation(std::uint8_t byte);
  int on_skipped_continuation(std::uint8_t byte);
  int on_unsynced(std::uint8_t byte, std::uint32_t zeros_before);
  int complete_source(int count);
  // Decodes the whole packets at p (source packets and timestamps, the bulk of a stream);
  // returns where the first other one starts.
  template <class Sink>
  const std::uint8_t* decode_whole_packets(const std::uint8_t* p, const std::uint8_t* end, Sink& sink);
  int complete_continuation(int count);
  void add_garbage(std::uint8_t first_byte, std::uint32_t bytes, MalformedReason reason);
  int flush_garbage(int count);
  int malformed_packet_in_progress(int count, MalformedReason reason);
  void after_malformed() noexcept;
  Packet& out(int index) noexcept { return ready_[static_cast<std::size_t>(index)]; }

  DecoderOptions options_;
  State state_ = State::header;
  Packet current_{};
  std::uint8_t expected_ = 0;  // payload bytes of a fixed packet, or the maximum of a continuation
  std::uint8_t page_ = 0;
  std::uint32_t zero_run_ = 0;      // consecutive 0x00 bytes, across packet boundaries
  std::uint32_t header_zeros_ = 0;  // zeros seen where a header was expected
  Packet garbage_{};                // coalesced malformed bytes not yet reported
  std::array<Packet, 3> ready_{};
};

// Payload length of a source packet by its size bits SS (D4.2.8: 0, 1, 2, 4 bytes), by
// arithmetic, (1 << SS) >> 1: the fast path loads the next header from where this length
// says, so a table load here would lengthen the chain every packet waits on.
[[nodiscard]] constexpr std::uint8_t source_payload_length_of(std::uint8_t header) noexcept {
  return static_cast<std::uint8_t>((1U << (header & 3U)) >> 1U);
}
static_assert(source_payload_length_of(0) == 0 && source_payload_length_of(1) == 1 &&
              source_payload_length_of(2) == 2 && source_payload_length_of(3) == 4);

// Copies the payloads of consecutive [header, byte] pairs from p to out, eight pairs
// at a time while all eight carry `header`; returns how many it copied (the caller
// finishes the run byte by byte).
inline std::size_t gather_byte_run(const std::uint8_t* p, const std::uint8_t* end, std::uint8_t header,
                                   std::uint8_t* out, std::size_t max) noexcept {
  if constexpr (std::endian::native != std::endian::little) return 0;  // the caller's loop does it all
  constexpr std::uint64_t even_bytes = 0x00FF00FF00FF00FFULL;
  const std::uint64_t headers = even_bytes / 0xFFU * header;
  std::size_t n = 0;
  while (n + 8 <= max && end - p >= 16) {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::memcpy(&lo, p, 8);
    std::memcpy(&hi, p + 8, 8);
    if ((lo & even_bytes) != headers || (hi & even_bytes) != headers) break;
    // Odd bytes (little-endian: bits 8-15, 24-31, ...) packed into 4 bytes per word.
    const auto pack = [&](std::uint64_t w) {
      w = (w >> 8U) & even_bytes;
      w = (w | (w >> 8U)) & 0x0000FFFF0000FFFFULL;
      return static_cast<std::uint32_t>((w | (w >> 16U)) & 0xFFFFFFFFULL);
    };
    const std::uint32_t a = pack(lo);
    const std::uint32_t b = pack(hi);
    std::memcpy(out + n, &a, 4);
    std::memcpy(out + n + 4, &b, 4);
    n += 8;
    p += 16;
  }
  return n;
}

// A sink may also take runs of 1-byte writes to one stimulus port in one call (text
// output is mostly such runs): sink.byte_run(port, bytes). Otherwise it gets packets.
template <class Sink>
concept ByteRunSink = requires(Sink& sink, std::uint16_t port, std::span<const std::uint8_t> bytes) {
  sink.byte_run(port, bytes);
};

// Sets the kind and fields of a hardware-source packet from its discriminator and size (D4.3).
inline void classify_hardware(Packet& p) noexcept {
  const std::uint8_t discriminator = p.address;
  const auto comparator = static_cast<std::uint16_t>((discriminator >> 1U) & 3U);
  p.kind = PacketKind::hardware;  // unless it matches a known form below (D4.3)
  if (discriminator == 0 && p.length == 1) {
    p.kind = PacketKind::event_counter;
  } else if (discriminator == 1 && p.length == 2) {
    p.kind = PacketKind::exception;
    p.port = static_cast<std::uint16_t>(p.value & 0x1FFU);
    p.info = static_cast<std::uint8_t>((p.value >> 12U) & 3U);
  } else if (discriminator == 2 && p.length == 4) {
    p.kind = PacketKind::pc_sample;
  } else if (discriminator == 2 && p.length == 1 && p.value == 0) {
    p.kind = PacketKind::pc_sample;
    p.info = 1;  // sleeping: no PC
  } else if (discriminator >= 8 && discriminator < 16) {
    const bool address_offset = (discriminator & 1U) != 0;
    if (!address_offset && p.length == 4) {
      p.kind = PacketKind::data_trace_pc;
      p.port = comparator;
    } else if (address_offset && p.length == 2) {
      p.kind = PacketKind::data_trace_address;
      p.port = comparator;
    }
  } else if (discriminator >= 16 && discriminator < 24) {
    p.kind = PacketKind::data_trace_value;
    p.port = comparator;
    p.info = static_cast<std::uint8_t>(discriminator & 1U);
  }
}

// How the fast path of feed() takes a header byte (the rest go through the state machine).
enum class FastHeader : std::uint8_t { other, software, hardware, short_timestamp, long_timestamp };

inline constexpr std::array<FastHeader, 256> fast_headers = [] {
  std::array<FastHeader, 256> table{};
  for (unsigned h = 0; h < 256; ++h) {
    if ((h & 3U) != 0) {
      table[h] = (h & 4U) == 0 ? FastHeader::software : FastHeader::hardware;  // D4.2.8, D4.3
    } else if ((h & 0x8FU) == 0 && h != 0 && h != 0x70) {
      table[h] = FastHeader::short_timestamp;  // LTS2: 0TTT0000 (0x70 is overflow)
    } else if ((h & 0xCFU) == 0xC0U) {
      table[h] = FastHeader::long_timestamp;  // LTS1: 11TT0000
    }
  }
  return table;
}();

// The payload of a source packet of `length` bytes, from the 8 bytes after its header.
inline constexpr std::array<std::uint64_t, 5> payload_masks{0, 0xFF, 0xFFFF, 0, 0xFFFFFFFF};

template <class Sink>
const std::uint8_t* ItmDecoder::decode_whole_packets(const std::uint8_t* p, const std::uint8_t* end, Sink& sink) {
  // Every packet taken here starts with a non-zero header and ends inside [begin, p), and
  // each load reads 8 bytes after a header: stop 9 bytes before the end.
  const std::uint8_t* const begin = p;
  const std::uint8_t* const last = end - 9;
  while (p <= last) {
    const std::uint8_t header = p[0];
    const std::uint64_t after = load_le64_unaligned(p + 1);
    const FastHeader form = fast_headers[header];
    if (form == FastHeader::software) {
      const std::uint8_t length = source_payload_length_of(header);
      const auto port = static_cast<std::uint16_t>(page_ * 32U + (header >> 3U));
      if constexpr (ByteRunSink<Sink>) {
        // Three 1-byte writes in a row to one port start a run (tested without a branch per
        // condition: in mixed write sizes each alone is a coin toss for the predictor).
        const bool starts_run = static_cast<unsigned>(length == 1) & static_cast<unsigned>(p[2] == header) &
                                static_cast<unsigned>(p[4] == header);
        if (starts_run) {
          std::array<std::uint8_t, 512> run;  // NOLINT(cppcoreguidelines-pro-type-member-init): filled below
          std::size_t n = gather_byte_run(p, end, header, run.data(), run.size());
          p += 2 * n;
          while (n < run.size() && end - p >= 2 && p[0] == header) {
            run[n++] = p[1];
            p += 2;
          }
          sink.byte_run(port, std::span<const std::uint8_t>(run.data(), n));
          continue;
        }
      }
      p += 1 + length;
      sink(Packet{PacketKind::instrumentation, header, length, static_cast<std::uint8_t>(header >> 3U), port, 0,
                  after & payload_masks[length]});
    } else if (form == FastHeader::hardware) {
      const std::uint8_t length = source_payload_length_of(header);
      Packet packet{PacketKind::hardware,         header, length, static_cast<std::uint8_t>(header >> 3U), 0, 0,
                    after & payload_masks[length]};
      classify_hardware(packet);
      p += 1 + length;
      sink(packet);
    } else if (form == FastHeader::short_timestamp) {
      ++p;
      sink(Packet{PacketKind::local_timestamp, header, 0, 0, 0, 0, static_cast<std::uint64_t>(header >> 4U)});
    } else if (form == FastHeader::long_timestamp) {
      // Up to 4 bytes of 7 bits, bit 7 set on all but the last (D4.2.4); a longer one is
      // malformed and left to the state machine.
      const std::uint64_t last_bytes = ~after & 0x80808080U;
      if (last_bytes == 0) break;
      const auto length = static_cast<std::uint8_t>(std::countr_zero(last_bytes) / 8 + 1);
      const std::uint64_t value =
          (after & 0x7FU) | ((after >> 1U) & 0x3F80U) | ((after >> 2U) & 0x1FC000U) | ((after >> 3U) & 0xFE00000U);
      p += 1 + length;
      sink(Packet{PacketKind::local_timestamp, header, length, 0, 0, static_cast<std::uint8_t>((header >> 4U) & 3U),
                  value & ((std::uint64_t{1} << (7U * length)) - 1U)});
    } else {
      break;
    }
  }
  if (p != begin) {
    // Zeros at the end of the last payload may begin a sync: the state machine counts them.
    std::uint32_t zeros = 0;
    while (p[-1 - static_cast<std::ptrdiff_t>(zeros)] == 0) ++zeros;
    zero_run_ = zeros;
  }
  return p;
}

template <class Sink>
void ItmDecoder::feed(std::span<const std::uint8_t> bytes, Sink&& sink) {
  const std::uint8_t* p = bytes.data();
  const std::uint8_t* const end = p + bytes.size();
  while (p < end) {
    // Between packets with nothing pending, whole packets in the buffer are decoded without
    // the byte-wise state machine (same results: the fuzzer compares every split).
    if (state_ == State::header && header_zeros_ == 0 && garbage_.value == 0 && end - p >= 9) {
      p = decode_whole_packets(p, end, sink);
      if (p == end) break;
    }
    const int n = step(*p++);
    for (int i = 0; i < n; ++i) sink(ready_[static_cast<std::size_t>(i)]);
  }
}

}  // namespace tp::itm
