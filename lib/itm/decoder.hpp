// Push-style ITM/DWT packet decoder: feed it any split of the byte stream, it calls the
// sink with each whole packet. Independent of I/O; memory use is constant.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

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
  // Sets kind and fields of a hardware-source packet from its discriminator and size.
  static void classify_hardware(Packet& packet) noexcept;
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

// Payload length for source packets by the size bits SS (D4.2.8).
inline constexpr std::array<std::uint8_t, 4> source_payload_length{0, 1, 2, 4};

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

template <class Sink>
void ItmDecoder::feed(std::span<const std::uint8_t> bytes, Sink&& sink) {
  const std::uint8_t* p = bytes.data();
  const std::uint8_t* const end = p + bytes.size();
  while (p < end) {
    // Fast paths while between packets with nothing pending: whole source packets in
    // the buffer are decoded without the byte-wise state machine (same results).
    const bool between_packets = state_ == State::header && header_zeros_ == 0 && garbage_.value == 0;
    if (between_packets && end - p >= 5 && (p[0] & 3U) == 0) {
      const std::uint8_t header = p[0];
      if ((header & 0xCFU) == 0xC0U) {  // LTS1: 11TT0000 and up to 4 continuation bytes
        std::uint64_t value = 0;
        std::uint8_t length = 0;
        bool more = true;
        while (more && length < 4) {
          const std::uint8_t b = p[1 + length];
          value |= static_cast<std::uint64_t>(b & 0x7FU) << (7U * length);
          more = (b & 0x80U) != 0;
          ++length;
        }
        if (!more) {
          zero_run_ = p[length] == 0 ? 1 : 0;
          p += 1 + length;
          sink(Packet{PacketKind::local_timestamp, header, length, 0, 0, static_cast<std::uint8_t>((header >> 4U) & 3U),
                      value});
          continue;
        }
      } else if ((header & 0x8FU) == 0 && header != 0 && header != 0x70) {  // LTS2: 0TTT0000
        zero_run_ = 0;
        ++p;
        sink(Packet{PacketKind::local_timestamp, header, 0, 0, 0, 0, static_cast<std::uint64_t>(header >> 4U)});
        continue;
      }
    }
    if (between_packets && end - p >= 5 && (p[0] & 3U) != 0) {
      const std::uint8_t header = p[0];
      if constexpr (ByteRunSink<Sink>) {
        if ((header & 7U) == 1U && p[2] == header) {
          std::array<std::uint8_t, 512> run;  // NOLINT(cppcoreguidelines-pro-type-member-init): filled below
          std::size_t n = gather_byte_run(p, end, header, run.data(), run.size());
          p += 2 * n;
          while (n < run.size() && end - p >= 2 && p[0] == header) {
            run[n++] = p[1];
            p += 2;
          }
          zero_run_ = run[n - 1] == 0 ? 1 : 0;
          sink.byte_run(static_cast<std::uint16_t>(page_ * 32U + (header >> 3U)),
                        std::span<const std::uint8_t>(run.data(), n));
          continue;
        }
      }
      const std::uint8_t length = source_payload_length[header & 3U];
      std::uint64_t value = 0;
      std::uint32_t trailing_zeros = 0;
      for (std::uint8_t i = 0; i < length; ++i) {
        const std::uint8_t b = p[1 + i];
        value |= static_cast<std::uint64_t>(b) << (8U * i);
        trailing_zeros = b == 0 ? trailing_zeros + 1 : 0;
      }
      zero_run_ = trailing_zeros;
      p += 1 + length;
      Packet packet{PacketKind::instrumentation, header, length, static_cast<std::uint8_t>(header >> 3U), 0, 0, value};
      if ((header & 4U) == 0) {
        packet.port = static_cast<std::uint16_t>(page_ * 32U + packet.address);
      } else {
        classify_hardware(packet);
      }
      sink(packet);
      continue;
    }
    const int n = step(*p++);
    for (int i = 0; i < n; ++i) sink(ready_[static_cast<std::size_t>(i)]);
  }
}

}  // namespace tp::itm
