// chibi-pull's commands over a shell session (or a saved file): the work behind the CLI,
// so tools/chibi-pull is wiring only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/batched_writer.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace tp::chibios {

struct PullOptions {
  std::string port;  // serial device of the shell
  std::uint32_t baud = 115200;
  double timeout_s = 5;           // for the prompt after a command
  std::string format = "ndjson";  // ndjson, csv or text
  double tick_hz = 1000;          // CH_CFG_ST_FREQUENCY
  unsigned time_bits = 20;        // width of the logged time: 20 (32-bit system time) or 16
  std::string svg;                // timeline: also draw it
  std::string save;               // timeline: also save the replies (the reference tool's .txt)
  std::string load;               // timeline: rebuild from a saved file instead of the port
  std::string every = "1s";       // watch: time between pulls
};

// Runs one command: stat, uc, list, timestamps, trigger, run, timeline or watch. Shell
// errors become tp::Error (bad_input for a reply that makes no sense, unsupported for a
// firmware without the command); what was written before an error stays written.
ExitCode run_command(const PullOptions& options, std::string_view command, BatchedWriter& out, const Logger& log);

}  // namespace tp::chibios
