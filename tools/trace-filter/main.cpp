// trace-filter: select NDJSON records by port, kind, source, time and field values;
// selected lines pass through byte for byte.
#include <fmt/format.h>

#include <limits>

#include "cli/cli.hpp"
#include "cli/record_tool.hpp"
#include "query/record_filter.hpp"
#include "query/thread_filter.hpp"

namespace {

struct Options {
  tp::RecordInput input;
  tp::FilterArguments filter;
  tp::TimeWindow window;
  std::uint64_t limit = 0;
  bool stats = false;
};

tp::ExitCode run(Options o, const tp::CommonOptions& common, const tp::Logger& log) {
  tp::check_time_window(o.window);
  o.filter.since = o.window.since;
  o.filter.until = o.window.until;
  tp::warn_unknown_kinds(tp::criteria_from(o.filter), log);
  tp::ThreadFilter filter(tp::criteria_from(o.filter));
  tp::RecordToolRun tool(o.input, common, log);
  std::optional<tp::LineStream> stream;
  std::uint64_t selected_by_lines = 0;  // and the chunks' threads count theirs (output_lines)
  const auto selected = [&] { return stream->output_lines() + selected_by_lines; };
  const auto write_selected = [&](std::string_view text) {
    tp::pass_line(text, tool.writer().buffer());
    tool.writer().commit();
    ++selected_by_lines;
    if (selected() == o.limit) stream->stop();
  };
  stream.emplace(
      [&](tp::NdjsonLine& line) -> simdjson::error_code {
        const tp::Verdict verdict = filter.judge(line);
        if (verdict == tp::Verdict::bad) return simdjson::INCORRECT_TYPE;
        if (verdict == tp::Verdict::selected) write_selected(line.text);
        return simdjson::SUCCESS;
      },
      log, o.input.strict);
  if (filter.quick_enabled()) {
    stream->set_quick_handler([&](std::string_view text, std::uint64_t /*number*/) {
      const std::optional<bool> verdict = filter.quick(text);
      if (verdict == true) write_selected(text);
      return verdict.has_value();
    });
  }
  tp::ThreadedRead threaded{tp::LineStream::threads_for(o.input.threads), {}, {}, o.limit};
  // Each thread its own criteria: a regular expression's match data is its own.
  threaded.handlers = [&] {
    std::vector<tp::ChunkHandler> handlers;
    for (unsigned i = 0; i < threaded.threads; ++i) handlers.push_back(tp::chunk_filter(tp::criteria_from(o.filter)));
    return handlers;
  };
  if (threaded.threads > 1 && o.stats) stream->count_output_lines();
  tool.read(*stream, threaded);
  if (o.stats) {
    log.report(fmt::format("{} lines, {} selected, {} bad", stream->lines(), selected(), stream->bad_lines()));
  }
  tool.finish(*stream);
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
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("trace-filter", [&] { return run_main(argc, argv); });
}
