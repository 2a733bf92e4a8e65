// trace-filter: select NDJSON records by port, kind, source, time and field values;
// selected lines pass through byte for byte.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "cli/cli.hpp"
#include "query/line_stream.hpp"
#include "query/record_filter.hpp"
#include "query/thread_filter.hpp"
#include "records/vocabulary.hpp"

namespace {

struct Options {
  std::string input = "-";
  std::string ports;
  std::string kinds;
  std::string sources;
  std::optional<std::uint64_t> since;
  std::optional<std::uint64_t> until;
  std::vector<std::string> matches;
  std::vector<std::string> regexes;
  bool invert = false;
  std::uint64_t limit = 0;
  bool strict = false;
  bool stats = false;
  unsigned threads = 0;
};

tp::FilterCriteria criteria_from(const Options& o) {
  tp::FilterCriteria criteria;
  if (!o.ports.empty()) criteria.ports = tp::parse_port_list(o.ports);
  if (!o.kinds.empty()) criteria.kinds = tp::parse_name_list(o.kinds);
  if (!o.sources.empty()) criteria.sources = tp::parse_name_list(o.sources);
  criteria.since = o.since;
  criteria.until = o.until;
  for (const auto& m : o.matches) criteria.conditions.push_back(tp::parse_match(m));
  for (const auto& r : o.regexes) criteria.conditions.push_back(tp::parse_regex(r));
  criteria.invert = o.invert;
  return criteria;
}

// A --kind name no record carries selects nothing: say so (a warning: producers may add kinds).
void warn_unknown_kinds(const tp::FilterCriteria& criteria, const tp::Logger& log) {
  for (const std::string& name : criteria.kinds) {
    if (tp::is_known_record_kind(name)) continue;
    const auto spelled = tp::kind_spelled_differently(name);
    log.warn(fmt::format("--kind {}: no record of the tracepipe tools has this kind{}; known kinds: {}", name,
                         spelled ? fmt::format(" (kinds are case-sensitive: {}?)", *spelled) : "",
                         fmt::join(tp::known_record_kinds(), ", ")));
  }
}

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  if (o.since && o.until && *o.since >= *o.until) {
    throw tp::Error(tp::ExitCode::usage, "--since must be before --until (nothing lies between them)");
  }
  warn_unknown_kinds(criteria_from(o), log);
  tp::ThreadFilter filter(criteria_from(o));
  tp::ByteSource source = tp::ByteSource::open(o.input);
  tp::BatchedWriter writer = tp::BatchedWriter::open(common.output, common.append, {o.input});
  std::uint64_t selected = 0;
  std::unique_ptr<tp::LineStream> stream;
  const auto write_selected = [&](std::string_view text) {
    tp::pass_line(text, writer.buffer());
    writer.commit();
    if (++selected == o.limit) stream->stop();
  };
  stream = std::make_unique<tp::LineStream>(
      [&](tp::NdjsonLine& line) -> simdjson::error_code {
        const tp::Verdict verdict = filter.judge(line);
        if (verdict == tp::Verdict::bad) return simdjson::INCORRECT_TYPE;
        if (verdict == tp::Verdict::selected) write_selected(line.text);
        return simdjson::SUCCESS;
      },
      log, o.strict);
  if (filter.quick_enabled()) {
    stream->set_quick_handler([&](std::string_view text, std::uint64_t /*number*/) {
      const std::optional<bool> verdict = filter.quick(text);
      if (verdict == true) write_selected(text);
      return verdict.has_value();
    });
  }
  tp::Progress progress(source.size(), log.verbosity() != tp::Verbosity::quiet);
  const unsigned threads = tp::LineStream::threads_for(o.threads);
  if (threads > 1) {
    std::vector<tp::ChunkHandler> handlers;
    // Each thread its own criteria: a regular expression's match data is its own.
    for (unsigned i = 0; i < threads; ++i) handlers.push_back(tp::chunk_filter(criteria_from(o)));
    if (o.stats) stream->count_output_lines();
    if (source.seekable()) {
      const bool read_rest = stream->run_chunks(source, std::move(handlers), writer, progress, o.limit);
      selected = stream->output_lines();
      if (read_rest) tp::run_stream_loop(source, *stream, writer, progress);
    } else {
      stream->run_stream_chunks(source, std::move(handlers), writer, progress, o.limit);
      selected = stream->output_lines();
    }
  } else {
    tp::run_stream_loop(source, *stream, writer, progress);
  }
  if (o.stats) {
    log.report(fmt::format("{} lines, {} selected, {} bad", stream->lines(), selected, stream->bad_lines()));
  }
  stream->report_summary(source.name());
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Select tracepipe NDJSON records. Selected lines pass through unchanged. Criteria of\n"
      "different options must all hold; the items of one list are alternatives.\n\n"
      "Examples:\n"
      "  itm-decode swo.bin | trace-filter --kind Text --port 0\n"
      "  trace-filter --kind Exception --match event.data.action=enter log.ndjson\n"
      "  trace-filter --regex 'message=(?i)error|fault' --since 1000000 log.ndjson",
      "trace-filter"};
  Options o;
  tp::CommonOptions common;
  app.add_option("FILE", o.input, "Input file ('-' or none = stdin)");
  app.add_option("--port", o.ports, "Ports or ranges, e.g. 0,2-4")->type_name("LIST");
  app.add_option("--kind", o.kinds, "Event kinds, e.g. Text,Exception (Itm: raw frame lines)")->type_name("LIST");
  app.add_option("--source", o.sources, "Sources, e.g. itm,dwt")->type_name("LIST");
  app.add_option("--since", o.since, "Only records with timestamp >= T")->type_name("T");
  app.add_option("--until", o.until, "Only records with timestamp < T")->type_name("T");
  app.add_option("--match", o.matches, "FIELD=VALUE: a dotted path (or alias: kind, message, time) equals VALUE")
      ->type_name("FIELD=VALUE")
      ->allow_extra_args(false);  // one value per --match, so a FILE after it stays a FILE
  app.add_option("--regex", o.regexes, "FIELD=RE: the field contains a match of the Perl regex RE")
      ->type_name("FIELD=RE")
      ->allow_extra_args(false);
  app.add_flag("--invert", o.invert, "Select the records that do not match");
  app.add_option("--limit", o.limit, "Stop after N selected records (N >= 1; leave it out for no limit)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  app.add_flag("--strict", o.strict, "A line that is not a record is an error (exit 6), not skipped");
  app.add_flag("--stats", o.stats, "Print line, selected and bad counts on stderr at exit");
  tp::add_threads_option(app, o.threads);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-filter", [&] { return run_main(argc, argv); });
}
