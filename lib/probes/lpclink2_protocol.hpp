// The LPC-Link2's proprietary SWO port (NXP's LPC-Link2 SWO interface; docs/design.md "Peers and their protocols"):
// command encoders and reply parsers, independent of USB so they can be tested and fuzzed on
// their own. The bookkeeping of poll replies is swo/lpclink2_poll_tracker.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tp::probes::lpclink2 {

inline constexpr std::uint16_t vendor_id = 0x1fc9;
inline constexpr std::uint16_t product_id = 0x0090;
inline constexpr std::string_view interface_name = "LPC-LINK2 DATA PORT";
inline constexpr std::size_t packet_size = 1024;
inline constexpr std::size_t buffer_size = 1022;  // the capture buffer an 0x82 flush delivers

enum class Command : std::uint8_t { set_rate = 0x01, poll = 0x02, init_uart = 0x03, ohai = 0x1f };
enum class ReplyKind : std::uint8_t { incremental = 0x04, flush = 0x82 };

std::vector<std::uint8_t> ohai_command();                      // 1f ff: UART-encoded SWO
std::vector<std::uint8_t> init_uart_command();                 // 03
std::vector<std::uint8_t> set_rate_command(std::uint32_t hz);  // 01 u32
std::vector<std::uint8_t> poll_command();                      // 02

// Each returns nothing when the reply is not the answer to that command.
bool is_ohai_reply(std::span<const std::uint8_t> reply);
std::optional<std::uint32_t> parse_init_uart_reply(std::span<const std::uint8_t> reply);  // max rate
std::optional<std::uint32_t> parse_set_rate_reply(std::span<const std::uint8_t> reply);   // achieved

}  // namespace tp::probes::lpclink2
