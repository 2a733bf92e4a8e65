#include "cli/record_options.hpp"

namespace tp {

void add_record_input(CLI::App& app, RecordInput& input) {
  app.add_option("FILE", input.file, "Records to read ('-' or none = stdin)");
  app.add_flag("--strict", input.strict, "A line that is not a record is an error (exit 6), not skipped");
}

void add_time_window(CLI::App& app, TimeWindow& window) {
  app.add_option("--since", window.since, "Only records with timestamp >= T")->type_name("T");
  app.add_option("--until", window.until, "Only records with timestamp < T")->type_name("T");
}

}  // namespace tp
