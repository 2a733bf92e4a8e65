#include "json/ndjson_reader.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace tp {

NdjsonReader::NdjsonReader(LineHandler on_line, BadLineHandler on_bad_line, bool strict, std::size_t max_line)
    : on_line_(std::move(on_line)), on_bad_line_(std::move(on_bad_line)), max_line_(max_line), strict_(strict) {}

void NdjsonReader::report_bad_line(std::uint64_t number, std::string_view message) {
  ++bad_lines_;
  if (strict_) throw Error(ExitCode::bad_input, fmt::format("line {}: {}", number, message));
  if (on_bad_line_) on_bad_line_(number, message);
}

// On-Demand parses lazily and trusts the nesting it is given: walk the top-level object
// once (skipping each value checks its nesting) so that handlers may use any access,
// and reject text after the object. Returns why the line is bad, or nullptr.
// On-Demand checks only what it is asked for (skipping a value merely balances brackets,
// so {"a":{"b":}]} would pass), and the record tools pass lines on byte for byte: each
// line is validated whole by simdjson's DOM parser (stage 2 checks every value; integers
// must fit 64 bits). The line sits in a buffer with simdjson's padding after it.
const char* NdjsonReader::check_structure(simdjson::ondemand::document& document, std::string_view line) {
  simdjson::dom::element root;
  const auto error = validator_.parse(reinterpret_cast<const std::uint8_t*>(line.data()), line.size(), false).get(root);
  if (error != simdjson::SUCCESS) return simdjson::error_message(error);
  if (!root.is_object()) return "a record must be a JSON object";
  document.rewind();
  return nullptr;
}

void NdjsonReader::process_line(std::size_t begin, std::size_t end) {
  ++line_number_;
  if (end > begin && buffer_[end - 1] == '\r') --end;
  std::size_t first = begin;
  while (first < end && (buffer_[first] == ' ' || buffer_[first] == '\t')) ++first;
  if (first == end) return;  // blank line: no record, nothing lost
  const char* data = buffer_.data() + begin;
  const std::size_t length = end - begin;
  // The bytes after the line stay inside buffer_, whose capacity keeps the padding
  // simdjson needs, so the line is parsed in place.
  const std::size_t capacity = buffer_.capacity() - begin;
  simdjson::ondemand::document document;
  auto error = parser_.iterate(simdjson::padded_string_view(data, length, capacity)).get(document);
  simdjson::ondemand::json_type type{};
  if (error == simdjson::SUCCESS) error = document.type().get(type);
  if (error == simdjson::SUCCESS && type != simdjson::ondemand::json_type::object) {
    report_bad("a record must be a JSON object");
    return;
  }
  if (error == simdjson::SUCCESS) {
    if (const char* problem = check_structure(document, std::string_view(data, length))) {
      report_bad(problem);
      return;
    }
  }
  if (error == simdjson::SUCCESS) {
    NdjsonLine line{document, std::string_view(data, length), line_number_, {}};
    error = on_line_(line);
    if (error != simdjson::SUCCESS && !line.problem.empty()) {
      report_bad(line.problem);
      return;
    }
  }
  if (error != simdjson::SUCCESS) report_bad(simdjson::error_message(error));
}

void NdjsonReader::feed(std::span<const char> bytes) {
  if (stopped_) return;
  const std::size_t needed = buffer_.size() + bytes.size() + simdjson::SIMDJSON_PADDING;
  if (buffer_.capacity() < needed) buffer_.reserve(needed * 2);
  buffer_.append(bytes.data(), bytes.size());
  std::size_t line_start = 0;
  while (!stopped_) {
    const std::size_t newline = std::string_view(buffer_).find('\n', line_start);
    if (newline == std::string_view::npos) break;
    if (discarding_) {
      discarding_ = false;  // the rest of an over-long line, already reported
    } else {
      process_line(line_start, newline);
    }
    line_start = newline + 1;
  }
  buffer_.erase(0, line_start);
  if (buffer_.size() > max_line_) {
    if (!discarding_) {
      ++line_number_;
      report_bad(fmt::format("line longer than {} bytes skipped", max_line_));
      discarding_ = true;
    }
    buffer_.clear();
  }
}

void NdjsonReader::finish() {
  if (!buffer_.empty() && !discarding_ && !stopped_) {
    if (buffer_.capacity() < buffer_.size() + simdjson::SIMDJSON_PADDING) {
      buffer_.reserve(buffer_.size() + simdjson::SIMDJSON_PADDING);
    }
    process_line(0, buffer_.size());
  }
  buffer_.clear();
  discarding_ = false;
}

}  // namespace tp
