// ST-Link V2 / V2-1 / V3 trace capture commands (as OpenOCD's stlink driver uses them;
// docs/design.md "Peers and their protocols"): 16-byte command blocks, replies on the reply endpoint, trace bytes on
// a separate bulk endpoint. NRZ only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tp::probes::stlink {

inline constexpr std::uint16_t vendor_id = 0x0483;
inline constexpr std::size_t command_size = 16;
inline constexpr std::uint16_t trace_buffer_size = 4096;
inline constexpr std::uint8_t status_ok = 0x80;

enum class Generation { v2, v2_1, v3 };

struct Model {
  std::uint16_t product_id;
  Generation generation;
  std::string_view name;
};

// The ST-Link models with SWO trace, or nothing for another product id.
std::optional<Model> model_for(std::uint16_t product_id);

struct Endpoints {
  std::uint8_t command_out;
  std::uint8_t reply_in;
  std::uint8_t trace_in;
};
Endpoints endpoints_for(Generation generation);
std::uint32_t max_trace_hz(Generation generation);  // 2.25 MHz (V2, V2-1), 24 MHz (V3)

std::vector<std::uint8_t> get_version_command();                  // F1 -> 6 bytes
std::vector<std::uint8_t> start_trace_command(std::uint32_t hz);  // F2 40 u16 size u32 hz -> 2 bytes
std::vector<std::uint8_t> stop_trace_command();                   // F2 41 -> 2 bytes
std::vector<std::uint8_t> trace_count_command();                  // F2 42 -> u16 count

struct Version {
  std::uint8_t stlink = 0;  // 2 or 3
  std::uint8_t jtag = 0;    // the "J" firmware version; trace needs J13 or later on V2
};
std::optional<Version> parse_version_reply(std::span<const std::uint8_t> reply);
bool firmware_has_trace(Generation generation, const Version& version);
bool parse_ok_reply(std::span<const std::uint8_t> reply);
std::optional<std::uint16_t> parse_trace_count_reply(std::span<const std::uint8_t> reply);

}  // namespace tp::probes::stlink
