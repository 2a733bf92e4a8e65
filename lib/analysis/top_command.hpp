// trace-top's work: the statistics of the records read, drawn as a table on a terminal or
// written as snapshot records (or, at the end, a profile export); so tools/trace-top is wiring.
#pragma once

#include <string>

#include "analysis/top_report.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "query/record_tool.hpp"

namespace tp::analysis {

struct TopOptions {
  RecordInput input;
  double interval = 1.0;        // seconds between redraws or snapshots
  bool once = false;            // only the statistics at the end of input
  ReportOptions report;         // its colour is decided here
  std::string format = "auto";  // auto, table, ndjson, folded, callgrind
  bool lines = false;           // profile by function and source line
};

// Reads o.input and writes its statistics into `output` (a file, '-': stdout). Throws Error
// for an input that cannot be opened or, with --strict, a bad line.
ExitCode report_top(const TopOptions& o, const std::string& output, bool append, const Logger& log);

}  // namespace tp::analysis
