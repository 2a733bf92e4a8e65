// NDJSON input on simdjson's DOM parser: push bytes in, get each line parsed once, validated
// whole (every value, as the record tools pass lines on byte for byte) and handed over as
// its root object with the line's bytes (each line must be a JSON object: a record).
// Bad lines (invalid JSON, rejected by the handler, too long) are counted and reported
// with their line number; they are fatal only in strict mode.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace tp {

struct NdjsonLine {
  simdjson::dom::object root;  // valid until the next line is parsed
  std::string_view text;       // the raw line, without its newline
  std::uint64_t number;        // 1-based
  std::string problem;         // a handler may say why a line is bad (else simdjson's message)
};

class NdjsonReader {
 public:
  // Returns SUCCESS, or the error that makes this line bad.
  using LineHandler = std::function<simdjson::error_code(NdjsonLine&)>;
  // Called for each bad line: line number and a message.
  using BadLineHandler = std::function<void(std::uint64_t, std::string_view)>;

  // Takes a whole line (its text without the newline, and its number) that it can vouch for
  // without a parse (a record of a shape already checked: records/record_shapes) and returns
  // true; a line it leaves is parsed and goes to the LineHandler. It never takes a bad line.
  using QuickHandler = std::function<bool(std::string_view, std::uint64_t)>;

  // A check every line goes through first, a blank one too (its text without the newline and
  // a trailing CR): the problem that makes it a bad line, or an empty view. A reader with one
  // takes lines one by one (feed_lines' parse_many pass would judge lines without it).
  using LineCheck = std::function<std::string_view(std::string_view)>;

  // Takes a line longer than max_line instead of the bad-line report. `whole`: the line came in
  // one feed and `start` is all of it; returning true takes it as any other line. Otherwise
  // `start` is what was held of it (over max_line bytes) when its rest began to be skipped,
  // and the call comes at its end (its newline, or finish()); the return value is ignored.
  using OverLongHandler = std::function<bool(std::string_view start, bool whole)>;

  static constexpr std::size_t default_max_line = 16U << 20U;

  NdjsonReader(LineHandler on_line, BadLineHandler on_bad_line, bool strict = false,
               std::size_t max_line = default_max_line);

  // Lines go to `quick` first; whole lines are then taken one by one (a parse each for
  // those it leaves) rather than in one parse_many pass, as long as it takes most of them.
  void set_quick_handler(QuickHandler quick) { on_quick_line_ = std::move(quick); }
  void set_line_check(LineCheck check) { check_line_ = std::move(check); }
  void set_over_long_handler(OverLongHandler handler) { on_over_long_ = std::move(handler); }

  void feed(std::span<const char> bytes);
  void feed(std::string_view bytes) { feed(std::span<const char>(bytes.data(), bytes.size())); }
  // Whole lines at once (each ending with a newline; SIMDJSON_PADDING readable bytes after
  // them; nothing pending from feed()): one simdjson stage 1 over all of them (parse_many),
  // 40% less parsing than line by line. A document that is not one object alone on its line
  // (a bad line, JSON over several lines, an over-long line) sends the rest, from its line
  // on, through feed(): the same lines, numbers and reports either way.
  void feed_lines(std::string_view lines);
  // feed() takes the whole lines of what it holds in one pass (as feed_lines) from this many
  // bytes on; smaller pieces (a live stream's few lines) line by line. Tests set it low.
  static constexpr std::size_t default_whole_lines_threshold = std::size_t{16} << 10U;
  void whole_lines_from(std::size_t bytes) noexcept { whole_lines_threshold_ = bytes; }
  // End of input: a last line without a newline is still a line.
  void finish();
  // No more lines are wanted: the rest of what was fed, and anything fed later, is ignored.
  void stop() noexcept { stopped_ = true; }
  // The start of a line not complete yet, taken out for another reader to go on with, and
  // whether that line was already reported too long (its rest is to be skipped).
  struct Pending {
    std::string bytes;
    bool skipping = false;
  };
  [[nodiscard]] Pending take_pending() noexcept {
    Pending pending{std::move(buffer_), discarding_};
    buffer_.clear();
    discarding_ = false;
    return pending;
  }
  // Starts over as a new input (line numbers from 1, no bad lines), keeping the parser's
  // memory: for a reader that handles one chunk of a file after another.
  void restart() noexcept;
  // Lines read elsewhere (by the threads of read_ndjson_chunks) that count as this input's.
  void count_lines(std::uint64_t lines) noexcept { line_number_ += lines; }

  // A line found bad after its handler returned (e.g. it waited for something later lines
  // decided): counted and reported like the others, fatal with strict.
  void report_bad_line(std::uint64_t number, std::string_view message);

  [[nodiscard]] std::uint64_t lines() const noexcept { return line_number_; }
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return bad_lines_; }
  // While a handler runs: the bytes of input (fed since the start or restart()) up to the end
  // of its line, its newline included: where a caller that keeps marks of the input stands.
  [[nodiscard]] std::uint64_t line_end() const noexcept { return line_end_; }

 private:
  // One line at `data` (without its newline; SIMDJSON_PADDING readable bytes after it).
  enum class LineOutcome : std::uint8_t { blank, quick, parsed };
  LineOutcome process_line(const char* data, std::size_t length);
  LineOutcome take_line(const char* data, std::size_t length);  // the same, its number counted
  void handle_document(simdjson::dom::element root, std::string_view text);
  // What feed_lines does up to the first line it cannot take at once: returns where that is.
  std::size_t take_whole_lines(std::string_view lines);
  std::size_t take_parsed_lines(std::string_view lines);
  // With a quick handler: line by line, until a line is too long or most lines need a parse.
  std::size_t take_lines_quickly(std::string_view lines);
  void report_bad(std::string_view message) { report_bad_line(line_number_, message); }
  [[nodiscard]] std::string over_long_message() const;
  // A whole line over max_line at `data` (SIMDJSON_PADDING readable bytes after it).
  void over_long_line(const char* data, std::size_t length);
  // The held start of a line grown past max_line: reported, or kept for the OverLongHandler.
  void start_skipping();
  // The end of a skipped line (its newline, or the end of input).
  void end_skipping();

  LineHandler on_line_;
  BadLineHandler on_bad_line_;
  QuickHandler on_quick_line_;
  LineCheck check_line_;
  OverLongHandler on_over_long_;
  std::string over_long_start_;  // what was held of the line being skipped, for on_over_long_
  static constexpr std::size_t many_batch_size = std::size_t{1} << 18U;

  simdjson::dom::parser parser_;
  simdjson::dom::parser many_parser_;  // feed_lines' stream
  std::string buffer_;                 // pending bytes; capacity keeps SIMDJSON_PADDING spare
  std::size_t max_line_;
  std::size_t whole_lines_threshold_ = default_whole_lines_threshold;
  std::uint64_t line_number_ = 0;
  std::uint64_t fed_ = 0;          // bytes of input so far (buffer_ holds the last ones)
  std::uint64_t lines_start_ = 0;  // where the lines being taken at once start in the input
  std::uint64_t line_end_ = 0;
  std::uint64_t bad_lines_ = 0;
  bool strict_;
  bool discarding_ = false;  // inside an over-long line
  bool stopped_ = false;
};

}  // namespace tp
