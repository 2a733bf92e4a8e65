#include "json/ndjson_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace tp {

NdjsonReader::NdjsonReader(LineHandler on_line, BadLineHandler on_bad_line, bool strict, std::size_t max_line)
    : on_line_(std::move(on_line)), on_bad_line_(std::move(on_bad_line)), max_line_(max_line), strict_(strict) {
#ifdef SIMDJSON_THREADS_ENABLED
  many_parser_.threaded = false;  // read_ndjson_chunks already runs one reader per core
#endif
}

void NdjsonReader::report_bad_line(std::uint64_t number, std::string_view message) {
  ++bad_lines_;
  if (strict_) throw Error(ExitCode::bad_input, fmt::format("line {}: {}", number, message));
  if (on_bad_line_) on_bad_line_(number, message);
}

void NdjsonReader::restart() noexcept {
  buffer_.clear();
  line_number_ = 0;
  bad_lines_ = 0;
  fed_ = 0;
  line_end_ = 0;
  over_long_start_ = std::string();
  discarding_ = false;
  stopped_ = false;
}

NdjsonReader::LineOutcome NdjsonReader::process_line(const char* data, std::size_t length) {
  ++line_number_;
  return take_line(data, length);
}

NdjsonReader::LineOutcome NdjsonReader::take_line(const char* data, std::size_t length) {
  if (length > 0 && data[length - 1] == '\r') --length;
  if (check_line_) {
    if (const std::string_view problem = check_line_(std::string_view(data, length)); !problem.empty()) {
      report_bad(problem);
      return LineOutcome::parsed;
    }
  }
  std::size_t first = 0;
  // Blank: only JSON whitespace (a stray CR too), as feed_lines judges the lines between records.
  while (first < length && (data[first] == ' ' || data[first] == '\t' || data[first] == '\r')) ++first;
  if (first == length) return LineOutcome::blank;  // no record, nothing lost
  if (on_quick_line_ && on_quick_line_(std::string_view(data, length), line_number_)) return LineOutcome::quick;
  // One parse, in place: the bytes after the line stay inside the buffer, whose capacity
  // keeps the padding simdjson needs. The DOM parser checks every value (stage 2; integers
  // must fit 64 bits), not only what a handler reads, as On-Demand would (skipping a value
  // there merely balances brackets, so {"a":{"b":}]} would pass).
  simdjson::dom::element root;
  const auto error = parser_.parse(data, length, false).get(root);
  if (error != simdjson::SUCCESS) {
    report_bad(simdjson::error_message(error));
  } else {
    handle_document(root, std::string_view(data, length));
  }
  return LineOutcome::parsed;
}

void NdjsonReader::handle_document(simdjson::dom::element root, std::string_view text) {
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return report_bad("a record must be a JSON object");
  NdjsonLine line{object, text, line_number_, {}};
  const simdjson::error_code error = on_line_(line);
  if (error == simdjson::SUCCESS) return;
  report_bad(line.problem.empty() ? std::string_view(simdjson::error_message(error)) : line.problem);
}

namespace {

// Whitespace without a line's content: what may stand between two records' lines.
bool only_blank(std::string_view bytes) noexcept {
  return bytes.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

void NdjsonReader::feed_lines(std::string_view lines) {
  lines_start_ = fed_;
  const std::size_t taken = take_whole_lines(lines);
  fed_ += taken;
  // From the first line that is not one object alone (or that the stream did not reach), line
  // by line: the same lines, numbers and reports either way.
  if (taken < lines.size() && !stopped_) feed(lines.substr(taken));
}

std::size_t NdjsonReader::take_whole_lines(std::string_view lines) {
  std::size_t pos = on_quick_line_ ? take_lines_quickly(lines) : 0;
  if (pos < lines.size() && !stopped_ && !check_line_) pos += take_parsed_lines(lines.substr(pos));
  return pos;
}

std::size_t NdjsonReader::take_lines_quickly(std::string_view lines) {
  // Parsing the lines the quick handler leaves one by one costs ~40% more than one
  // parse_many pass over them: once they are most lines, the rest go that way.
  constexpr std::uint64_t trial_lines = 256;
  std::uint64_t taken = 0;
  std::uint64_t parsed = 0;
  std::size_t pos = 0;
  while (!stopped_ && (taken + parsed < trial_lines || parsed * 2 < taken + parsed)) {
    const void* found = std::memchr(lines.data() + pos, '\n', lines.size() - pos);
    if (found == nullptr) break;
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(found) - lines.data());
    if (newline - pos > max_line_) break;  // feed() reports it, as one by one
    line_end_ = lines_start_ + newline + 1;
    const LineOutcome outcome = process_line(lines.data() + pos, newline - pos);
    taken += outcome == LineOutcome::quick ? 1U : 0U;
    parsed += outcome == LineOutcome::parsed ? 1U : 0U;
    pos = newline + 1;
  }
  return pos;
}

std::size_t NdjsonReader::take_parsed_lines(std::string_view lines) {
  std::size_t pos = 0;  // where the first line not yet handled starts
  simdjson::dom::document_stream stream;
  const std::size_t batch = std::min(lines.size(), many_batch_size);
  if (many_parser_.parse_many(lines.data(), lines.size(), batch).get(stream) == simdjson::SUCCESS) {
    for (auto it = stream.begin(); it != stream.end() && !stopped_; ++it) {
      simdjson::dom::element root;
      const std::size_t start = it.current_index();
      if ((*it).get(root) != simdjson::SUCCESS || start < pos || lines[start] != '{') break;
      // Blank lines before this document count as lines, as they do one by one.
      const std::string_view gap = lines.substr(pos, start - pos);
      if (!only_blank(gap)) break;
      const std::size_t last_blank_end = gap.rfind('\n');
      if (last_blank_end != std::string_view::npos) {
        line_number_ += static_cast<std::uint64_t>(std::count(gap.begin(), gap.end(), '\n'));
        pos += last_blank_end + 1;
      }
      // The document must be the whole line: no newline inside, nothing after it.
      const std::size_t document_end = start + it.source().size();
      const std::size_t newline = lines.find('\n', start);
      if (newline == std::string_view::npos || newline < document_end ||
          !only_blank(lines.substr(document_end, newline - document_end)) || newline - pos > max_line_) {
        break;
      }
      ++line_number_;
      line_end_ = lines_start_ + newline + 1;
      std::size_t text_end = newline;
      if (lines[text_end - 1] == '\r') --text_end;
      handle_document(root, lines.substr(pos, text_end - pos));
      pos = newline + 1;
    }
  }
  return pos;
}

void NdjsonReader::feed(std::span<const char> bytes) {
  if (stopped_) return;
  const std::size_t needed = buffer_.size() + bytes.size() + simdjson::SIMDJSON_PADDING;
  if (buffer_.capacity() < needed) buffer_.reserve(needed * 2);
  buffer_.append(bytes.data(), bytes.size());
  fed_ += bytes.size();
  const std::uint64_t buffer_start = fed_ - buffer_.size();  // buffer_ holds the input's last bytes
  std::size_t line_start = 0;
  // Many whole lines at once (a file, a busy pipe): one simdjson pass over them, in place (the
  // buffer's capacity keeps the padding); line by line from where that stops.
  if (!discarding_ && buffer_.size() >= whole_lines_threshold_) {
    // The last newline can only be in what just came (what was left had none); memrchr, as
    // string_view::rfind walks byte by byte (a 1 GB line made that quadratic).
    const void* last = ::memrchr(buffer_.data() + buffer_.size() - bytes.size(), '\n', bytes.size());
    const std::size_t whole =
        last == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(last) - buffer_.data()) + 1;
    if (whole >= whole_lines_threshold_) {
      lines_start_ = buffer_start;
      line_start = take_whole_lines(std::string_view(buffer_.data(), whole));
    }
  }
  while (!stopped_) {
    const std::size_t newline = std::string_view(buffer_).find('\n', line_start);
    if (newline == std::string_view::npos) break;
    line_end_ = buffer_start + newline + 1;
    if (discarding_) {
      end_skipping();  // the rest of an over-long line
    } else if (newline - line_start > max_line_) {
      over_long_line(buffer_.data() + line_start, newline - line_start);
    } else {
      process_line(buffer_.data() + line_start, newline - line_start);
    }
    line_start = newline + 1;
  }
  buffer_.erase(0, line_start);
  if (buffer_.size() > max_line_) {
    if (!discarding_) start_skipping();
    buffer_.clear();
  }
}

void NdjsonReader::over_long_line(const char* data, std::size_t length) {
  ++line_number_;
  // One rule however the line came (in one read or many, whole or in chunks): longer than
  // max_line is a bad line, unless a handler takes it.
  if (!on_over_long_) return report_bad(over_long_message());
  if (on_over_long_(std::string_view(data, length), true)) take_line(data, length);
}

void NdjsonReader::start_skipping() {
  discarding_ = true;
  if (on_over_long_) {
    over_long_start_.swap(buffer_);  // told at the line's end
    return;
  }
  ++line_number_;
  report_bad(over_long_message());
}

void NdjsonReader::end_skipping() {
  discarding_ = false;
  if (!on_over_long_) return;  // reported when it began
  ++line_number_;
  on_over_long_(over_long_start_, false);
  over_long_start_ = std::string();
}

std::string NdjsonReader::over_long_message() const {
  return fmt::format("line longer than {} bytes skipped", max_line_);
}

void NdjsonReader::finish() {
  line_end_ = fed_;
  if (discarding_ && !stopped_) {
    end_skipping();
  } else if (!buffer_.empty() && !discarding_ && !stopped_) {
    if (buffer_.capacity() < buffer_.size() + simdjson::SIMDJSON_PADDING) {
      buffer_.reserve(buffer_.size() + simdjson::SIMDJSON_PADDING);
    }
    process_line(buffer_.data(), buffer_.size());
  }
  buffer_.clear();
  discarding_ = false;
}

}  // namespace tp
