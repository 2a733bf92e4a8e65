// A CMSIS-DAP probe with a Cortex-M target behind it, written from the CMSIS-DAP and
// ADIv5 documents: DAP_Transfer runs DP and MEM-AP transactions against a RAM image
// (TAR auto-increment wraps within 1 KiB; addresses outside RAM answer FAULT and set
// the sticky error until ABORT clears it), DHCSR halts and resumes the "CPU". The
// image holds ekotrace tracers (lib/ekotrace/layout.hpp, 32-bit); while the CPU runs,
// its firmware appends events to tracers 1 and 2, recorded so a test can check that
// every one was collected once. With `rtt`, it also holds a SEGGER RTT control block as
// SEGGER_RTT_Init lays it out (SEGGER_RTT.h: one up, one down buffer), and between DAP
// commands while the CPU runs (the MEM-AP reads a running core) its firmware writes lines
// to the up buffer as SEGGER_RTT_WriteNoLock does in NO_BLOCK_SKIP mode (a whole line or
// none) and reads the down buffer.
#pragma once

#include <map>
#include <vector>

#include "usbfs_emulator.hpp"

namespace usbemu {

struct DapTargetOptions {
  bool hid = false;            // CMSIS-DAP v1 (HID, 64-byte reports) instead of v2 (bulk)
  bool target_answers = true;  // false: nothing on the SWD wires (no ACK)
  std::string serial = "DAPSWD01";
  bool rtt = false;
  unsigned rtt_lines = 0;  // lines the RTT firmware writes, two per DAP command while it runs
  // Instead of lines: these bytes, as much as fits (up to 64) per DAP command, none dropped.
  std::vector<std::uint8_t> rtt_stream{};
};

struct LogItem {
  bool clock;
  std::uint32_t id;
  std::uint32_t value;
  bool payload;
};

class DapTarget final : public DeviceModel {
 public:
  static constexpr std::uint32_t ram_base = 0x20000000;
  static constexpr std::uint32_t ram_size = 0x2000;
  // Tracer references (the address to give eko-collect) and their tracer ids.
  static constexpr std::uint32_t reference_1 = 0x20000000;     // id 1, log crosses a 1 KiB boundary
  static constexpr std::uint32_t reference_2 = 0x20000004;     // id 2
  static constexpr std::uint32_t reference_busy = 0x20000008;  // id 3, in_use stays set
  static constexpr std::uint32_t rtt_block = 0x20001C00;       // _SEGGER_RTT

  explicit DapTarget(DapTargetOptions options);
  void on_out(std::uint8_t endpoint, const Bytes& command) override;

  // Under `mutex`:
  std::map<std::uint32_t, std::vector<LogItem>> written;  // every log entry the firmware made, per tracer id
  bool halted = false;
  bool debug_enabled = false;
  std::size_t halts = 0;
  std::size_t aborts = 0;
  std::size_t faults = 0;
  std::size_t short_reports = 0;  // HID commands not padded to the report size
  bool disconnected = false;
  std::vector<std::string> rtt_written;  // lines the RTT firmware stored, in order
  std::size_t rtt_stream_written = 0;    // bytes of options.rtt_stream stored so far
  std::size_t rtt_skipped = 0;           // lines it dropped (no room)
  std::string rtt_received;              // what it read from the down buffer
  std::size_t transfers = 0;             // DAP_Transfer commands
  std::size_t transfer_words = 0;        // words they read

 private:
  void transfer(const Bytes& command, Bytes& reply);
  bool access(bool write, std::uint32_t address, std::uint32_t& value);
  [[nodiscard]] std::uint32_t word(std::uint32_t address) const;
  void set_word(std::uint32_t address, std::uint32_t value);
  void run_firmware();  // what the CPU did since it was last resumed
  void init_rtt();
  void run_rtt_firmware();
  void log_item(std::uint32_t history, std::uint32_t value);
  void reply(Bytes bytes);

  DapTargetOptions options_;
  Bytes ram_;
  std::uint32_t select_ = 0;
  std::uint32_t csw_ = 0;
  std::uint32_t tar_ = 0;
  std::uint32_t ctrl_stat_ = 0;
  std::uint32_t dhcsr_ = 0;
  bool sticky_ = false;
  std::uint32_t step_ = 0;
};

}  // namespace usbemu
