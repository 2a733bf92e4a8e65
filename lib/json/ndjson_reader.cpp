#include "json/ndjson_reader.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace tp {

NdjsonReader::NdjsonReader(LineHandler on_line, BadLineHandler on_bad_line, bool strict, std::size_t max_line)
    : on_line_(std::move(on_line)), on_bad_line_(std::move(on_bad_line)), max_line_(max_line), strict_(strict) {}

void NdjsonReader::report_bad(std::string_view message) {
  ++bad_lines_;
  if (strict_) throw Error(ExitCode::bad_input, fmt::format("line {}: {}", line_number_, message));
  if (on_bad_line_) on_bad_line_(line_number_, message);
}

// On-Demand parses lazily and trusts the nesting it is given: walk the top-level object
// once (skipping each value checks its nesting) so that handlers may use any access,
// and reject text after the object. Returns why the line is bad, or nullptr.
namespace {

// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (RFC 8259 section 6), trailing blanks allowed.
bool is_json_number(std::string_view token) noexcept {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' || token.back() == '\r' || token.back() == '\n')) {
    token.remove_suffix(1);
  }
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
    return i - start;
  };
  if (i < token.size() && token[i] == '-') ++i;
  if (i < token.size() && token[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < token.size() && token[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == token.size();
}

simdjson::error_code check_value(simdjson::ondemand::value value, bool check_keys);

// A member: its key and its value. Keys are checked (by unescaping) only on lines that
// hold a backslash at all: a key without one cannot have a bad escape, and unescaping
// every key would cost a third of the reader's speed.
simdjson::error_code check_field(
    simdjson::simdjson_result<simdjson::ondemand::field> result,  // NOLINT(misc-no-recursion)
    bool check_keys) {
  simdjson::ondemand::field field;
  if (auto error = std::move(result).get(field); error != simdjson::SUCCESS) return error;
  if (check_keys) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key); error != simdjson::SUCCESS) return error;
  }
  return check_value(field.value(), check_keys);
}

// Walks every value: On-Demand only looks at what is asked for, and skipping a value
// merely balances brackets, so "{"a":{"b":}]}" would pass a walk of the top level alone.
simdjson::error_code check_value(simdjson::ondemand::value value, bool check_keys) {  // NOLINT(misc-no-recursion)
  simdjson::ondemand::json_type type{};
  if (auto error = value.type().get(type); error != simdjson::SUCCESS) return error;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object object;
      if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) return error;
      for (auto field : object) {
        if (auto error = check_field(field, check_keys); error != simdjson::SUCCESS) return error;
      }
      return simdjson::SUCCESS;
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array array;
      if (auto error = value.get_array().get(array); error != simdjson::SUCCESS) return error;
      for (auto item : array) {
        simdjson::ondemand::value element;
        if (auto error = item.get(element); error != simdjson::SUCCESS) return error;
        if (auto error = check_value(element, check_keys); error != simdjson::SUCCESS) return error;
      }
      return simdjson::SUCCESS;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view text;
      return value.get_string().get(text);
    }
    case simdjson::ondemand::json_type::number:
      // The grammar, not a conversion: 1e400 and 30-digit integers are valid JSON.
      return is_json_number(value.raw_json_token()) ? simdjson::SUCCESS : simdjson::NUMBER_ERROR;
    case simdjson::ondemand::json_type::boolean: {
      bool flag = false;
      return value.get_bool().get(flag);
    }
    case simdjson::ondemand::json_type::null: {
      bool null = false;
      const auto error = value.is_null().get(null);
      return error != simdjson::SUCCESS ? error : null ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

}  // namespace

const char* NdjsonReader::check_structure(simdjson::ondemand::document& document, std::string_view line) {
  const bool check_keys = line.find('\\') != std::string_view::npos;
  simdjson::ondemand::object object;
  if (auto error = document.get_object().get(object); error != simdjson::SUCCESS) return simdjson::error_message(error);
  for (auto field : object) {
    if (auto error = check_field(field, check_keys); error != simdjson::SUCCESS) return simdjson::error_message(error);
  }
  if (!document.is_alive()) return "malformed JSON";
  if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) return "text after the JSON object";
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
