// trace-csv: flatten tracepipe NDJSON records into CSV for spreadsheets and cron logs.
#include "cli/cli.hpp"
#include "cli/record_options.hpp"
#include "query/csv_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Flatten tracepipe NDJSON records to CSV (RFC 4180: strings quoted, numbers bare).\n"
      "Columns are dotted paths or aliases (time, port, kind, message, source, clock);\n"
      "without --columns or --preset they are inferred from the first records.\n\n"
      "Examples:\n"
      "  itm-decode swo.bin | trace-csv --columns time,port,kind,message > trace.csv\n"
      "  eko-collect ... --format ndjson | trace-csv --preset ekotrace -o log.csv --append   # cron\n"
      "  trace-csv --preset counters --time seconds --cpu-hz 72000000 records.ndjson",
      "trace-csv"};
  tp::CsvCommandOptions o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  app.add_option("--columns", o.csv.columns, "Columns: time,port,kind,message or header=dotted.path,...")
      ->type_name("LIST");
  app.add_option("--preset", o.csv.preset, "Named columns: basic, counters, exceptions, ekotrace")
      ->check(CLI::IsMember({"basic", "counters", "exceptions", "ekotrace"}));
  app.add_flag("--header,!--no-header", o.csv.header,
               "Write a header row (default; only into an empty output: --append or >> add rows only)");
  app.add_option("--time", o.csv.time_name,
                 "Timestamp column as raw, seconds (by the record's clock) or rfc3339 (host time)")
      ->check(CLI::IsMember({"raw", "seconds", "rfc3339"}))
      ->default_val(o.csv.time_name);
  tp::add_cpu_hz_option(app, o.csv.cpu_hz, "cycle timestamps become seconds (--time seconds)");
  app.add_option("--delimiter", o.delimiter, "Field separator (e.g. ';' for some spreadsheets)")
      ->default_val(o.delimiter);
  app.add_flag("--crlf", o.csv.crlf, "End rows with CRLF, as RFC 4180 writes them (default: LF)");
  app.add_option("--infer-lines", o.csv.infer_lines, "Records to look at when inferring columns")
      ->default_val(o.csv.infer_lines)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  tp::add_threads_option(app, o.input.threads);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv,
                      [&](const tp::Logger& log) { return tp::write_csv(o, common.output, common.append, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-csv", [&] { return run_main(argc, argv); });
}
