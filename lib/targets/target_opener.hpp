// Opening a target's memory where a TargetLocation says it is: its GDB server (gdb) or a
// CMSIS-DAP probe attached to its chip (dap, over usb). Above both, so that neither the
// target-memory tools' libraries (rtt, ekotrace) nor lib/cli's option definitions depend on
// the ways a target is reached.
#pragma once

#include "target/target_location.hpp"

namespace tp {

// Opens `where`: its GDB server when one is given, else the probe for --attach. The memory it
// returns works through the opener's USB context: it must not outlive the opener.
target::TargetOpener target_opener(const target::TargetLocation& where);

}  // namespace tp
