#include <doctest/doctest.h>

#include <limits>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "json/ndjson_reader.hpp"

using namespace tp;

namespace {
std::string quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}
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
  int handled = 0;
  NdjsonReader* self = nullptr;
  NdjsonReader reader(
      [&](NdjsonLine&) {
        if (++handled == 2) self->stop();
        return simdjson::SUCCESS;
      },
      nullptr);
  self = &reader;
  reader.feed(std::string_view("{}\n{}\n{}\n{}\n"));
  reader.feed(std::string_view("{}\n"));
  reader.finish();
  CHECK(handled == 2);
  CHECK(reader.lines() == 2);
}
