// trace-filter: select NDJSON records by port, kind, source, time and field values;
// selected lines pass through byte for byte.
#include <limits>

#include "cli/cli.hpp"
#include "cli/record_options.hpp"
#include "query/filter_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Select tracepipe NDJSON records. Selected lines pass through unchanged. Criteria of\n"
      "different options must all hold; the items of one list are alternatives.\n\n"
      "Examples:\n"
      "  itm-decode swo.bin | trace-filter --kind Text --port 0\n"
      "  trace-filter --kind Exception --match event.data.action=enter log.ndjson\n"
      "  trace-filter --regex 'message=(?i)error|fault' --since 1000000 log.ndjson",
      "trace-filter"};
  tp::FilterOptions o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  app.add_option("--port", o.filter.ports, "Ports or ranges, e.g. 0,2-4")->type_name("LIST");
  app.add_option("--kind", o.filter.kinds, "Event kinds, e.g. Text,Exception (Itm: raw frame lines)")
      ->type_name("LIST");
  app.add_option("--source", o.filter.sources, "Sources, e.g. itm,dwt")->type_name("LIST");
  tp::add_time_window(app, o.window);
  app.add_option("--match", o.filter.matches, "FIELD=VALUE: a dotted path (or alias: kind, message, time) equals VALUE")
      ->type_name("FIELD=VALUE")
      ->allow_extra_args(false);  // one value per --match, so a FILE after it stays a FILE
  app.add_option("--regex", o.filter.regexes, "FIELD=RE: the field contains a match of the Perl regex RE")
      ->type_name("FIELD=RE")
      ->allow_extra_args(false);
  app.add_flag("--invert", o.filter.invert, "Select the records that do not match");
  app.add_option("--limit", o.limit, "Stop after N selected records (N >= 1; leave it out for no limit)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  app.add_flag("--stats", o.stats, "Print line, selected and bad counts on stderr at exit");
  tp::add_threads_option(app, o.input.threads);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv,
                      [&](const tp::Logger& log) { return tp::filter_records(o, common.output, common.append, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-filter", [&] { return run_main(argc, argv); });
}
