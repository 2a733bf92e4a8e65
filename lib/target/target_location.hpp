// Where a tool reaches a target's memory: a GDB server, or a CMSIS-DAP probe attached to a
// chip. One shape for every tool that reads target RAM (eko-collect, rtt-capture); lib/cli
// puts it on a command line (target_options), lib/targets opens it (target_opener).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "target/target_memory.hpp"

namespace tp::target {

struct TargetLocation {
  std::string gdb_server;  // HOST:PORT
  std::string attach;      // a chip the probe layer knows
  std::string probe = "cmsis-dap";
  std::string serial_number;
  std::uint32_t swd_hz = 4'000'000;
  double timeout_s = 2;  // for the server or the probe to answer
};

// Opens the target's memory once the rest of a tool's options are known good (so a usage
// error never touches the target).
using TargetOpener = std::function<std::unique_ptr<TargetMemory>()>;

}  // namespace tp::target
