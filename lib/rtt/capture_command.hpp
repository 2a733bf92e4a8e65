// rtt-capture's work: its options checked, then the capture over target memory
// (memory_capture.hpp) or from an RTT TCP server (here): channels into raw bytes or Text
// records, host data into a down channel, SystemView's start and stop commands on a SysView
// channel; so tools/rtt-capture is wiring only (it chooses the target-memory backend).
#pragma once

#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "rtt/capture_options.hpp"
#include "target/target_location.hpp"

namespace tp::rtt {

using target::TargetOpener;

// Runs until --duration, --idle-exit, SIGINT/SIGTERM, or an error (the target is released and
// what was read is written first). `open_target` is not called with --tcp.
ExitCode capture(const CaptureOptions& options, const TargetOpener& open_target, const std::string& output, bool append,
                 const Logger& log);

}  // namespace tp::rtt
