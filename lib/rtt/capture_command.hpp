// rtt-capture's work: the control block found on the target (or an RTT TCP server), its up
// channels polled into raw bytes or Text records, host data into a down channel, SystemView's
// start and stop commands on a SysView channel; so tools/rtt-capture is wiring only (it
// chooses the target-memory backend).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "target/target_location.hpp"

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

using target::TargetOpener;

// Runs until --duration, --idle-exit, SIGINT/SIGTERM, or an error (the target is released and
// what was read is written first). `open_target` is not called with --tcp.
ExitCode capture(const CaptureOptions& options, const TargetOpener& open_target, const std::string& output, bool append,
                 const Logger& log);

}  // namespace tp::rtt
