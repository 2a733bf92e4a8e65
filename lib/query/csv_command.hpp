// trace-csv's work: its options checked, the records flattened to CSV rows by a CsvSink, read
// on threads when the columns allow; so tools/trace-csv is wiring.
#pragma once

#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "query/csv_sink.hpp"
#include "query/record_tool.hpp"

namespace tp {

struct CsvCommandOptions {
  RecordInput input;
  CsvOptions csv;  // its time comes from csv.time_name, its delimiter from `delimiter`
  std::string delimiter = std::string(1, CsvOptions{}.delimiter);  // as given: one character
};

// Writes the records of o.input as CSV into `output` (a file, '-': stdout). Throws Error for a
// bad option value or, with --strict, a bad line.
ExitCode write_csv(CsvCommandOptions o, const std::string& output, bool append, const Logger& log);

}  // namespace tp
