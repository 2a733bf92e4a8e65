#include "query/csv_command.hpp"

#include <optional>

namespace tp {
namespace {

char checked_delimiter(const std::string& delimiter) {
  if (delimiter.size() != 1) throw Error(ExitCode::usage, "--delimiter must be one character");
  if (delimiter == "\"" || delimiter == "\n" || delimiter == "\r") {
    // RFC 4180 quotes fields with '"' and ends rows with CR LF: as a separator either makes
    // rows no CSV reader can split.
    throw Error(ExitCode::usage, "--delimiter cannot be a double quote, CR or LF (RFC 4180 needs them)");
  }
  return delimiter[0];
}

}  // namespace

ExitCode write_csv(CsvCommandOptions o, const std::string& output, bool append, const Logger& log) {
  o.csv.delimiter = checked_delimiter(o.delimiter);
  o.csv.time = parse_time_format(o.csv.time_name);
  const CsvOptions& csv = o.csv;
  check_csv_options(csv);
  RecordToolRun tool(o.input, output, append, log);
  std::optional<LineStream> stream;
  CsvSink sink(csv, tool.writer(),
               [&](std::uint64_t number, std::string_view message) { stream->report_bad_line(number, message); });
  stream.emplace([&](NdjsonLine& line) { return sink.on_line(line); }, log, o.input.strict);
  const unsigned threads = LineStream::threads_for(o.input.threads);
  // From a pipe, the threads take over once the columns are known (given, or inferred line by line).
  tool.read(*stream, ThreadedRead{threads, [&] { return sink.chunk_handlers(threads, tool.source()); },
                                  [&] { return sink.columns_known(); }});
  sink.finish(log);
  tool.finish(*stream);
  return ExitCode::ok;
}

}  // namespace tp
