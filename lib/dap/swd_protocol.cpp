#include "dap/swd_protocol.hpp"
#include "core/byte_order.hpp"

namespace tp::dap {
namespace {

void put_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8U));
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (unsigned i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint32_t get_u32(std::span<const std::uint8_t> bytes) {
  return load_le32(bytes.data());
}

constexpr std::uint8_t swd_port = 1;

}  // namespace

std::uint8_t request_byte(const TransferRequest& request) noexcept {
  return static_cast<std::uint8_t>((request.access_port ? 1U : 0U) | (request.read ? 2U : 0U) |
                                   (request.address & 0x0cU));
}

std::vector<std::uint8_t> connect_command() {
  return {static_cast<std::uint8_t>(Command::connect), swd_port};
}

std::vector<std::uint8_t> disconnect_command() {
  return {static_cast<std::uint8_t>(Command::disconnect), 0};  // padded: HID probes need more than one byte
}

std::vector<std::uint8_t> swj_clock_command(std::uint32_t hz) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(Command::swj_clock)};
  put_u32(out, hz);
  return out;
}

std::vector<std::uint8_t> transfer_configure_command(std::uint8_t idle_cycles, std::uint16_t wait_retries,
                                                     std::uint16_t match_retries) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(Command::transfer_configure), idle_cycles};
  put_u16(out, wait_retries);
  put_u16(out, match_retries);
  return out;
}

std::vector<std::uint8_t> jtag_to_swd_command() {
  // 136 bits: 56 ones (line reset), 0xE79E LSB first, 56 ones, 8 zeros (idle).
  return {static_cast<std::uint8_t>(Command::swj_sequence),
          136,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0x9e,
          0xe7,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0xff,
          0x00};
}

std::vector<std::uint8_t> transfer_command(std::span<const TransferRequest> requests) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(Command::transfer), 0,
                                static_cast<std::uint8_t>(requests.size())};
  for (const auto& r : requests) {
    out.push_back(request_byte(r));
    if (!r.read) put_u32(out, r.value);
  }
  return out;
}

std::vector<std::uint8_t> block_read_command(bool access_port, std::uint8_t address, std::uint16_t count) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(Command::transfer_block), 0};
  put_u16(out, count);
  out.push_back(request_byte({access_port, true, address, 0}));
  return out;
}

std::vector<std::uint8_t> block_write_command(bool access_port, std::uint8_t address,
                                              std::span<const std::uint32_t> values) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(Command::transfer_block), 0};
  put_u16(out, static_cast<std::uint16_t>(values.size()));
  out.push_back(request_byte({access_port, false, address, 0}));
  for (const std::uint32_t v : values) put_u32(out, v);
  return out;
}

std::optional<TransferReply> parse_transfer_reply(std::span<const std::uint8_t> reply, std::size_t reads) {
  if (reply.size() < 3 || reply[0] != static_cast<std::uint8_t>(Command::transfer)) return std::nullopt;
  TransferReply parsed;
  parsed.completed = reply[1];
  parsed.response = reply[2];
  // Only the reads that completed carry data; a failed transfer ends the list.
  const std::size_t words = parsed.ok() ? reads : 0;
  if (reply.size() < 3 + 4 * words) return std::nullopt;
  for (std::size_t i = 0; i < words; ++i) parsed.data.push_back(get_u32(reply.subspan(3 + 4 * i, 4)));
  return parsed;
}

std::optional<TransferReply> parse_block_reply(std::span<const std::uint8_t> reply, bool reads) {
  if (reply.size() < 4 || reply[0] != static_cast<std::uint8_t>(Command::transfer_block)) return std::nullopt;
  TransferReply parsed;
  parsed.completed = load_le16(reply.data() + 1);
  parsed.response = reply[3];
  if (!reads) return parsed;
  if (reply.size() < 4 + 4 * static_cast<std::size_t>(parsed.completed)) return std::nullopt;
  for (std::size_t i = 0; i < parsed.completed; ++i) parsed.data.push_back(get_u32(reply.subspan(4 + 4 * i, 4)));
  return parsed;
}

bool connected_swd(std::span<const std::uint8_t> reply) {
  return reply.size() >= 2 && reply[0] == static_cast<std::uint8_t>(Command::connect) && reply[1] == swd_port;
}

}  // namespace tp::dap
