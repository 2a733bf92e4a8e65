#include "query/filter_command.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "query/thread_filter.hpp"

namespace tp {

ExitCode filter_records(FilterOptions o, const std::string& output, bool append, const Logger& log) {
  check_time_window(o.window);
  o.filter.since = o.window.since;
  o.filter.until = o.window.until;
  warn_unknown_kinds(criteria_from(o.filter), log);
  ThreadFilter filter(criteria_from(o.filter));
  RecordToolRun tool(o.input, output, append, log);
  std::optional<LineStream> stream;
  std::uint64_t selected_by_lines = 0;  // and the chunks' threads count theirs (output_lines)
  const auto selected = [&] { return stream->output_lines() + selected_by_lines; };
  const auto write_selected = [&](std::string_view text) {
    pass_line(text, tool.writer().buffer());
    tool.writer().commit();
    ++selected_by_lines;
    if (selected() == o.limit) stream->stop();
  };
  stream.emplace(
      [&](NdjsonLine& line) -> simdjson::error_code {
        const Verdict verdict = filter.judge(line);
        if (verdict == Verdict::bad) return simdjson::INCORRECT_TYPE;
        if (verdict == Verdict::selected) write_selected(line.text);
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
  ThreadedRead threaded{LineStream::threads_for(o.input.threads), {}, {}, o.limit};
  // Each thread its own criteria: a regular expression's match data is its own.
  threaded.handlers = [&] {
    std::vector<ChunkHandler> handlers;
    for (unsigned i = 0; i < threaded.threads; ++i) handlers.push_back(chunk_filter(criteria_from(o.filter)));
    return handlers;
  };
  if (threaded.threads > 1 && o.stats) stream->count_output_lines();
  tool.read(*stream, threaded);
  if (o.stats) {
    log.report(fmt::format("{} lines, {} selected, {} bad", stream->lines(), selected(), stream->bad_lines()));
  }
  tool.finish(*stream);
  return ExitCode::ok;
}

}  // namespace tp
