// itm-decode's work: the port map, the symbols and the session its options name, then the
// decode loop and what it reports at the end; so tools/itm-decode is wiring only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"

namespace tp {

struct DecodeOptions {
  std::string input = "-";
  bool tpiu = false;
  unsigned tpiu_stream = 1;
  std::string port_map;
  std::string isr_names;
  std::string elf;
  std::string ports = "0xFFFFFFFF";
  std::uint64_t cpu_hz = 0;
  unsigned prescaler = 1;
  std::string timestamps = "target";
  bool frames = false;
  std::string format = "ndjson";
  bool stats = false;
  bool follow = false;
  bool strict_sync = false;
  bool no_malformed = false;
  std::size_t max_line = 4096;
  unsigned line_timeout_ms = 200;
};

// Decodes o.input into `output` (never one of the input files). Throws Error for a bad
// option value, port map, ELF or input.
ExitCode decode(const DecodeOptions& o, const std::string& output, bool append, const Logger& log);

}  // namespace tp
