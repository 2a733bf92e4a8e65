// CMSIS-DAP debug-port commands for memory access over SWD (CMSIS-DAP v2.x, "General
// Commands" and "Transfer Commands"; ARM ADIv5, "Debug Port" and "MEM-AP"): encoders and
// reply parsers, independent of USB. Little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "probes/cmsis_dap_protocol.hpp"

namespace tp::dap {

using probes::cmsis_dap::Command;

// DP registers (A[3:2]) and the MEM-AP registers of bank 0 (ADIv5 "MEM-AP").
inline constexpr std::uint8_t dp_idr = 0x0;    // read
inline constexpr std::uint8_t dp_abort = 0x0;  // write
inline constexpr std::uint8_t dp_ctrl_stat = 0x4;
inline constexpr std::uint8_t dp_select = 0x8;
inline constexpr std::uint8_t dp_rdbuff = 0xc;
inline constexpr std::uint8_t ap_csw = 0x0;
inline constexpr std::uint8_t ap_tar = 0x4;
inline constexpr std::uint8_t ap_drw = 0xc;

inline constexpr std::uint32_t abort_clear_all = 0x1e;         // STKCMPCLR|STKERRCLR|WDERRCLR|ORUNERRCLR
inline constexpr std::uint32_t power_up_request = 0x50000000;  // CSYSPWRUPREQ | CDBGPWRUPREQ
inline constexpr std::uint32_t power_up_ack = 0xa0000000;      // CSYSPWRUPACK | CDBGPWRUPACK
// 32-bit accesses, single auto-increment, privileged debug master (pyOCD's and OpenOCD's choice).
inline constexpr std::uint32_t csw_word_increment = 0x23000052;
// TAR auto-increment is only guaranteed within 1 KiB (ADIv5 "MEM-AP": 10 bits).
inline constexpr std::uint32_t auto_increment_span = 1024;

// Cortex-M Debug Halting Control and Status Register (ARMv7-M C1.6.2).
inline constexpr std::uint32_t dhcsr = 0xE000EDF0;
inline constexpr std::uint32_t dhcsr_key = 0xA05F0000;
inline constexpr std::uint32_t dhcsr_debugen = 1U << 0U;
inline constexpr std::uint32_t dhcsr_halt = 1U << 1U;
inline constexpr std::uint32_t dhcsr_s_halt = 1U << 17U;

// One DAP_Transfer request byte: APnDP bit 0, RnW bit 1, A[3:2] bits 2-3.
struct TransferRequest {
  bool access_port = false;
  bool read = false;
  std::uint8_t address = 0;  // 0x0, 0x4, 0x8, 0xc
  std::uint32_t value = 0;   // written value
};
[[nodiscard]] std::uint8_t request_byte(const TransferRequest& request) noexcept;

// ACK in bits 0-2 of the transfer response; bit 3 a protocol (parity) error.
enum class Ack : std::uint8_t { ok = 1, wait = 2, fault = 4 };

std::vector<std::uint8_t> connect_command();  // SWD
std::vector<std::uint8_t> disconnect_command();
std::vector<std::uint8_t> swj_clock_command(std::uint32_t hz);
std::vector<std::uint8_t> transfer_configure_command(std::uint8_t idle_cycles, std::uint16_t wait_retries,
                                                     std::uint16_t match_retries);
// Line reset, the JTAG-to-SWD switch (0xE79E), line reset, idle (ADIv5 "SWJ-DP").
std::vector<std::uint8_t> jtag_to_swd_command();
std::vector<std::uint8_t> transfer_command(std::span<const TransferRequest> requests);
std::vector<std::uint8_t> block_read_command(bool access_port, std::uint8_t address, std::uint16_t count);
std::vector<std::uint8_t> block_write_command(bool access_port, std::uint8_t address,
                                              std::span<const std::uint32_t> values);

struct TransferReply {
  std::uint16_t completed = 0;      // transfers done
  std::uint8_t response = 0;        // ACK of the last one (bits 0-2), protocol error bit 3
  std::vector<std::uint32_t> data;  // the values read, in order
  [[nodiscard]] bool ok() const noexcept { return response == static_cast<std::uint8_t>(Ack::ok); }
};
// DAP_Transfer: `05 count response data...`; `reads` = how many reads the command held.
std::optional<TransferReply> parse_transfer_reply(std::span<const std::uint8_t> reply, std::size_t reads);
// DAP_TransferBlock: `06 count(u16) response data...`.
std::optional<TransferReply> parse_block_reply(std::span<const std::uint8_t> reply, bool reads);
// DAP_Connect's `02 port`. (`cmd status` replies: probes::cmsis_dap::parse_status_reply.)
bool connected_swd(std::span<const std::uint8_t> reply);

}  // namespace tp::dap
