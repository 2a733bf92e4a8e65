// Fuzz target: the NDJSON reader, with a handler that walks record fields. Reading the
// bytes line by line (in two pieces, or at once) and reading their whole lines in one pass
// (feed_lines, or feed() taking what it holds at once: simdjson's parse_many) must judge every
// line alike: the same good lines, the same bad line numbers and messages.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "json/ndjson_reader.hpp"

namespace {

struct Outcome {
  std::vector<std::string> events;
  std::uint64_t lines = 0;
  bool operator==(const Outcome&) const = default;
};

simdjson::error_code walk_record(tp::NdjsonLine& line, Outcome& outcome) {
  std::uint64_t timestamp = 0;
  std::string_view kind;
  if (auto e = line.root["timestamp"].get_uint64().get(timestamp); e != simdjson::SUCCESS) return e;
  if (auto e = line.root["event"]["kind"].get_string().get(kind); e != simdjson::SUCCESS) return e;
  outcome.events.push_back(std::to_string(line.number) + " " + std::string(line.text));
  return simdjson::SUCCESS;
}

enum class Way { line_by_line, feed_lines, feed_at_once };

// line_by_line: feed() taking one line at a time; feed_lines: the bytes up to the last
// newline through feed_lines, the rest through feed; feed_at_once: feed() taking every
// whole line it holds in one pass.
Outcome read(std::string_view bytes, Way way) {
  Outcome outcome;
  tp::NdjsonReader reader([&](tp::NdjsonLine& line) { return walk_record(line, outcome); },
                          [&](std::uint64_t number, std::string_view message) {
                            outcome.events.push_back("bad " + std::to_string(number) + " " + std::string(message));
                          });
  reader.whole_lines_from(way == Way::feed_at_once ? 1 : ~std::size_t{0});
  std::size_t fed = 0;
  std::string padded;
  if (way == Way::feed_lines) {
    fed = bytes.rfind('\n') + 1;  // 0 without a newline
    padded.reserve(fed + simdjson::SIMDJSON_PADDING);
    padded.assign(bytes.substr(0, fed));
    if (fed != 0) reader.feed_lines(padded);
  }
  reader.feed(bytes.substr(fed));
  reader.finish();
  outcome.lines = reader.lines();
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::uint64_t good = 0;
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) -> simdjson::error_code {
        Outcome ignored;
        const simdjson::error_code error = walk_record(line, ignored);
        if (error == simdjson::SUCCESS) ++good;
        return error;
      },
      [](std::uint64_t, std::string_view) {}, false, 4096);
  const std::size_t half = size / 2;
  reader.feed(bytes.substr(0, half));
  reader.feed(bytes.substr(half));
  reader.finish();
  if (good + reader.bad_lines() > reader.lines()) std::abort();
  const Outcome reference = read(bytes, Way::line_by_line);
  if (!(reference == read(bytes, Way::feed_lines)) || !(reference == read(bytes, Way::feed_at_once))) std::abort();
  return 0;
}
