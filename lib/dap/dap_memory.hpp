// eko-collect --attach CHIP: target memory through a CMSIS-DAP probe without a GDB
// server. SWD through DAP_Transfer (CMSIS-DAP v2 over bulk endpoints, v1 over HID
// reports), the MEM-AP for 32-bit reads and writes, halt and resume through the Cortex-M
// DHCSR.
//
// Known chips (CHIP is matched by prefix, case-insensitively): every one is a Cortex-M
// whose system memory sits behind MEM-AP 0, which is what CHIP selects; the table says
// which core to expect and guards against chips this backend cannot reach (multi-drop
// SWD, non-Cortex-M cores).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "probes/probe_catalog.hpp"
#include "target/target_memory.hpp"
#include "usb/usb_device.hpp"

namespace tp::dap {

struct ChipInfo {
  std::string_view prefix;  // "stm32f4", "nrf52", "cortex-m" ...
  std::string_view family;
  std::string_view core;
  std::uint8_t access_port = 0;
};

// Throws Error(usage) listing the known chips when `chip` matches none, and
// Error(unsupported) for the chips known not to work over this backend.
const ChipInfo& find_chip(std::string_view chip);
// The table, one chip per line (for --help and --list-chips).
std::string known_chips();

struct AttachSettings {
  std::string chip;
  probes::ProbeSelector probe;
  std::uint32_t swd_hz = 4'000'000;
  int reply_timeout_ms = 1000;
};

// Finds the probe (v2 or v1), connects over SWD, powers the debug port up and selects the
// chip's MEM-AP. Throws Error(not_found) without a probe, Error(timeout) when the target
// does not answer.
std::unique_ptr<target::TargetMemory> attach_cmsis_dap(const usb::Context& context, const AttachSettings& settings);

}  // namespace tp::dap
