// rtt-capture's options (tools/rtt-capture defines them, lib/cli documents them) and what its
// two ways of capturing share: durations in us, the bound on host data waiting, SystemView's
// commands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/quantity.hpp"

namespace tp::rtt {

struct CaptureOptions {
  // Where the control block is: --elf (its _SEGGER_RTT), --address, else a scan of --scan.
  std::string elf;
  std::string address;
  std::string scan = "0x20000000:64K";
  std::string ram;  // START:SIZE buffers must be in (checked when given)
  std::string tcp;  // an RTT TCP server instead of target memory (OpenOCD, J-Link, probe-rs)
  std::vector<unsigned> channels{0};
  int down_channel = -1;  // -1: the first up channel's number
  std::string format = "raw";
  std::size_t max_line = 4096;
  unsigned line_timeout_ms = 200;
  bool list = false;
  std::string send;
  bool forward_stdin = false;
  std::string sysview = "auto";      // auto | on | off: send SystemView's start and stop commands
  std::string interval = "100ms";    // the longest pause between polls
  std::string min_interval = "1ms";  // the shortest, while data flows
  std::string wait = "10s";          // for the control block to become valid
  std::string duration;              // end after this long
  std::string idle_exit;             // end once no data came for this long (after some did)
  bool stats = false;
};

// Host data (--send, --stdin) waiting for room in the down buffer: stdin is not read past it.
inline constexpr std::size_t max_pending_down = std::size_t{64} * 1024;

// SEGGER_SYSVIEW_Int.h SEGGER_SYSVIEW_COMMAND_ID_*: what the host writes to SystemView's down
// buffer (rtt-capture sends start and stop; SEGGER's code takes one with its next event).
enum class SystemViewCommand : std::uint8_t {
  start = 1,
  stop = 2,
  get_systime = 3,
  get_tasklist = 4,
  get_sysdesc = 5,
  get_num_modules = 6,
  get_module_desc = 7,
  heartbeat = 127,
};

// A duration option in us; empty: 0 (not given).
inline std::uint64_t us_of(const std::string& text) {
  if (text.empty()) return 0;
  return static_cast<std::uint64_t>(parse_duration(text).count()) * 1000U;
}

}  // namespace tp::rtt
