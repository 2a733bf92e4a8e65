// rtt-capture over target memory (a GDB server or a CMSIS-DAP probe): the control block found
// and waited for, the up channels polled (halting the target around each poll when the link
// needs it, a bounded read per halted window), host data and SystemView's commands written to
// the down channel, losses and stalls said, --stats.
#pragma once

#include "core/batched_writer.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "rtt/capture_options.hpp"
#include "rtt/target_rtt.hpp"
#include "target/target_memory.hpp"

namespace tp::rtt {

// Runs until --duration, --idle-exit, a stop signal or an error; the target is released (and
// what was read written out) on every way out.
ExitCode capture_memory(const CaptureOptions& options, LocateSettings where, target::TargetMemory& memory,
                        BatchedWriter& writer, const Logger& log);

}  // namespace tp::rtt
