// trace-filter's work: the criteria its options name, judged line by line (or on threads for
// a file), the selected lines passed through byte for byte; so tools/trace-filter is wiring.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "query/record_filter.hpp"
#include "query/record_tool.hpp"

namespace tp {

struct FilterOptions {
  RecordInput input;
  FilterArguments filter;
  TimeWindow window;
  std::uint64_t limit = 0;  // 0: no limit
  bool stats = false;
};

// Selects the records of o.input into `output` (a file, '-': stdout). Throws Error for a bad
// option value or, with --strict, a bad line.
ExitCode filter_records(FilterOptions o, const std::string& output, bool append, const Logger& log);

}  // namespace tp
