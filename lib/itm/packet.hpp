// ITM/DWT packets as plain values (ARMv7-M ARM, Appendix D4 "Debug ITM and DWT Packet
// Protocol"). One flat struct for every kind keeps the decoder allocation-free.
#pragma once

#include <cstdint>
#include <string_view>

namespace tp::itm {

enum class PacketKind : std::uint8_t {
  sync,                // D4.2.1: 47+ zero bits then a one
  overflow,            // D4.2.3: 0x70
  local_timestamp,     // D4.2.4: LTS1 (length 1-4, info = TC) or LTS2 (length 0)
  global_timestamp1,   // D4.2.5: GTS1, bits [25:0]; info bit0 = ClkCh, bit1 = Wrap
  global_timestamp2,   // D4.2.5: GTS2, bits [63:26] (length 4 = 48-bit, 6 = 64-bit form)
  stimulus_page,       // D4.2.6: extension with SH=0: page for ports above 31
  extension,           // any other extension packet; info = SH, value = EX bits
  instrumentation,     // D4.2.8: SWIT; port = page*32 + address, length 1/2/4
  event_counter,       // D4.3.1: discriminator 0
  exception,           // D4.3.2: discriminator 1; port = number, info = function (1-3)
  pc_sample,           // D4.3.3: discriminator 2; info = 1 when sleeping
  data_trace_pc,       // D4.3.4: discriminator 8+2n; port = comparator
  data_trace_address,  // D4.3.4: discriminator 9+2n; port = comparator, value = address[15:0]
  data_trace_value,    // D4.3.4: discriminator 16+2n+W; port = comparator, info = W (1 = write)
  hardware,            // a hardware-source packet with a reserved discriminator or size
  malformed,           // bytes that are not a packet: value = byte count, info = reason
};

enum class MalformedReason : std::uint8_t {
  reserved_header = 1,  // a header byte the protocol reserves
  stray_zeros = 2,      // zero bytes not followed by the 0x80 that ends a sync
  too_long = 3,         // a continuation packet longer than its maximum
  truncated = 4,        // input ended inside a packet
  bad_length = 5,       // e.g. a GTS2 that is neither 4 nor 6 bytes
  unsynchronized = 6,   // bytes skipped while waiting for a sync (--strict-sync)
};

enum class ExceptionAction : std::uint8_t { reserved = 0, enter = 1, exit = 2, resume = 3 };

// The decoder writes the fields; consumers read a kind's meaning through the named
// accessors below it (each names the kinds it belongs to).
struct Packet {
  PacketKind kind = PacketKind::sync;
  std::uint8_t header = 0;
  std::uint8_t length = 0;   // payload bytes after the header
  std::uint8_t address = 0;  // SWIT address within the page, or DWT discriminator
  std::uint16_t port = 0;    // stimulus port, exception number or comparator (see kinds)
  std::uint8_t info = 0;     // kind-specific flags (see kinds)
  std::uint64_t value = 0;   // payload value, little-endian
  bool operator==(const Packet&) const = default;

  // instrumentation: the stimulus port (page * 32 + address).
  [[nodiscard]] constexpr std::uint16_t stimulus_port() const noexcept { return port; }
  // local_timestamp: the TC field (0: in sync with the data; else delayed, D4.2.4).
  [[nodiscard]] constexpr std::uint8_t timestamp_control() const noexcept { return info; }
  // global_timestamp1: ClkCh and Wrap (D4.2.5).
  [[nodiscard]] constexpr bool clock_changed() const noexcept { return (info & 1U) != 0; }
  [[nodiscard]] constexpr bool wrapped() const noexcept { return (info & 2U) != 0; }
  // extension: the SH bit (0: a stimulus page).
  [[nodiscard]] constexpr std::uint8_t extension_source_hardware() const noexcept { return info; }
  // exception: the exception number and the function (1 entered, 2 exited, 3 returned to).
  [[nodiscard]] constexpr std::uint16_t exception_number() const noexcept { return port; }
  [[nodiscard]] constexpr std::uint8_t exception_function() const noexcept { return info; }
  // pc_sample: the core was sleeping (no PC).
  [[nodiscard]] constexpr bool sleeping() const noexcept { return info != 0; }
  // data_trace_*: the comparator; data_trace_value: a write (else a read).
  [[nodiscard]] constexpr std::uint16_t comparator() const noexcept { return port; }
  [[nodiscard]] constexpr bool is_write() const noexcept { return info != 0; }
  // malformed: why, and how many bytes were dropped.
  [[nodiscard]] constexpr MalformedReason malformed_reason() const noexcept {
    return static_cast<MalformedReason>(info);
  }
  [[nodiscard]] constexpr std::uint64_t malformed_byte_count() const noexcept { return value; }
};

std::string_view packet_kind_name(PacketKind kind) noexcept;
std::string_view malformed_reason_name(MalformedReason reason) noexcept;

}  // namespace tp::itm
