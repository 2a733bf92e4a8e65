#include "probes/stlink_protocol.hpp"

#include "core/byte_order.hpp"

#include <array>

namespace tp::probes::stlink {
namespace {

constexpr std::uint8_t get_version = 0xf1;
constexpr std::uint8_t debug_command = 0xf2;
constexpr std::uint8_t start_trace_rx = 0x40;
constexpr std::uint8_t stop_trace_rx = 0x41;
constexpr std::uint8_t get_trace_count = 0x42;
constexpr std::uint8_t first_jtag_with_trace = 13;

constexpr std::array models{
    Model{0x3748, Generation::v2, "ST-Link/V2"},     Model{0x374b, Generation::v2_1, "ST-Link/V2-1"},
    Model{0x3752, Generation::v2_1, "ST-Link/V2-1"}, Model{0x374d, Generation::v3, "STLINK-V3 loader"},
    Model{0x374e, Generation::v3, "STLINK-V3"},      Model{0x374f, Generation::v3, "STLINK-V3"},
    Model{0x3753, Generation::v3, "STLINK-V3"},      Model{0x3754, Generation::v3, "STLINK-V3"},
    Model{0x3755, Generation::v3, "STLINK-V3PWR"},   Model{0x3757, Generation::v3, "STLINK-V3PWR"},
};

std::vector<std::uint8_t> block(std::initializer_list<std::uint8_t> head) {
  std::vector<std::uint8_t> command(command_size, 0);
  std::size_t i = 0;
  for (const std::uint8_t byte : head) command[i++] = byte;
  return command;
}

}  // namespace

std::optional<Model> model_for(std::uint16_t product_id) {
  for (const Model& model : models) {
    if (model.product_id == product_id) return model;
  }
  return std::nullopt;
}

Endpoints endpoints_for(Generation generation) {
  return generation == Generation::v2 ? Endpoints{0x02, 0x81, 0x83} : Endpoints{0x01, 0x81, 0x82};
}

std::uint32_t max_trace_hz(Generation generation) {
  return generation == Generation::v3 ? 24'000'000 : 2'250'000;
}

std::vector<std::uint8_t> get_version_command() {
  return block({get_version});
}

std::vector<std::uint8_t> start_trace_command(std::uint32_t hz) {
  return block({debug_command, start_trace_rx, static_cast<std::uint8_t>(trace_buffer_size),
                static_cast<std::uint8_t>(trace_buffer_size >> 8U), static_cast<std::uint8_t>(hz),
                static_cast<std::uint8_t>(hz >> 8U), static_cast<std::uint8_t>(hz >> 16U),
                static_cast<std::uint8_t>(hz >> 24U)});
}

std::vector<std::uint8_t> stop_trace_command() {
  return block({debug_command, stop_trace_rx});
}
std::vector<std::uint8_t> trace_count_command() {
  return block({debug_command, get_trace_count});
}

std::optional<Version> parse_version_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 6) return std::nullopt;
  // Big-endian u16: stlink version in bits 15..12, JTAG version in bits 11..6.
  const std::uint16_t word = load_be16(reply.data());
  return Version{static_cast<std::uint8_t>(word >> 12U), static_cast<std::uint8_t>((word >> 6U) & 0x3fU)};
}

bool firmware_has_trace(Generation generation, const Version& version) {
  return generation != Generation::v2 || version.jtag >= first_jtag_with_trace;
}

bool parse_ok_reply(std::span<const std::uint8_t> reply) {
  return !reply.empty() && reply[0] == status_ok;
}

std::optional<std::uint16_t> parse_trace_count_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 2) return std::nullopt;
  return load_le16(reply.data());
}

}  // namespace tp::probes::stlink
