#include "probes/cmsis_dap_protocol.hpp"

namespace tp::probes::cmsis_dap {
namespace {

std::uint8_t byte_of(Command command) {
  return static_cast<std::uint8_t>(command);
}

std::uint32_t load_le(std::span<const std::uint8_t> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) value = value << 8U | bytes[i];
  return value;
}

}  // namespace

std::vector<std::uint8_t> info_command(InfoId id) {
  return {byte_of(Command::info), static_cast<std::uint8_t>(id)};
}
std::vector<std::uint8_t> transport_command(Transport transport) {
  return {byte_of(Command::swo_transport), static_cast<std::uint8_t>(transport)};
}
std::vector<std::uint8_t> mode_command(Mode mode) {
  return {byte_of(Command::swo_mode), static_cast<std::uint8_t>(mode)};
}
std::vector<std::uint8_t> baudrate_command(std::uint32_t hz) {
  return {byte_of(Command::swo_baudrate), static_cast<std::uint8_t>(hz), static_cast<std::uint8_t>(hz >> 8U),
          static_cast<std::uint8_t>(hz >> 16U), static_cast<std::uint8_t>(hz >> 24U)};
}
std::vector<std::uint8_t> control_command(bool start) {
  return {byte_of(Command::swo_control), static_cast<std::uint8_t>(start ? 1 : 0)};
}
std::vector<std::uint8_t> status_command() {
  return {byte_of(Command::swo_status)};
}
std::vector<std::uint8_t> data_command(std::uint16_t max_count) {
  return {byte_of(Command::swo_data), static_cast<std::uint8_t>(max_count), static_cast<std::uint8_t>(max_count >> 8U)};
}

std::optional<std::span<const std::uint8_t>> parse_info_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 2 || reply[0] != byte_of(Command::info) || reply.size() < 2U + reply[1]) return std::nullopt;
  return reply.subspan(2, reply[1]);
}

Capabilities parse_capabilities(std::span<const std::uint8_t> info) {
  const std::uint8_t bits = info.empty() ? 0 : info[0];
  return {(bits & 0x04U) != 0, (bits & 0x08U) != 0, (bits & 0x40U) != 0};
}

std::optional<std::uint32_t> info_u32(std::span<const std::uint8_t> info) {
  if (info.size() != 2 && info.size() != 4) return std::nullopt;
  return load_le(info);
}

bool parse_status_reply(Command command, std::span<const std::uint8_t> reply) {
  return reply.size() >= 2 && reply[0] == byte_of(command) && reply[1] == 0;
}

std::optional<std::uint32_t> parse_baudrate_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 5 || reply[0] != byte_of(Command::swo_baudrate)) return std::nullopt;
  return load_le(reply.subspan(1, 4));
}

std::optional<SwoStatus> parse_swo_status_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 6 || reply[0] != byte_of(Command::swo_status)) return std::nullopt;
  return SwoStatus{reply[1], load_le(reply.subspan(2, 4))};
}

std::optional<SwoData> parse_swo_data_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 4 || reply[0] != byte_of(Command::swo_data)) return std::nullopt;
  const std::size_t count = load_le(reply.subspan(2, 2));
  if (reply.size() < 4 + count) return std::nullopt;
  return SwoData{reply[1], reply.subspan(4, count)};
}

}  // namespace tp::probes::cmsis_dap
