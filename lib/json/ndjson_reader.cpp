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

void NdjsonReader::process_line(std::size_t begin, std::size_t end) {
  ++line_number_;
  if (end > begin && buffer_[end - 1] == '\r') --end;
  std::size_t first = begin;
  while (first < end && (buffer_[first] == ' ' || buffer_[first] == '\t')) ++first;
  if (first == end) return;  // blank line: no record, nothing lost
  const char* data = buffer_.data() + begin;
  const std::size_t length = end - begin;
  // One parse, in place: the bytes after the line stay inside buffer_, whose capacity keeps
  // the padding simdjson needs. The DOM parser checks every value (stage 2; integers must
  // fit 64 bits), not only what a handler reads, as On-Demand would (skipping a value there
  // merely balances brackets, so {"a":{"b":}]} would pass).
  simdjson::dom::element root;
  auto error = parser_.parse(data, length, false).get(root);
  simdjson::dom::object object;
  if (error == simdjson::SUCCESS && root.get_object().get(object) != simdjson::SUCCESS) {
    report_bad("a record must be a JSON object");
    return;
  }
  if (error == simdjson::SUCCESS) {
    NdjsonLine line{object, std::string_view(data, length), line_number_, {}};
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
