#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "palm/parser.hpp"
#include "palm/records.hpp"

using namespace tp;
using namespace tp::palm;
using Bytes = std::vector<std::uint8_t>;

namespace {

void put16(Bytes& b, unsigned v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8U));
  b.push_back(static_cast<std::uint8_t>(v));
}
void put32(Bytes& b, std::uint32_t v) {
  put16(b, v >> 16U);
  put16(b, v & 0xFFFFU);
}
void param(Bytes& b, std::uint8_t op, const Bytes& data) {
  b.push_back(op);
  put16(b, static_cast<unsigned>(data.size()));
  b.insert(b.end(), data.begin(), data.end());
}
Bytes attributes(unsigned module, std::uint8_t kind) {
  Bytes a;
  put16(a, module);
  put16(a, 0);
  a.push_back(kind);
  return a;
}
Bytes wrap(const Bytes& body, std::uint8_t major = 1) {
  Bytes m{major, 0};
  put32(m, static_cast<std::uint32_t>(6 + body.size()));
  m.insert(m.end(), body.begin(), body.end());
  return m;
}
Bytes text_message(const std::string& text, std::uint8_t kind = 0) {
  Bytes body;
  param(body, 1, attributes(0x0200, kind));
  param(body, 5, Bytes(text.begin(), text.end()));
  param(body, 0, {});
  return wrap(body);
}

struct Result {
  std::vector<Message> messages;
  std::vector<ParseError> skipped;
  std::optional<ParseError> error;
};

Result parse(const Bytes& stream, std::size_t chunk, std::size_t max = default_max_message_size) {
  Parser parser(max);
  Result result;
  for (std::size_t i = 0; i < stream.size() && !result.error; i += chunk) {
    result.error = parser.feed(
        std::span(stream).subspan(i, std::min(chunk, stream.size() - i)),
        [&](const Message& m) { result.messages.push_back(m); },
        [&](const ParseError& e) { result.skipped.push_back(e); });
  }
  if (!result.error) result.error = parser.finish();
  return result;
}

}  // namespace

TEST_CASE("messages decode the same whatever the split") {
  Bytes stream = text_message("hello");
  Bytes full;
  param(full, 1, attributes(0x8000, 1));
  param(full, 2, {4});
  param(full, 3, {0, 0, 1, 0});
  param(full, 4, {0, 0, 0, 9});
  param(full, 6, {0, 1, 0, 0});
  param(full, 0x80, {1, 2, 3});
  param(full, 42, {});
  param(full, 5, {'a', 'b'});
  param(full, 0, {});
  const Bytes second = wrap(full);
  stream.insert(stream.end(), second.begin(), second.end());
  for (const std::size_t chunk : {stream.size(), std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{29}}) {
    const Result r = parse(stream, chunk);
    REQUIRE_FALSE(r.error);
    REQUIRE(r.messages.size() == 2);
    CHECK(r.messages[0].data == "hello");
    CHECK(r.messages[0].module == 0x0200);
    const Message& m = r.messages[1];
    CHECK(m.kind == TraceKind::text_line);
    CHECK(m.indent == 4);
    CHECK(m.process_id == 256);
    CHECK(m.thread_id == 9);
    CHECK(m.timestamp == 65536);
    CHECK(m.skipped_parameters == 2);
    CHECK(m.offset == text_message("hello").size());
  }
}

TEST_CASE("a message breaking a rule is skipped at the right offset; the good ones around it arrive") {
  struct Case {
    const char* name;
    Bytes message;
    std::uint64_t offset;
    const char* text;
  };
  Bytes past_end;
  param(past_end, 1, attributes(1, 0));
  past_end.insert(past_end.end(), {5, 0, 50, 'a'});
  Bytes after_end;
  param(after_end, 1, attributes(1, 0));
  param(after_end, 5, {'a'});
  param(after_end, 0, {});
  after_end.push_back(0);
  Bytes data_first;
  param(data_first, 5, {'a'});
  param(data_first, 1, attributes(1, 0));
  param(data_first, 0, {});
  Bytes mixed;
  param(mixed, 1, attributes(1, 2));
  param(mixed, 5, {1});
  param(mixed, 1, attributes(1, 0));
  param(mixed, 5, {'a'});
  param(mixed, 0, {});
  Bytes bad_length;
  param(bad_length, 1, attributes(1, 0));
  param(bad_length, 2, {1, 2});
  param(bad_length, 5, {'a'});
  param(bad_length, 0, {});
  Bytes bad_kind;
  param(bad_kind, 1, attributes(1, 7));
  param(bad_kind, 5, {'a'});
  param(bad_kind, 0, {});
  Bytes no_end;
  param(no_end, 1, attributes(1, 0));
  param(no_end, 5, {'a'});
  Bytes no_data;
  param(no_data, 1, attributes(1, 0));
  param(no_data, 0, {});
  Bytes cut_header;
  param(cut_header, 1, attributes(1, 0));
  cut_header.insert(cut_header.end(), {5, 0});
  const std::vector<Case> cases{
      {"past end", wrap(past_end), 14, "past the end"},
      {"after end", wrap(after_end), 21, "after the end"},
      {"data first", wrap(data_first), 6, "before the attributes"},
      {"mixed", wrap(mixed), 26, "binary message has a text part"},
      {"fixed length", wrap(bad_length), 14, "must be 1 bytes"},
      {"unknown kind", wrap(bad_kind), 13, "unknown trace kind 7"},
      {"no end", wrap(no_end), 18, "no end-of-message"},
      {"no data", wrap(no_data), 14, "without attributes (1) and trace data (5)"},
      {"cut parameter header", wrap(cut_header), 14, "cut off"},
  };
  const Bytes good = text_message("good");
  const Bytes after = text_message("after", 1);
  for (const Case& c : cases) {
    Bytes stream = good;
    stream.insert(stream.end(), c.message.begin(), c.message.end());
    stream.insert(stream.end(), after.begin(), after.end());
    stream.insert(stream.end(), good.begin(), good.end());
    for (const std::size_t chunk : {stream.size(), std::size_t{1}, std::size_t{5}}) {
      const Result r = parse(stream, chunk, 64);
      CHECK_MESSAGE(!r.error, c.name);
      REQUIRE_MESSAGE(r.skipped.size() == 1, c.name);
      CHECK_MESSAGE(r.skipped[0].offset == good.size() + c.offset, c.name << ": " << r.skipped[0].message);
      CHECK_MESSAGE(r.skipped[0].message.find(c.text) != std::string::npos, c.name << ": " << r.skipped[0].message);
      REQUIRE_MESSAGE(r.messages.size() == 3, c.name);
      CHECK(r.messages[0].data == "good");
      CHECK(r.messages[1].data == "after");
      CHECK(r.messages[1].offset == good.size() + c.message.size());
      CHECK(r.messages[2].data == "good");
    }
  }
}

TEST_CASE("only input that cannot be framed stops the stream, at the right offset") {
  Bytes too_small{1, 0, 0, 0, 0, 7, 0};
  Bytes version = text_message("x");
  version[0] = 2;
  struct Case {
    const char* name;
    Bytes message;
    std::uint64_t offset;
    const char* text;
  };
  const std::vector<Case> cases{
      {"version", version, 0, "version 2.0"},
      {"small", too_small, 2, "smaller"},
      {"oversized", text_message(std::string(100, 'x')), 2, "over the limit"},
  };
  const Bytes good = text_message("good");
  for (const Case& c : cases) {
    Bytes stream = good;
    stream.insert(stream.end(), c.message.begin(), c.message.end());
    for (const std::size_t chunk : {stream.size(), std::size_t{1}}) {
      const Result r = parse(stream, chunk, 64);
      REQUIRE_MESSAGE(r.error, c.name);
      CHECK_MESSAGE(r.messages.size() == 1, c.name);
      CHECK_MESSAGE(r.error->offset == good.size() + c.offset, c.name << ": " << r.error->message);
      CHECK_MESSAGE(r.error->message.find(c.text) != std::string::npos, c.name << ": " << r.error->message);
    }
  }
  const Bytes cut(good.begin(), good.end() - 2);
  const Result truncated = parse(cut, 5);
  REQUIRE(truncated.error);
  CHECK(truncated.error->offset == cut.size());
}

TEST_CASE("ambiguous messages: the plausible reading, counted") {
  // One attributes parameter of kind 1 before two text parts: one text split in two, the
  // line break at its end.
  Bytes split_line;
  param(split_line, 1, attributes(0x0200, 1));
  param(split_line, 5, {'a', 'b'});
  param(split_line, 5, {'c', 'd'});
  param(split_line, 0, {});
  // A kind-1 part, then new attributes of kind 0 and a part: the break goes between them.
  Bytes inner_break;
  param(inner_break, 1, attributes(0x0200, 1));
  param(inner_break, 5, {'a', 'b'});
  param(inner_break, 1, attributes(0x0200, 0));
  param(inner_break, 5, {'c', 'd'});
  param(inner_break, 0, {});
  // Repeated optional parameters: the last value counts; attributes naming another module:
  // the first module stays.
  Bytes repeated;
  param(repeated, 1, attributes(0x0200, 0));
  param(repeated, 2, {1});
  param(repeated, 2, {3});
  param(repeated, 3, {0, 0, 0, 1});
  param(repeated, 3, {0, 0, 0, 2});
  param(repeated, 5, {'x'});
  param(repeated, 1, attributes(0x0300, 0));
  param(repeated, 5, {'y'});
  param(repeated, 0, {});
  Bytes stream = wrap(split_line);
  for (const Bytes& b : {wrap(inner_break), wrap(repeated), text_message("after")})
    stream.insert(stream.end(), b.begin(), b.end());
  const Result r = parse(stream, 3);
  REQUIRE_FALSE(r.error);
  CHECK(r.skipped.empty());
  REQUIRE(r.messages.size() == 4);
  CHECK(r.messages[0].data == "abcd");
  CHECK(r.messages[0].kind == TraceKind::text_line);
  CHECK(r.messages[0].line_break_readings == 1);
  CHECK(r.messages[1].data == "ab\ncd");
  CHECK(r.messages[1].kind == TraceKind::text);
  CHECK(r.messages[1].line_break_readings == 1);
  CHECK(r.messages[2].data == "xy");
  CHECK(r.messages[2].indent == 3);
  CHECK(r.messages[2].process_id == 2);
  CHECK(r.messages[2].module == 0x0200);
  CHECK(r.messages[2].repeated_parameters == 3);
  CHECK(r.messages[2].line_break_readings == 0);
  CHECK(r.messages[3].data == "after");
}

TEST_CASE("records: Text with the Palm fields, Raw for binary, module names") {
  Message m;
  m.module = 0x0200;
  m.kind = TraceKind::text_line;
  m.data = std::string("hi\0", 3);
  m.indent = 2;
  OutBuffer out;
  append_record(out, m, Connection{3, "127.0.0.1:5"}, 99, Format::ndjson);
  CHECK(out.view() ==
        R"({"timestamp":99,"port":0,"event":{"kind":"Text","data":{"message":"hi","module":512,"line_break":true,)"
        R"("indent":2}},"source":"palm","clock":"us","connection":3,"peer":"127.0.0.1:5"})"
        "\n");
  m.kind = TraceKind::binary;
  m.data = std::string("\x01\x02", 2);
  OutBuffer raw;
  append_record(raw, m, Connection{3, "p"}, 1, Format::ndjson);
  CHECK(raw.view().find(R"("kind":"Raw","data":{"data":[1,2],"module":512,"indent":2})") != std::string_view::npos);
  CHECK(parse_module_list("dm,0x8000,5") == std::vector<std::uint16_t>{0x0200, 0x8000, 5});
  CHECK_THROWS_AS(parse_module_list("0x10000"), Error);
  CHECK_THROWS_AS(parse_module_list("bogus"), Error);
}
