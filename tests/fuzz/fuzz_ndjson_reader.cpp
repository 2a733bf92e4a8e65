// Fuzz target: the NDJSON reader, with a handler that walks record fields. Reading the
// bytes line by line (in two pieces, or at once) and reading their whole lines in one pass
// (feed_lines, or feed() taking what it holds at once: simdjson's parse_many) must judge every
// line alike: the same good lines, the same bad line numbers and messages. So must a pipe's
// reading on two threads (NdjsonStreamChunks), fed the same reads as one reader, over-long
// lines and pauses included. With a quick handler (which takes, without a parse, the lines
// it has seen good before: RecordShapes' place) every way must judge the lines alike too.
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "json/ndjson_chunks.hpp"
#include "json/ndjson_reader.hpp"

namespace {

struct Outcome {
  std::vector<std::string> events;
  std::uint64_t lines = 0;
  bool operator==(const Outcome&) const = default;
};

// Good lines seen so far: a quick handler takes a line again without a parse.
using Memo = std::set<std::string, std::less<>>;

std::string event_of(std::uint64_t number, std::string_view text) {
  return std::to_string(number) + " " + std::string(text);
}

simdjson::error_code walk_record(tp::NdjsonLine& line, Outcome& outcome) {
  std::uint64_t timestamp = 0;
  std::string_view kind;
  if (auto e = line.root["timestamp"].get_uint64().get(timestamp); e != simdjson::SUCCESS) return e;
  if (auto e = line.root["event"]["kind"].get_string().get(kind); e != simdjson::SUCCESS) return e;
  outcome.events.push_back(event_of(line.number, line.text));
  return simdjson::SUCCESS;
}

enum class Way { line_by_line, feed_lines, feed_at_once };

// line_by_line: feed() taking one line at a time; feed_lines: the bytes up to the last
// newline through feed_lines, the rest through feed; feed_at_once: feed() taking every
// whole line it holds in one pass.
Outcome read(std::string_view bytes, Way way, bool quick) {
  Outcome outcome;
  Memo memo;
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) {
        const simdjson::error_code error = walk_record(line, outcome);
        if (error == simdjson::SUCCESS) memo.emplace(line.text);
        return error;
      },
      [&](std::uint64_t number, std::string_view message) {
        outcome.events.push_back("bad " + std::to_string(number) + " " + std::string(message));
      });
  if (quick) {
    reader.set_quick_handler([&](std::string_view text, std::uint64_t number) {
      if (!memo.contains(text)) return false;
      outcome.events.push_back(event_of(number, text));
      return true;
    });
  }
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

// The reads of a pipe: sizes from the first byte, in turn 1 to 16 bytes and larger ones.
std::vector<std::size_t> read_sizes(std::string_view bytes) {
  const unsigned seed = bytes.empty() ? 0U : static_cast<unsigned char>(bytes[0]);
  return {1 + seed % 16, 1 + seed * 7 % 300, 64, 1 + seed % 5};
}

constexpr std::size_t stream_max_line = 100;

Outcome read_in_pieces(std::string_view bytes) {
  Outcome outcome;
  tp::NdjsonReader reader([&](tp::NdjsonLine& line) { return walk_record(line, outcome); },
                          [&](std::uint64_t number, std::string_view message) {
                            outcome.events.push_back("bad " + std::to_string(number) + " " + std::string(message));
                          },
                          false, stream_max_line);
  const std::vector<std::size_t> sizes = read_sizes(bytes);
  for (std::size_t at = 0, k = 0; at < bytes.size(); ++k) {
    const std::size_t size = std::min(sizes[k % sizes.size()], bytes.size() - at);
    reader.feed(bytes.substr(at, size));
    at += size;
  }
  reader.finish();
  outcome.lines = reader.lines();
  return outcome;
}

// The same reads through NdjsonStreamChunks: each worker writes "number text" lines (numbers
// within its chunk), put back in stream order and numbered in the stream here.
// With `quick`, each worker also takes the lines it has seen good before without a parse.
tp::ChunkHandler chunk_handler(bool quick) {
  auto memo = std::make_shared<Memo>();
  tp::ChunkLineHandler on_line = [memo](tp::NdjsonLine& line, tp::OutBuffer& out) {
    Outcome ignored;
    const simdjson::error_code error = walk_record(line, ignored);
    if (error == simdjson::SUCCESS) {
      memo->emplace(line.text);
      out.append(event_of(line.number, line.text));
      out.push_back('\n');  // line.text has no newline: the handler's own separator
    }
    return error;
  };
  if (!quick) return on_line;
  return {std::move(on_line), [memo](std::string_view text, std::uint64_t number, tp::OutBuffer& out) {
            if (!memo->contains(text)) return false;
            out.append(event_of(number, text));
            out.push_back('\n');
            return true;
          }};
}

Outcome read_on_threads(std::string_view bytes, bool quick) {
  Outcome outcome;
  const auto take_output = [&](std::string_view output) {
    for (std::size_t start = 0; start < output.size();) {
      const std::size_t end = output.find('\n', start);
      const std::string_view item = output.substr(start, end - start);
      const std::size_t space = item.find(' ');
      outcome.events.push_back(std::to_string(outcome.lines + std::stoull(std::string(item.substr(0, space)))) +
                               std::string(item.substr(space)));
      start = end + 1;
    }
  };
  tp::NdjsonChunkOptions options;
  options.chunk_size = 64;
  options.max_line = stream_max_line;
  tp::NdjsonStreamChunks chunks(
      {chunk_handler(quick), chunk_handler(!quick)},
      [&](tp::NdjsonChunk& chunk) {
        const std::string_view output = chunk.output.view();
        std::size_t written = 0;
        for (const tp::NdjsonChunk::BadLine& bad : chunk.bad_lines) {
          take_output(output.substr(written, bad.output_size - written));
          written = bad.output_size;
          outcome.events.push_back("bad " + std::to_string(outcome.lines + bad.line) + " " + bad.message);
        }
        take_output(output.substr(written));
        outcome.lines += chunk.lines;
        return true;
      },
      options);
  const std::vector<std::size_t> sizes = read_sizes(bytes);
  for (std::size_t at = 0, k = 0; at < bytes.size(); ++k) {
    const std::size_t size = std::min(sizes[k % sizes.size()], bytes.size() - at);
    if (!chunks.feed(bytes.substr(at, size), k * 4000)) std::abort();  // some lines wait past max_gather_us
    if (k % 5 == 4 && !chunks.catch_up()) std::abort();                // and the input pauses now and then
    at += size;
  }
  if (!chunks.finish()) std::abort();
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
  const Outcome reference = read(bytes, Way::line_by_line, false);
  for (const bool quick : {false, true}) {
    for (const Way way : {Way::line_by_line, Way::feed_lines, Way::feed_at_once}) {
      if (!(reference == read(bytes, way, quick))) std::abort();
    }
  }
  const Outcome pieces = read_in_pieces(bytes);
  if (!(pieces == read_on_threads(bytes, false)) || !(pieces == read_on_threads(bytes, true))) std::abort();
  return 0;
}
