// The options the record tools (trace-filter, trace-csv, trace-top, trace-timeline) share:
// their input and their time window (lib/query/record_tool.hpp reads them).
#pragma once

#include <CLI/CLI.hpp>

#include "query/record_tool.hpp"

namespace tp {

// FILE (the records; '-' or none: stdin) and --strict.
void add_record_input(CLI::App& app, RecordInput& input);

// --since T and --until T: records with since <= timestamp < until.
void add_time_window(CLI::App& app, TimeWindow& window);

}  // namespace tp
