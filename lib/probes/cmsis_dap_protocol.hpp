// CMSIS-DAP command ids, and the SWO commands (CMSIS-DAP v2.x "SWO Commands"): encoders and
// reply parsers, independent of USB. Little-endian; each reply echoes the command byte.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tp::probes::cmsis_dap {

// Every command tracepipe sends: the general and transfer ones (SWD memory access,
// lib/dap) and the SWO ones.
enum class Command : std::uint8_t {
  info = 0x00,
  connect = 0x02,
  disconnect = 0x03,
  transfer_configure = 0x04,
  transfer = 0x05,
  transfer_block = 0x06,
  swj_clock = 0x11,
  swj_sequence = 0x12,
  swo_transport = 0x17,
  swo_mode = 0x18,
  swo_baudrate = 0x19,
  swo_control = 0x1a,
  swo_status = 0x1b,
  swo_data = 0x1c,
};

enum class InfoId : std::uint8_t { capabilities = 0xf0, swo_buffer_size = 0xfd, packet_size = 0xff };
enum class Transport : std::uint8_t { none = 0, data_command = 1, streaming_endpoint = 2 };
enum class Mode : std::uint8_t { off = 0, uart = 1, manchester = 2 };

// DAP_Info(0xF0) capability bits.
struct Capabilities {
  bool swo_uart = false;        // bit 2
  bool swo_manchester = false;  // bit 3
  bool swo_streaming = false;   // bit 6
};

// SWO_Status bits.
inline constexpr std::uint8_t status_active = 0x01;
inline constexpr std::uint8_t status_stream_error = 0x40;
inline constexpr std::uint8_t status_overrun = 0x80;

std::vector<std::uint8_t> info_command(InfoId id);
std::vector<std::uint8_t> transport_command(Transport transport);
std::vector<std::uint8_t> mode_command(Mode mode);
std::vector<std::uint8_t> baudrate_command(std::uint32_t hz);
std::vector<std::uint8_t> control_command(bool start);
std::vector<std::uint8_t> status_command();
std::vector<std::uint8_t> data_command(std::uint16_t max_count);

// DAP_Info: the info bytes (`00 len data`).
std::optional<std::span<const std::uint8_t>> parse_info_reply(std::span<const std::uint8_t> reply);
Capabilities parse_capabilities(std::span<const std::uint8_t> info);
std::optional<std::uint32_t> info_u32(std::span<const std::uint8_t> info);  // u16 or u32 values
// Commands answered with `cmd status`: true when status is 00 (OK).
bool parse_status_reply(Command command, std::span<const std::uint8_t> reply);
// SWO_Baudrate: the actual rate (0 = not supported).
std::optional<std::uint32_t> parse_baudrate_reply(std::span<const std::uint8_t> reply);

struct SwoStatus {
  std::uint8_t status = 0;
  std::uint32_t count = 0;  // bytes waiting in the probe's buffer
};
std::optional<SwoStatus> parse_swo_status_reply(std::span<const std::uint8_t> reply);

struct SwoData {
  std::uint8_t status = 0;
  std::span<const std::uint8_t> data;
};
// DAP_SWO_Data: `1C status u16 count data[count]`; nothing when count overruns the reply.
std::optional<SwoData> parse_swo_data_reply(std::span<const std::uint8_t> reply);

}  // namespace tp::probes::cmsis_dap
