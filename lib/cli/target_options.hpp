// The options of the tools that read target memory (eko-collect, rtt-capture): where the
// target is (a GDB server or a CMSIS-DAP probe) and how long to wait for it. lib/targets
// opens what they name.
#pragma once

#include <CLI/CLI.hpp>
#include <string_view>

#include "target/target_location.hpp"

namespace tp {

struct TargetOptionsHelp {
  std::string_view gdb_server_names = "-g,--gdb-server";
  std::string_view gdb_server = "GDB server (HOST:PORT): OpenOCD, QEMU, pyOCD, J-Link";
  std::string_view attach = "Attach through a CMSIS-DAP probe to CHIP";
};

void add_target_options(CLI::App& app, target::TargetLocation& where, const TargetOptionsHelp& help = {});

}  // namespace tp
