// trace-csv: flatten tracepipe NDJSON records into CSV for spreadsheets and cron logs.
#include <fmt/format.h>
#include <sys/stat.h>

#include <deque>

#include "core/cli.hpp"
#include "records/csv_table.hpp"
#include "records/field_path.hpp"
#include "records/line_stream.hpp"

namespace {

struct Options {
  std::string input = "-";
  std::string columns;
  std::string preset;
  bool header = true;
  std::string time = "raw";
  std::uint64_t cpu_hz = 0;
  std::string delimiter = ",";
  bool crlf = false;
  std::size_t infer_lines = 1000;
  bool strict = false;
};

// An empty (or new) output file gets a header; an appended non-empty one does not.
bool output_is_empty(const tp::CommonOptions& common) {
  if (common.output.empty() || common.output == "-" || !common.append) return true;
  struct stat st {};
  return ::stat(common.output.c_str(), &st) != 0 || st.st_size == 0;
}

tp::TimeFormat time_format(const std::string& name) {
  return name == "seconds"   ? tp::TimeFormat::seconds
         : name == "rfc3339" ? tp::TimeFormat::rfc3339
                             : tp::TimeFormat::raw;
}

// Writes rows; until the columns are known (inferred from the first lines), lines wait.
class CsvSink {
 public:
  CsvSink(const Options& o, bool write_header, tp::BatchedWriter& writer)
      : options_(o), write_header_(write_header), writer_(writer) {
    if (!o.preset.empty()) start(tp::preset_columns(o.preset));
    if (!o.columns.empty()) start(tp::parse_columns(o.columns));
  }

  simdjson::error_code on_line(tp::NdjsonLine& line) {
    if (rows_) return write(line.document);
    if (auto error = inference_.add(line.document); error != simdjson::SUCCESS) return error;
    waiting_.emplace_back(line.text);
    if (waiting_.size() >= options_.infer_lines) finish_inference();
    return simdjson::SUCCESS;
  }

  void finish(const tp::Logger& log) {
    if (!rows_) finish_inference();
    if (rows_->unconverted_times() != 0) {
      log.warn(
          fmt::format("{} timestamps were left unconverted (--time {} needs --cpu-hz for cycles; rfc3339 "
                      "works for host time only)",
                      rows_->unconverted_times(), options_.time));
    }
  }

 private:
  void start(std::vector<tp::CsvColumn> columns) {
    rows_.emplace(std::move(columns), options_.delimiter[0], time_format(options_.time), options_.cpu_hz,
                  options_.crlf);
    if (write_header_) {
      rows_->header(writer_.buffer());
      writer_.commit();
    }
  }

  void finish_inference() {
    start(inference_.columns());
    simdjson::ondemand::parser parser;
    for (const std::string& text : waiting_) {
      const simdjson::padded_string padded(text);
      simdjson::ondemand::document document;
      if (parser.iterate(padded).get(document) == simdjson::SUCCESS) (void)write(document);
    }
    waiting_.clear();
  }

  simdjson::error_code write(simdjson::ondemand::document& document) {
    const simdjson::error_code error = rows_->row(document, writer_.buffer());
    writer_.commit();
    return error;
  }

  const Options& options_;
  bool write_header_;
  tp::BatchedWriter& writer_;
  std::optional<tp::CsvRowWriter> rows_;
  tp::ColumnInference inference_;
  std::deque<std::string> waiting_;
};

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  if (!o.columns.empty() && !o.preset.empty())
    throw tp::Error(tp::ExitCode::usage, "--columns and --preset exclude each other");
  if (o.delimiter.size() != 1) throw tp::Error(tp::ExitCode::usage, "--delimiter must be one character");
  const bool write_header = o.header && output_is_empty(common);
  tp::ByteSource source = tp::ByteSource::open(o.input);
  tp::BatchedWriter writer = tp::BatchedWriter::open(common.output, common.append);
  CsvSink sink(o, write_header, writer);
  tp::LineStream stream([&](tp::NdjsonLine& line) { return sink.on_line(line); }, log, o.strict);
  tp::Progress progress(source.size(), log.verbosity() != tp::Verbosity::quiet);
  tp::run_stream_loop(source, stream, writer, progress);
  sink.finish(log);
  writer.flush();
  stream.report_summary(source.name());
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
  app.add_option("FILE", o.input, "Input file ('-' or none = stdin)");
  app.add_option("--columns", o.columns, "Columns: time,port,kind,message or header=dotted.path,...")
      ->type_name("LIST");
  app.add_option("--preset", o.preset, "Named columns: basic, counters, exceptions, ekotrace")
      ->check(CLI::IsMember({"basic", "counters", "exceptions", "ekotrace"}));
  app.add_flag("--header,!--no-header", o.header,
               "Write a header row (default; with --append only into an empty file)");
  app.add_option("--time", o.time, "Timestamp column as raw, seconds (by the record's clock) or rfc3339 (host time)")
      ->check(CLI::IsMember({"raw", "seconds", "rfc3339"}))
      ->default_val("raw");
  app.add_option("--cpu-hz", o.cpu_hz, "Target clock, to turn cycle timestamps into seconds")->type_name("HZ");
  app.add_option("--delimiter", o.delimiter, "Field separator (e.g. ';' for some spreadsheets)")->default_val(",");
  app.add_flag("--crlf", o.crlf, "End rows with CRLF, as RFC 4180 writes them (default: LF)");
  app.add_option("--infer-lines", o.infer_lines, "Records to look at when inferring columns")
      ->default_val(1000)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  app.add_flag("--strict", o.strict, "A line that is not JSON is an error (exit 6), not skipped");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-csv", [&] { return run_main(argc, argv); });
}
