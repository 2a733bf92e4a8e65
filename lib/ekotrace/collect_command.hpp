// eko-collect's work: the target's shape and layout, the tracers, then the poll loop; so
// tools/eko-collect is wiring only (it chooses the target-memory backend).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "target/target_location.hpp"

namespace tp::ekotrace {

struct CollectOptions {
  std::vector<std::string> tracers;
  std::uint32_t session_id = 0;  // a u32 in ekotrace's CSV
  std::optional<unsigned> word_size;
  bool little_endian = false;
  bool big_endian = false;
  std::string elf;
  target::TargetLocation target;  // a GDB server or a probe
  std::string interval = "500";
  std::string output = "-";
  std::string format = "csv";
  std::string layout_file;
  bool print_layout = false;
  bool no_clear = false;
  std::uint64_t polls = 0;
  std::string duration;
  bool stats = false;
  bool list_chips = false;
};

using target::TargetOpener;

// --interval: a bare number is milliseconds (as in ekotrace's collector), else a duration
// (500ms, 2s, 1m).
std::chrono::milliseconds parse_interval(const std::string& text);

// --print-layout, or the collection itself until --polls, --duration or a stop.
ExitCode collect(const CollectOptions& options, const TargetOpener& open_target, const Logger& log);

}  // namespace tp::ekotrace
