#include "probes/lpclink2_protocol.hpp"

#include "core/byte_order.hpp"

namespace tp::probes::lpclink2 {
namespace {

std::vector<std::uint8_t> with_u32(Command command, std::uint32_t value) {
  return {static_cast<std::uint8_t>(command), static_cast<std::uint8_t>(value), static_cast<std::uint8_t>(value >> 8U),
          static_cast<std::uint8_t>(value >> 16U), static_cast<std::uint8_t>(value >> 24U)};
}

}  // namespace

std::vector<std::uint8_t> ohai_command() {
  return {static_cast<std::uint8_t>(Command::ohai), 0xff};
}
std::vector<std::uint8_t> init_uart_command() {
  return {static_cast<std::uint8_t>(Command::init_uart)};
}
std::vector<std::uint8_t> set_rate_command(std::uint32_t hz) {
  return with_u32(Command::set_rate, hz);
}
std::vector<std::uint8_t> poll_command() {
  return {static_cast<std::uint8_t>(Command::poll)};
}

bool is_ohai_reply(std::span<const std::uint8_t> reply) {
  return reply.size() >= 2 && reply[0] == static_cast<std::uint8_t>(Command::ohai);
}

std::optional<std::uint32_t> parse_init_uart_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 9 || reply[0] != static_cast<std::uint8_t>(Command::init_uart)) return std::nullopt;
  return load_le32(reply.data() + 5);
}

std::optional<std::uint32_t> parse_set_rate_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 5 || reply[0] != static_cast<std::uint8_t>(Command::set_rate)) return std::nullopt;
  return load_le32(reply.data() + 1);
}

}  // namespace tp::probes::lpclink2
