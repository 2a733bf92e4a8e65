// trace-csv: flatten tracepipe NDJSON records into CSV for spreadsheets and cron logs.
#include <optional>

#include "cli/cli.hpp"
#include "cli/record_tool.hpp"
#include "query/csv_sink.hpp"

namespace {

struct Options {
  tp::RecordInput input;
  std::string columns;
  std::string preset;
  bool header = true;
  std::string time = "raw";
  std::uint64_t cpu_hz = 0;
  std::string delimiter = ",";
  bool crlf = false;
  std::size_t infer_lines = 1000;
};

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  if (o.delimiter.size() != 1) throw tp::Error(tp::ExitCode::usage, "--delimiter must be one character");
  if (o.delimiter == "\"" || o.delimiter == "\n" || o.delimiter == "\r") {
    // RFC 4180 quotes fields with '"' and ends rows with CR LF: as a separator either makes
    // rows no CSV reader can split.
    throw tp::Error(tp::ExitCode::usage, "--delimiter cannot be a double quote, CR or LF (RFC 4180 needs them)");
  }
  const tp::CsvOptions csv{o.columns,      o.preset, o.header,     tp::parse_time_format(o.time), o.time, o.cpu_hz,
                           o.delimiter[0], o.crlf,   o.infer_lines};
  tp::check_csv_options(csv);
  tp::RecordToolRun tool(o.input, common, log);
  std::optional<tp::LineStream> stream;
  tp::CsvSink sink(csv, tool.writer(),
                   [&](std::uint64_t number, std::string_view message) { stream->report_bad_line(number, message); });
  stream.emplace([&](tp::NdjsonLine& line) { return sink.on_line(line); }, log, o.input.strict);
  const unsigned threads = tp::LineStream::threads_for(o.input.threads);
  // From a pipe, the threads take over once the columns are known (given, or inferred line by line).
  tool.read(*stream, tp::ThreadedRead{threads, [&] { return sink.chunk_handlers(threads, tool.source()); },
                                      [&] { return sink.columns_known(); }});
  sink.finish(log);
  tool.finish(*stream);
  return tp::ExitCode::ok;
}

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
  Options o;
  tp::CommonOptions common;
  tp::add_record_input(app, o.input);
  app.add_option("--columns", o.columns, "Columns: time,port,kind,message or header=dotted.path,...")
      ->type_name("LIST");
  app.add_option("--preset", o.preset, "Named columns: basic, counters, exceptions, ekotrace")
      ->check(CLI::IsMember({"basic", "counters", "exceptions", "ekotrace"}));
  app.add_flag("--header,!--no-header", o.header,
               "Write a header row (default; only into an empty output: --append or >> add rows only)");
  app.add_option("--time", o.time, "Timestamp column as raw, seconds (by the record's clock) or rfc3339 (host time)")
      ->check(CLI::IsMember({"raw", "seconds", "rfc3339"}))
      ->default_val("raw");
  tp::add_cpu_hz_option(app, o.cpu_hz, "cycle timestamps become seconds (--time seconds)");
  app.add_option("--delimiter", o.delimiter, "Field separator (e.g. ';' for some spreadsheets)")->default_val(",");
  app.add_flag("--crlf", o.crlf, "End rows with CRLF, as RFC 4180 writes them (default: LF)");
  app.add_option("--infer-lines", o.infer_lines, "Records to look at when inferring columns")
      ->default_val(1000)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  tp::add_threads_option(app, o.input.threads);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-csv", [&] { return run_main(argc, argv); });
}
