// trace-timeline's work: the records read as a Chrome Trace Event timeline (TimelineWriter)
// within their time window; so tools/trace-timeline is wiring.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "query/record_tool.hpp"

namespace tp::analysis {

struct TimelineCommandOptions {
  RecordInput input;
  std::uint64_t cpu_hz = 0;  // cycle timestamps become microseconds
  TimeWindow window;
};

// Reads o.input and writes its timeline into `output` (a file, '-': stdout). Throws Error for
// an empty time window, an input that cannot be opened or, with --strict, a bad line.
ExitCode write_timeline(const TimelineCommandOptions& o, const std::string& output, bool append, const Logger& log);

}  // namespace tp::analysis
