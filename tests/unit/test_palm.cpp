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
  std::optional<ParseError> error;
};

Result parse(const Bytes& stream, std::size_t chunk, std::size_t max = default_max_message_size) {
  Parser parser(max);
  Result result;
  for (std::size_t i = 0; i < stream.size() && !result.error; i += chunk) {
    result.error = parser.feed(std::span(stream).subspan(i, std::min(chunk, stream.size() - i)),
                               [&](const Message& m) { result.messages.push_back(m); });
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

TEST_CASE("every violation is an error at the right offset, after the good messages") {
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
  Bytes too_small{1, 0, 0, 0, 0, 7, 0};
  Bytes version = text_message("x");
  version[0] = 2;
  const std::vector<Case> cases{
      {"version", version, 0, "version 2.0"},
      {"small", too_small, 2, "smaller"},
      {"past end", wrap(past_end), 14, "past the end"},
      {"after end", wrap(after_end), 21, "after the end"},
      {"data first", wrap(data_first), 6, "before the attributes"},
      {"mixed", wrap(mixed), 26, "binary message has a text part"},
      {"fixed length", wrap(bad_length), 14, "must be 1 bytes"},
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
