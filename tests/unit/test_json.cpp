#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "json/ndjson_chunks.hpp"
#include "json/ndjson_reader.hpp"

using namespace tp;

namespace {
std::string quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// A reader whose handler calls stop() on its stop_at-th line.
struct StoppingReader {
  explicit StoppingReader(int stop_at)
      : reader(
            [this, stop_at](NdjsonLine&) {
              if (++handled == stop_at) reader.stop();
              return simdjson::SUCCESS;
            },
            nullptr) {}
  int handled = 0;
  NdjsonReader reader;
};
}  // namespace

TEST_CASE("JSON string escaping") {
  CHECK(quoted("plain") == "\"plain\"");
  CHECK(quoted("a\"b\\c") == R"("a\"b\\c")");
  CHECK(quoted("\n\r\t\b\f") == R"("\n\r\t\b\f")");
  CHECK(quoted(std::string_view("\x00\x1f", 2)) == R"("\u0000\u001f")");
  CHECK(quoted("\x7f") == "\"\x7f\"");
}

TEST_CASE("invalid UTF-8 becomes U+FFFD, valid UTF-8 passes through") {
  CHECK(quoted("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(quoted("\xff") == "\"" + fffd + "\"");
  CHECK(quoted("\xc3") == "\"" + fffd + "\"");                                   // truncated
  CHECK(quoted("\xc0\xaf") == "\"" + fffd + fffd + "\"");                        // overlong
  CHECK(quoted("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\"");             // surrogate
  CHECK(quoted("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  CHECK(quoted("a\xe2\x82z") == "\"a" + fffd + fffd + "z\"");
}

TEST_CASE("escaping reads back through simdjson wherever the special byte falls in a word") {
  // Strings long enough for the 8-byte copies, with one byte that needs care at each place.
  const std::vector<std::string> specials{"\x01", "\x1f",     "\"",           "\\", "\n",
                                          "\x7f", "\xc3\xa9", "\xe2\x82\xac", " ",  "~"};
  const auto escape = [](std::string_view text) {
    OutBuffer out;
    append_json_string(out, text);
    return std::string(out.view());
  };
  simdjson::dom::parser parser;
  for (const std::string& special : specials) {
    for (std::size_t at = 0; at < 26; ++at) {
      std::string text(25, 'a');
      for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i);
      text.insert(at, special);
      const std::string json = escape(text);
      std::string_view parsed;
      REQUIRE(parser.parse(json).get(parsed) == simdjson::SUCCESS);
      CHECK(parsed == text);
    }
  }
  std::string invalid(20, 'x');
  invalid[13] = '\x80';
  std::string_view parsed;
  REQUIRE(parser.parse(escape(invalid)).get(parsed) == simdjson::SUCCESS);
  CHECK(parsed == std::string(13, 'x') + "\xEF\xBF\xBD" + std::string(6, 'x'));
}

TEST_CASE("integers") {
  std::string out;
  append_uint(out, 0);
  out += ',';
  append_uint(out, std::numeric_limits<std::uint64_t>::max());
  out += ',';
  append_int(out, std::numeric_limits<std::int64_t>::min());
  out += ',';
  append_uint(out, 1234567890);
  CHECK(out == "0,18446744073709551615,-9223372036854775808,1234567890");
}

TEST_CASE("write_uint agrees with std::to_chars on every digit count and stays in its room") {
  std::vector<std::uint64_t> values{0, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t power = 1; power <= 10'000'000'000'000'000'000ULL; power *= 10) {
    values.insert(values.end(), {power - 1, power, power + 1, power * 9 / 10 + 7});
    if (power > std::numeric_limits<std::uint64_t>::max() / 10) break;
  }
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;  // splitmix64: values of every magnitude
  for (int i = 0; i < 200'000; ++i) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    values.push_back((z ^ (z >> 31U)) >> (static_cast<unsigned>(i) % 64U));
  }
  for (const std::uint64_t value : values) {
    std::array<char, 32> ours{};
    ours.fill('#');
    const char* end = write_uint(ours.data(), value);
    std::array<char, 24> expected{};
    const auto [expected_end, ec] = std::to_chars(expected.begin(), expected.end(), value);
    REQUIRE(ec == std::errc{});
    const std::string_view theirs(expected.data(), static_cast<std::size_t>(expected_end - expected.data()));
    REQUIRE(std::string_view(ours.data(), static_cast<std::size_t>(end - ours.data())) == theirs);
    REQUIRE(std::string_view(ours.data() + max_uint_digits, 12) == std::string_view("############"));
  }
}

TEST_CASE("JsonWriter puts commas where they belong") {
  std::string out;
  JsonWriter json(out);
  json.begin_object()
      .key("a")
      .uint(1)
      .key("b")
      .begin_array()
      .uint(2)
      .string("x")
      .begin_object()
      .end_object()
      .end_array();
  json.key("c").null().key("d").boolean(true).key("e").number(0.5).end_object();
  CHECK(out == R"({"a":1,"b":[2,"x",{}],"c":null,"d":true,"e":0.5})");
}

TEST_CASE("NDJSON reader: lines across chunks, CRLF, blank lines, bad lines with numbers") {
  std::vector<std::uint64_t> ports;
  std::vector<std::pair<std::uint64_t, std::string>> bad;
  NdjsonReader reader(
      [&](NdjsonLine& line) {
        std::uint64_t port = 0;
        const auto error = line.root["port"].get_uint64().get(port);
        if (error == simdjson::SUCCESS) ports.push_back(port);
        return error;
      },
      [&](std::uint64_t number, std::string_view message) { bad.emplace_back(number, std::string(message)); });
  const std::string input = "{\"port\":1}\r\n\n{\"port\":2}\n{bad json\n{\"no_port\":1}\n{\"port\":3}";
  for (const char c : input) reader.feed(std::string_view(&c, 1));
  reader.finish();
  CHECK(ports == std::vector<std::uint64_t>{1, 2, 3});
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].first == 4);
  CHECK(bad[1].first == 5);
  CHECK(reader.lines() == 6);
  CHECK(reader.bad_lines() == 2);
}

TEST_CASE("NDJSON reader: malformed JSON at any depth is a bad line; valid JSON of any shape is not") {
  std::vector<std::uint64_t> good;
  std::vector<std::uint64_t> bad;
  NdjsonReader reader(
      [&](NdjsonLine& line) {
        good.push_back(line.number);
        return simdjson::SUCCESS;
      },
      [&](std::uint64_t number, std::string_view) { bad.push_back(number); });
  const std::string input =
      R"({"a":{"b":}]})"
      "\n"  // 1 missing value, wrong bracket
      R"({"a":[1,]})"
      "\n"  // 2 trailing comma
      R"({"a":"\x"})"
      "\n"  // 3 bad escape
      R"({"a":01})"
      "\n"  // 4 leading zero
      R"({"a":tru})"
      "\n"  // 5 bad literal
      R"({"a":{"b":[1,{"c":[[]]}]}} x)"
      "\n"  // 6 text after
      R"({"a":{"b":[1,2,{"c":null}],"d":"\u00e9","e":1e300,"f":12345678901234567890,"g":-0.5E+3}})"
      "\n"
      R"({"t":true,"f":false,"n":null,"s":"","o":{},"l":[]})"
      "\n";
  reader.feed(std::string_view(input));
  reader.finish();
  CHECK(bad == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6});
  CHECK(good == std::vector<std::uint64_t>{7, 8});
}

TEST_CASE("NDJSON reader: strict mode throws with the line number; over-long lines are skipped") {
  NdjsonReader strict([](NdjsonLine&) { return simdjson::SUCCESS; }, nullptr, true);
  strict.feed(std::string_view("{}\n"));
  CHECK_THROWS_WITH_AS(strict.feed(std::string_view("nope\n")), doctest::Contains("line 2"), Error);

  std::uint64_t good = 0;
  std::uint64_t bad_line = 0;
  NdjsonReader limited(
      [&](NdjsonLine&) {
        ++good;
        return simdjson::SUCCESS;
      },
      [&](std::uint64_t n, std::string_view) { bad_line = n; }, false, 64);
  const std::string long_part(100, 'x');
  const std::string rest = long_part + "\n{}\n";
  limited.feed(std::string_view(long_part));
  limited.feed(std::string_view(rest));
  limited.finish();
  CHECK(good == 1);
  CHECK(bad_line == 1);
  CHECK(limited.lines() == 2);
}

TEST_CASE("NDJSON reader: stop() ends reading at once, in the middle of a chunk too") {
  StoppingReader stopping(2);
  stopping.reader.feed(std::string_view("{}\n{}\n{}\n{}\n"));
  stopping.reader.feed(std::string_view("{}\n"));
  stopping.reader.finish();
  CHECK(stopping.handled == 2);
  CHECK(stopping.reader.lines() == 2);
}

namespace {

// Lines of every shape a reader must judge alike however it reads them.
std::string awkward_ndjson() {
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += R"({"port":)" + std::to_string(i) + R"(,"event":{"kind":"Text","data":{"message":"é line )" +
            std::to_string(i) + "\"}}}\n";
    switch (i % 13) {
      case 0:
        text += "{\"a\":1}\r\n";
        break;  // CRLF
      case 1:
        text += "\n   \n\t\n";
        break;  // blank lines
      case 2:
        text += "{bad json\n";
        break;  // invalid
      case 3:
        text += "42\n";
        break;  // not an object
      case 4:
        text += "{\"a\":1}{\"b\":2}\n";
        break;  // two documents on a line
      case 5:
        text += "{\"a\":\n1}\n";
        break;  // one document over two lines
      case 6:
        text += "  {\"lead\":true}  \n";
        break;  // spaces around
      case 7:
        text += "{\"s\":\"\xff\"}\n";
        break;  // invalid UTF-8
      case 8:
        text += "{\"a\":[1,]}\n";
        break;  // trailing comma
      case 9:
        text += "{\"n\":12345678901234567890}\n";
        break;  // the largest integers
      case 10:
        text += "[1,2]\n";
        break;  // an array
      case 11:
        text += "{\"x\":\"unclosed\n";
        break;  // a string left open
      default:
        text += "{\"a\":{\"b\":}]}\n";
        break;  // nested error
    }
  }
  return text + R"({"last":"no newline"})";
}

struct ReadOutcome {
  std::string output;  // each good line's text, in order
  std::vector<std::pair<std::uint64_t, std::string>> bad;
  std::uint64_t lines = 0;
  bool operator==(const ReadOutcome&) const = default;
};

simdjson::error_code copy_line(NdjsonLine& line, std::string& out) {
  if (line.root["reject"].error() == simdjson::SUCCESS) {
    line.problem = "rejected by the handler";
    return simdjson::INCORRECT_TYPE;
  }
  out.append(line.text);
  out += '\n';
  return simdjson::SUCCESS;
}

// All of `input` through feed_lines (which needs SIMDJSON_PADDING readable bytes after the
// lines), then finish().
void feed_padded_lines(NdjsonReader& reader, std::string input) {
  const std::size_t size = input.size();
  input.append(simdjson::SIMDJSON_PADDING, ' ');
  reader.feed_lines(std::string_view(input.data(), size));
  reader.finish();
}

ReadOutcome read_line_by_line(std::string_view input) {
  ReadOutcome outcome;
  NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, outcome.output); },
                      [&](std::uint64_t n, std::string_view m) { outcome.bad.emplace_back(n, std::string(m)); });
  reader.feed(input);
  reader.finish();
  outcome.lines = reader.lines();
  return outcome;
}

struct TempNdjson {
  std::string path;
  int fd = -1;
  explicit TempNdjson(std::string_view content) {
    char name[] = "/tmp/tracepipe-chunks-XXXXXX";
    fd = ::mkstemp(name);
    path = name;
    REQUIRE(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  }
  TempNdjson(const TempNdjson&) = delete;
  TempNdjson& operator=(const TempNdjson&) = delete;
  ~TempNdjson() {
    ::close(fd);
    ::unlink(path.c_str());
  }
};

}  // namespace

TEST_CASE("NDJSON reader: whole lines at once (parse_many) judge every line as line by line does") {
  // Good lines of odd shapes first (the one-pass path takes them), then the bad ones.
  std::string input;
  for (int i = 0; i < 30; ++i) {
    input += "{\"a\":" + std::to_string(i) + "}\r\n\n  \t\n  {\"lead\":\"é\"}  \t\n{\"reject\":1}\n{}\n";
  }
  // Bad lines that simdjson's stage 1 passes (it fails a whole batch on bad UTF-8 or an open
  // string: the chunks test has those): the stream stops there, the rest goes line by line.
  input += "{\"a\":1}{\"b\":2}\n{\"a\":\n1}\n42\n" + input;
  const ReadOutcome expected = read_line_by_line(input);
  CHECK(expected.bad.size() > 20);
  ReadOutcome outcome;
  NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, outcome.output); },
                      [&](std::uint64_t n, std::string_view m) { outcome.bad.emplace_back(n, std::string(m)); });
  feed_padded_lines(reader, input);
  outcome.lines = reader.lines();
  CHECK(outcome == expected);
}

namespace {

std::vector<ChunkHandler> copying_handlers(unsigned threads) {
  std::vector<ChunkHandler> handlers;
  for (unsigned i = 0; i < threads; ++i) {
    handlers.emplace_back([](NdjsonLine& line, OutBuffer& out) {
      std::string text;
      const auto error = copy_line(line, text);
      out.append(text);
      return error;
    });
  }
  return handlers;
}

// Gathers the chunks handed back (by read_ndjson_chunks or NdjsonStreamChunks) as ReadOutcome.
NdjsonStreamChunks::OnChunk gather_into(ReadOutcome& outcome) {
  return [&outcome](NdjsonChunk& chunk) {
    for (const NdjsonChunk::BadLine& bad : chunk.bad_lines) {
      outcome.bad.emplace_back(outcome.lines + bad.line, bad.message);
    }
    outcome.output.append(chunk.output.data(), chunk.output.size());
    outcome.lines += chunk.lines;
    return true;
  };
}

}  // namespace

TEST_CASE("NDJSON reader: one rule for over-long lines, however they arrive") {
  // A line of 65 bytes with a limit of 64 is bad whether it comes in one feed, byte by byte,
  // or as one of many whole lines (feed_lines); one of 64 bytes is a line.
  const std::string over = "{\"m\":\"" + std::string(65 - 8, 'x') + "\"}";
  const std::string fits = "{\"m\":\"" + std::string(64 - 8, 'x') + "\"}";
  REQUIRE(over.size() == 65);
  REQUIRE(fits.size() == 64);
  const std::string input = "{}\n" + over + "\n" + fits + "\n{}\n";
  const auto read = [&](const auto& feeding) {
    std::vector<std::uint64_t> good;
    std::vector<std::pair<std::uint64_t, std::string>> bad;
    NdjsonReader reader(
        [&](NdjsonLine& line) {
          good.push_back(line.number);
          return simdjson::SUCCESS;
        },
        [&](std::uint64_t n, std::string_view message) { bad.emplace_back(n, std::string(message)); }, false, 64);
    feeding(reader);
    reader.finish();
    return std::pair{good, bad};
  };
  const auto whole = read([&](NdjsonReader& r) { r.feed(std::string_view(input)); });
  CHECK(whole.first == std::vector<std::uint64_t>{1, 3, 4});
  REQUIRE(whole.second.size() == 1);
  CHECK(whole.second[0] == std::pair<std::uint64_t, std::string>{2, "line longer than 64 bytes skipped"});
  CHECK(read([&](NdjsonReader& r) {
          for (const char c : input) r.feed(std::string_view(&c, 1));
        }) == whole);
  CHECK(read([&](NdjsonReader& r) {
          std::string padded = input;
          padded.reserve(input.size() + simdjson::SIMDJSON_PADDING);
          r.feed_lines(padded);
        }) == whole);
}

TEST_CASE("NDJSON chunks: a file that ends before its range did (it shrank) is an error, not an end" *
          doctest::test_suite("threads")) {
  const std::string input = "{}\n{}\n{}\n{}\n";
  const TempNdjson file(input);
  for (const unsigned threads : {1U, 2U}) {
    ReadOutcome outcome;
    NdjsonChunkOptions options{4, NdjsonReader::default_max_line};
    options.name = "shrunk.ndjson";
    CHECK_THROWS_WITH_AS(
        read_ndjson_chunks(file.fd, 0, input.size() + 100, copying_handlers(threads), gather_into(outcome), options),
        doctest::Contains("shrunk.ndjson: file truncated while read"), Error);
  }
}

TEST_CASE("NDJSON chunks: any chunk size and thread count reads the lines that reading line by line does" *
          doctest::test_suite("threads")) {
  const std::string input =
      awkward_ndjson() + "\n" + std::string(3000, ' ') + "{\"wide\":1}\n{\"reject\":2}\n" + awkward_ndjson();
  const ReadOutcome expected = read_line_by_line(input);
  const TempNdjson file(input);
  for (const std::size_t chunk_size : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64},
                                       std::size_t{333}, std::size_t{4096}, std::size_t{1} << 20U}) {
    for (const unsigned threads : {1U, 2U, 5U}) {
      CAPTURE(chunk_size);
      CAPTURE(threads);
      ReadOutcome outcome;
      read_ndjson_chunks(file.fd, 0, input.size(), copying_handlers(threads), gather_into(outcome),
                         {chunk_size, NdjsonReader::default_max_line});
      CHECK(outcome == expected);
    }
  }
}

TEST_CASE("NDJSON chunks: stopping hands back no later chunk; a handler's exception reaches the caller" *
          doctest::test_suite("threads")) {
  std::string input;
  for (int i = 0; i < 5000; ++i) input += "{\"n\":" + std::to_string(i) + "}\n";
  const TempNdjson file(input);
  const auto copy = [](NdjsonLine& line, OutBuffer& out) {
    out.append(line.text);
    return simdjson::SUCCESS;
  };
  int chunks = 0;
  read_ndjson_chunks(file.fd, 0, input.size(), {copy, copy}, [&](NdjsonChunk&) { return ++chunks < 3; },
                     {1024, NdjsonReader::default_max_line});
  CHECK(chunks == 3);

  const auto thrower = [](NdjsonLine& line, OutBuffer&) -> simdjson::error_code {
    if (line.text == "{\"n\":4000}") throw Error(ExitCode::bad_input, "line 4000 refused");
    return simdjson::SUCCESS;
  };
  std::uint64_t lines_before_error = 0;
  CHECK_THROWS_WITH_AS(read_ndjson_chunks(file.fd, 0, input.size(), {thrower, thrower},
                                          [&](NdjsonChunk& chunk) {
                                            lines_before_error += chunk.lines;
                                            return true;
                                          },
                                          {1024, NdjsonReader::default_max_line}),
                       "line 4000 refused", Error);
  CHECK(lines_before_error < 4001);
  CHECK(lines_before_error > 3900);
}

namespace {

// One NdjsonReader (max_line bytes at most) fed `input` in pieces of the given sizes (in
// turn), as the stream loop feeds what each read returns.
ReadOutcome read_in_pieces(std::string_view input, const std::vector<std::size_t>& pieces, std::size_t max_line) {
  ReadOutcome outcome;
  NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, outcome.output); },
                      [&](std::uint64_t n, std::string_view m) { outcome.bad.emplace_back(n, std::string(m)); }, false,
                      max_line);
  for (std::size_t at = 0, k = 0; at < input.size(); ++k) {
    const std::size_t size = std::min(pieces[k % pieces.size()], input.size() - at);
    reader.feed(input.substr(at, size));
    at += size;
  }
  reader.finish();
  outcome.lines = reader.lines();
  return outcome;
}

}  // namespace

TEST_CASE("NDJSON stream chunks: the lines, output and bad-line reports of one reader fed the same reads" *
          doctest::test_suite("threads")) {
  // Lines over max_line (200) cut at any point by the reads, one at the very end without its
  // newline, blank and bad lines, CRLF, multi-byte characters across read boundaries.
  const std::string long_line = "{\"long\":\"" + std::string(500, 'x') + "\"}\n";
  const std::string input = awkward_ndjson() + long_line + "{\"after\":1}\n" + long_line + long_line +
                            awkward_ndjson() + "{\"last\":" + std::string(300, '1') + "}";
  const std::vector<std::vector<std::size_t>> cuts = {{1},    {7, 1, 64},  {199, 3},         {201},
                                                      {4096}, {1U << 20U}, {13, 700, 2, 250}};
  for (const std::vector<std::size_t>& pieces : cuts) {
    const ReadOutcome expected = read_in_pieces(input, pieces, 200);
    CHECK(expected.bad.size() > 10);
    for (const std::size_t chunk_size : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, std::size_t{1} << 20U}) {
      for (const unsigned threads : {1U, 2U, 5U}) {
        CAPTURE(pieces.front());
        CAPTURE(chunk_size);
        CAPTURE(threads);
        ReadOutcome outcome;
        NdjsonChunkOptions options;
        options.chunk_size = chunk_size;
        options.max_line = 200;
        NdjsonStreamChunks chunks(copying_handlers(threads), gather_into(outcome), options);
        std::uint64_t now = 0;
        for (std::size_t at = 0, k = 0; at < input.size(); ++k) {
          const std::size_t size = std::min(pieces[k % pieces.size()], input.size() - at);
          REQUIRE(chunks.feed(input.substr(at, size), now += 3000));  // some pieces wait past max_gather_us
          if (k % 17 == 16) REQUIRE(chunks.catch_up());               // the input paused
          at += size;
        }
        REQUIRE(chunks.finish());
        CHECK(chunks.idle());
        CHECK(outcome == expected);
      }
    }
  }
}

TEST_CASE("NDJSON reader hands its pending line over to stream chunks (trace-csv, once its columns are known)" *
          doctest::test_suite("threads")) {
  ReadOutcome before;
  NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, before.output); },
                      [&](std::uint64_t n, std::string_view m) { before.bad.emplace_back(n, std::string(m)); }, false,
                      20);
  reader.feed(std::string_view("{\"a\":1}\n{\"b\":"));
  NdjsonReader::Pending pending = reader.take_pending();
  CHECK(pending.bytes == "{\"b\":");
  CHECK_FALSE(pending.skipping);
  reader.feed(std::string_view("{\"long\":\"0123456789abcdef"));  // past 20 bytes: reported, its rest skipped
  CHECK(before.bad.size() == 1);
  const NdjsonReader::Pending inside_long_line = reader.take_pending();
  CHECK(inside_long_line.skipping);
  CHECK(inside_long_line.bytes.empty());

  ReadOutcome after;
  NdjsonChunkOptions options;
  options.max_line = 20;
  NdjsonStreamChunks chunks(copying_handlers(2), gather_into(after), options);
  chunks.skip_rest_of_line();
  REQUIRE(chunks.feed("\"}\n{\"c\":2}\n", 0));
  REQUIRE(chunks.finish());
  CHECK(after.lines == 1);  // the long line was counted by the reader that reported it
  CHECK(after.bad.empty());
}

TEST_CASE("NDJSON stream chunks: read in place; stopping hands back nothing later; exceptions reach the caller" *
          doctest::test_suite("threads")) {
  std::string input;
  for (int i = 0; i < 5000; ++i) input += "{\"n\":" + std::to_string(i) + "}\n";
  NdjsonChunkOptions options;
  options.chunk_size = 1024;
  ReadOutcome outcome;
  {
    NdjsonStreamChunks chunks(copying_handlers(2), gather_into(outcome), options);
    for (std::size_t at = 0; at < input.size();) {
      const std::span<char> room = chunks.room(input.size() - at);
      CHECK(room.size() >= std::min<std::size_t>(input.size() - at, 65536));
      std::memcpy(room.data(), input.data() + at, room.size());
      REQUIRE(chunks.feed_room(room.size(), 0));
      at += room.size();
    }
    REQUIRE(chunks.finish());
  }
  CHECK(outcome == read_line_by_line(input));

  int handed_back = 0;
  NdjsonStreamChunks stopping(
      copying_handlers(2), [&](NdjsonChunk&) { return ++handed_back < 3; }, options);
  bool go_on = true;
  for (std::size_t at = 0; at < input.size() && go_on; at += 100) go_on = stopping.feed(input.substr(at, 100), 0);
  CHECK_FALSE(go_on);
  CHECK_FALSE(stopping.finish());
  CHECK(handed_back == 3);

  const auto thrower = [](NdjsonLine& line, OutBuffer&) -> simdjson::error_code {
    if (line.text == "{\"n\":4000}") throw Error(ExitCode::bad_input, "line 4000 refused");
    return simdjson::SUCCESS;
  };
  std::uint64_t lines_before_error = 0;
  const auto run = [&] {
    NdjsonStreamChunks chunks(
        {thrower, thrower},
        [&](NdjsonChunk& chunk) {
          lines_before_error += chunk.lines;
          return true;
        },
        options);
    for (std::size_t at = 0; at < input.size(); at += 100) chunks.feed(input.substr(at, 100), 0);
    chunks.finish();
  };
  CHECK_THROWS_WITH_AS(run(), "line 4000 refused", Error);
  CHECK(lines_before_error < 4001);
  CHECK(lines_before_error > 3900);
}

TEST_CASE("NDJSON reader: feed() taking its whole lines at once judges every line as line by line does") {
  const std::string input = awkward_ndjson() + "\n{\"reject\":1}\n" + awkward_ndjson();
  const ReadOutcome expected = read_line_by_line(input);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{100}, std::size_t{4096}, input.size()}) {
    CAPTURE(piece);
    ReadOutcome outcome;
    NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, outcome.output); },
                        [&](std::uint64_t n, std::string_view m) { outcome.bad.emplace_back(n, std::string(m)); });
    reader.whole_lines_from(1);
    for (std::size_t at = 0; at < input.size(); at += piece) reader.feed(std::string_view(input).substr(at, piece));
    reader.finish();
    outcome.lines = reader.lines();
    CHECK(outcome == expected);
  }
  // stop() inside the one pass ends reading at once.
  StoppingReader stopping(3);
  stopping.reader.whole_lines_from(1);
  stopping.reader.feed(std::string_view("{}\n{}\n{}\n{}\n{}\n"));
  stopping.reader.finish();
  CHECK(stopping.handled == 3);
  CHECK(stopping.reader.lines() == 3);
}

TEST_CASE("NDJSON reader: lines a quick handler takes keep their numbers; the rest are parsed as before") {
  // Two good lines in three are ones the quick handler vouches for ("q"): it must see them
  // with their numbers, in order with the parsed ones, and the handler of parsed lines must not.
  std::string input;
  for (int i = 0; i < 400; ++i) {
    input += i % 3 != 0 ? "{\"q\":" + std::to_string(i) + "}\n" : "{\"a\":" + std::to_string(i) + "}\r\n\n";
    if (i % 50 == 7) input += "{\"reject\":1}\n{\"a\":\n  \t\n";
  }
  const ReadOutcome expected = read_line_by_line(input);
  REQUIRE(expected.bad.size() > 10);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{333}, input.size()}) {
    for (const bool whole_lines : {false, true}) {
      CAPTURE(piece);
      CAPTURE(whole_lines);
      ReadOutcome outcome;
      std::uint64_t quick_lines = 0;
      NdjsonReader reader(
          [&](NdjsonLine& line) {
            CHECK(line.text.find("\"q\"") == std::string_view::npos);
            return copy_line(line, outcome.output);
          },
          [&](std::uint64_t n, std::string_view m) { outcome.bad.emplace_back(n, std::string(m)); });
      reader.set_quick_handler([&](std::string_view text, std::uint64_t number) {
        if (text.find("\"q\"") == std::string_view::npos) return false;
        CHECK(number == reader.lines());
        outcome.output.append(text);
        outcome.output += '\n';
        ++quick_lines;
        return true;
      });
      if (whole_lines) reader.whole_lines_from(1);
      for (std::size_t at = 0; at < input.size(); at += piece) reader.feed(std::string_view(input).substr(at, piece));
      reader.finish();
      outcome.lines = reader.lines();
      CHECK(outcome == expected);
      CHECK(quick_lines == 266);
    }
  }
}

TEST_CASE("NDJSON reader: whole lines a quick handler mostly leaves go through one parse_many pass") {
  std::string input;
  for (int i = 0; i < 1000; ++i) input += "{\"a\":" + std::to_string(i) + "}\n";
  const ReadOutcome expected = read_line_by_line(input);
  ReadOutcome outcome;
  std::uint64_t offered = 0;
  NdjsonReader reader([&](NdjsonLine& line) { return copy_line(line, outcome.output); }, nullptr);
  reader.set_quick_handler([&](std::string_view, std::uint64_t) {
    ++offered;
    return false;
  });
  feed_padded_lines(reader, input);
  outcome.lines = reader.lines();
  CHECK(outcome == expected);
  CHECK(offered == 256);  // the trial: after it, the rest in one pass
}

TEST_CASE("NDJSON reader: a line check, an over-long line handler and each line's end in the input") {
  // trace-ship's reading: a line that does not end with '}' is bad before any parse (a blank
  // one of spaces too); an over-long line that came whole is taken as a line, one cut is told
  // at its end with what was held of it; each handler knows where its line ends in the input.
  const std::string over = "{\"m\":\"" + std::string(60, 'x') + "\"}";
  const std::string input = "{}\n \n\r\n{\"a\":1} \n" + over + "\n{\"b\":2}\r\n" + over + "\n" + over;
  const auto read = [&](const auto& feeding) {
    std::vector<std::string> seen;
    NdjsonReader reader(
        [&](NdjsonLine& line) {
          seen.push_back(fmt::format("line {} {} {}", line.number, reader.line_end(), line.text.size()));
          return simdjson::SUCCESS;
        },
        [&](std::uint64_t n, std::string_view message) { seen.push_back(fmt::format("bad {} {}", n, message)); }, false,
        64);
    reader.set_line_check([](std::string_view text) {
      return !text.empty() && text.back() != '}' ? std::string_view("no }") : std::string_view();
    });
    reader.set_over_long_handler([&](std::string_view start, bool whole) {
      seen.push_back(fmt::format("over {} {} {} {}", reader.lines(), reader.line_end(), whole, start.front()));
      return whole;
    });
    feeding(reader);
    reader.finish();
    return seen;
  };
  const std::vector<std::string> at_once{"line 1 3 2",        "bad 2 no }",    "bad 4 no }",
                                         "over 5 85 true {",  "line 5 85 68",  "line 6 94 7",
                                         "over 7 163 true {", "line 7 163 68", "over 8 231 false {"};
  CHECK(read([&](NdjsonReader& r) { r.feed(std::string_view(input)); }) == at_once);
  CHECK(read([&](NdjsonReader& r) {
          r.whole_lines_from(1);
          r.feed(std::string_view(input));
        }) == at_once);
  const std::vector<std::string> byte_by_byte{"line 1 3 2",        "bad 2 no }",  "bad 4 no }",
                                              "over 5 85 false {", "line 6 94 7", "over 7 163 false {",
                                              "over 8 231 false {"};
  CHECK(read([&](NdjsonReader& r) {
          for (const char c : input) r.feed(std::string_view(&c, 1));
        }) == byte_by_byte);
}
