// A CMSIS-DAP probe with a Cortex-M target behind it, written from the CMSIS-DAP and
// ADIv5 documents: DAP_Transfer runs DP and MEM-AP transactions against a RAM image
// (TAR auto-increment wraps within 1 KiB; addresses outside RAM answer FAULT and set
// the sticky error until ABORT clears it), DHCSR halts and resumes the "CPU". The
// image holds ekotrace tracers (lib/ekotrace/layout.hpp, 32-bit); while the CPU runs,
// its firmware appends events to tracers 1 and 2, recorded so a test can check that
// every one was collected once.
#pragma once

#include <map>
#include <vector>

#include "usbfs_emulator.hpp"

namespace usbemu {

struct DapTargetOptions {
  bool hid = false;            // CMSIS-DAP v1 (HID, 64-byte reports) instead of v2 (bulk)
  bool target_answers = true;  // false: nothing on the SWD wires (no ACK)
  std::string serial = "DAPSWD01";
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

 private:
  void transfer(const Bytes& command, Bytes& reply);
  bool access(bool write, std::uint32_t address, std::uint32_t& value);
  [[nodiscard]] std::uint32_t word(std::uint32_t address) const;
  void set_word(std::uint32_t address, std::uint32_t value);
  void run_firmware();  // what the CPU did since it was last resumed
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
