#include <doctest/doctest.h>
#include <fmt/format.h>
#include <poll.h>
#include <simdjson.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "analysis/live_stats.hpp"
#include "analysis/observation.hpp"
#include "core/byte_source.hpp"
#include "core/error.hpp"
#include "json/ndjson_reader.hpp"
#include "records/record_shapes.hpp"
#include "serve/admission.hpp"
#include "serve/broadcast.hpp"
#include "serve/child_process.hpp"
#include "serve/handshake.hpp"
#include "serve/input_pump.hpp"
#include "serve/origin_policy.hpp"
#include "serve/protocol.hpp"
#include "serve/run_statistics.hpp"
#include "serve/sha1.hpp"
#include "serve/websocket_frame.hpp"

using namespace tp;
using namespace tp::serve;

namespace {

std::string hex(const Sha1Digest& digest) {
  std::string out;
  for (const auto byte : digest) out += fmt::format("{:02x}", byte);
  return out;
}

// A client frame as a browser sends it: masked.
std::vector<std::uint8_t> client_frame(unsigned opcode, std::string_view payload, bool fin = true,
                                       std::uint8_t first_extra = 0) {
  std::vector<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>((fin ? 0x80U : 0U) | opcode | first_extra));
  const std::size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<std::uint8_t>(0x80U | n));
  } else if (n <= 0xFFFF) {
    out.push_back(0x80U | 126U);
    out.push_back(static_cast<std::uint8_t>(n >> 8U));
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    out.push_back(0x80U | 127U);
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(n >> shift));
  }
  const std::array<std::uint8_t, 4> mask{0x37, 0xfa, 0x21, 0x3d};
  out.insert(out.end(), mask.begin(), mask.end());
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(payload[i]) ^ mask[i % 4]);
  return out;
}

struct Parsed {
  std::vector<std::pair<Opcode, std::string>> frames;
  std::optional<FrameViolation> violation;
};

Parsed parse_frames(const std::vector<std::uint8_t>& bytes, std::size_t chunk = 0, std::size_t limit = 1024) {
  FrameParser parser(limit);
  Parsed parsed;
  if (chunk == 0) chunk = std::max<std::size_t>(1, bytes.size());
  for (std::size_t i = 0; i < bytes.size() && !parsed.violation; i += chunk) {
    parsed.violation = parser.feed(
        std::span(bytes).subspan(i, std::min(chunk, bytes.size() - i)),
        [&](const ClientFrame& frame) { parsed.frames.emplace_back(frame.opcode, std::string(frame.payload)); });
  }
  return parsed;
}

std::vector<std::uint8_t> concat(std::initializer_list<std::vector<std::uint8_t>> parts) {
  std::vector<std::uint8_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

RecordRoute classify(std::string_view line, std::string* problem_out = nullptr) {
  static KindTable kinds;
  RecordClassifier classifier(kinds);
  std::optional<RecordRoute> route;
  std::string problem;
  NdjsonReader reader(
      [&](NdjsonLine& l) {
        route = classifier.classify(l.root, problem);
        return simdjson::SUCCESS;
      },
      [](std::uint64_t, std::string_view) {});
  const std::string text = std::string(line) + "\n";
  reader.feed(std::string_view(text));
  if (problem_out != nullptr) *problem_out = problem;
  if (!route) throw std::runtime_error(problem.empty() ? "not classified" : problem);
  return *route;
}

bool rejected(std::string_view line) {
  try {
    classify(line);
    return false;
  } catch (const std::runtime_error&) {
    return true;
  }
}

}  // namespace

TEST_CASE("sha1 and base64 known answers; RFC 6455 accept key") {
  CHECK(hex(sha1("")) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(hex(sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex(sha1(std::string(1000, 'a'))) == "291e9a6c66994949b57ba5e650361e98fc36b1ba");
  CHECK(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(websocket_accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 1.3
}

TEST_CASE("tokens, queries and bearer headers") {
  CHECK(constant_time_equal("secret", "secret"));
  CHECK_FALSE(constant_time_equal("secret", "secreT"));
  CHECK_FALSE(constant_time_equal("secret", "secret2"));
  CHECK_FALSE(constant_time_equal("", "x"));
  CHECK(constant_time_equal("", ""));
  CHECK(query_parameter("/ws?token=abc", "token") == "abc");
  CHECK(query_parameter("/ws?x=1&token=a%2Bb%20c+d", "token") == "a+b c d");
  CHECK(query_parameter("/ws?token", "token") == "");
  CHECK_FALSE(query_parameter("/ws", "token").has_value());
  CHECK_FALSE(query_parameter("/ws?tokens=1", "token").has_value());
  CHECK(query_parameter("/ws?token=%zz", "token") == "%zz");
  CHECK(target_path("/ws?token=1") == "/ws");
  CHECK(bearer_token("Bearer abc") == "abc");
  CHECK(bearer_token("bearer   abc  ") == "abc");
  CHECK_FALSE(bearer_token("Basic abc").has_value());
  CHECK_FALSE(bearer_token("Bear").has_value());
}

TEST_CASE("origin policy: loopback pages on any port and file:// by default, nothing else") {
  const OriginPolicy local(OriginPolicyConfig{"127.0.0.1", 9229, {}, {}, false});
  CHECK(local.allows(std::nullopt));  // not a browser
  CHECK(local.allows("http://127.0.0.1:9229"));
  CHECK(local.allows("http://localhost:9229"));
  CHECK(local.allows("HTTP://LOCALHOST:9229"));
  CHECK(local.allows("http://[::1]:9229"));
  CHECK(local.allows("http://localhost:5173"));  // the Callisto client's development page
  CHECK(local.allows("http://localhost"));
  CHECK(local.allows("https://127.0.0.2:8443"));
  CHECK(local.allows("file://"));  // the packaged Callisto app
  CHECK_FALSE(local.allows("http://evil.example:9229"));
  CHECK_FALSE(local.allows("http://localhost.evil.example"));
  CHECK_FALSE(local.allows("http://127.0.0.1.evil.example"));
  CHECK_FALSE(local.allows("http://localhost@evil.example"));
  CHECK_FALSE(local.allows("http://localhost:9229/x"));
  CHECK_FALSE(local.allows("http://localhost:92a9"));
  CHECK_FALSE(local.allows("ftp://localhost"));
  CHECK_FALSE(local.allows("null"));  // sandboxed frames anywhere send it
  CHECK_FALSE(local.allows("file://evil.example"));
}

TEST_CASE("origin policy: the allowlist, written as users write it") {
  const OriginPolicy listed(OriginPolicyConfig{"10.0.0.5", 80, {"https://dash.example/", "FILE://"}, {}, false});
  CHECK(listed.allows("http://10.0.0.5:80"));
  CHECK(listed.allows("https://dash.example"));
  CHECK(listed.allows("file://"));
  CHECK_FALSE(listed.allows("https://dash.example.evil"));
  CHECK(OriginPolicy(OriginPolicyConfig{"::1", 1, {"*"}, {}, false}).allows("http://anything"));
  CHECK(normalise_origin("file://") == "file://");
  CHECK(normalise_origin("file:///") == "file://");
  CHECK(normalise_origin("HTTPS://Dash.Example//") == "https://dash.example");
}

TEST_CASE("origin policy: this host's names are origins only with a token") {
  const OriginPolicyConfig open{"0.0.0.0", 9229, {}, {"10.0.0.5", "bench"}, false};
  CHECK_FALSE(OriginPolicy(open).allows("http://10.0.0.5:9229"));
  CHECK(OriginPolicy(open).allows_host("10.0.0.5:9229"));  // a non-browser client from elsewhere
  OriginPolicyConfig with_token = open;
  with_token.host_names_are_origins = true;
  CHECK(OriginPolicy(with_token).allows("http://10.0.0.5:9229"));
  CHECK(OriginPolicy(with_token).allows("http://bench:9229"));
  CHECK_FALSE(OriginPolicy(with_token).allows("http://bench:9230"));
}

TEST_CASE("host check: loopback names, the listen address, allowed origins' hosts; no DNS rebinding") {
  const OriginPolicy local(OriginPolicyConfig{"127.0.0.1", 9229, {"https://dash.example"}, {}, false});
  CHECK(local.allows_host(std::nullopt));
  CHECK(local.allows_host("127.0.0.1:9229"));
  CHECK(local.allows_host("LOCALHOST:8000"));  // an SSH tunnel's local end
  CHECK(local.allows_host("[::1]:9229"));
  CHECK(local.allows_host("dash.example"));
  CHECK_FALSE(local.allows_host("evil.example:9229"));  // a rebinding page names its own host
  CHECK_FALSE(local.allows_host("127.0.0.1.evil.example"));
  CHECK(OriginPolicy(OriginPolicyConfig{"192.168.1.9", 9229, {}, {}, false}).allows_host("192.168.1.9:9229"));
  CHECK(OriginPolicy(OriginPolicyConfig{"127.0.0.1", 1, {"*"}, {}, false}).allows_host("anything"));
  CHECK(host_of_header(" [::1]:80 ") == "[::1]");
  CHECK(host_of_header("Name") == "name");
  CHECK(host_of_origin("http://a.example:81") == "a.example");
  CHECK(host_of_origin("file://").empty());
}

TEST_CASE("server frames: minimal length encodings") {
  for (const std::size_t n : {0U, 125U, 126U, 65535U, 65536U}) {
    const std::string frame = make_frame(Opcode::text, std::string(n, 'x'));
    const std::size_t header = n < 126 ? 2 : n <= 65535 ? 4 : 10;
    CHECK(frame.size() == header + n);
    CHECK(static_cast<std::uint8_t>(frame[0]) == 0x81);
  }
  const std::string close = make_close_frame(1009, std::string(300, 'r'));
  CHECK(close.size() == 2 + 125);  // a control frame carries at most 125 bytes
  CHECK(static_cast<std::uint8_t>(close[2]) == 0x03);
  CHECK(static_cast<std::uint8_t>(close[3]) == 0xF1);
}

TEST_CASE("client frames: messages, fragments, control frames, at any split") {
  const auto bytes =
      concat({client_frame(1, "{\"type\":\"Stop\"}"), client_frame(1, "{\"ty", false), client_frame(9, "ping!"),
              client_frame(0, "pe\":", false), client_frame(0, "1}"), client_frame(2, std::string(300, 'b')),
              client_frame(8,
                           "\x03\xe8"
                           "bye")});
  for (const std::size_t chunk : {0U, 1U, 2U, 3U, 7U, 64U}) {
    const Parsed parsed = parse_frames(bytes, chunk);
    REQUIRE_FALSE(parsed.violation);
    REQUIRE(parsed.frames.size() == 5);
    CHECK(parsed.frames[0] == std::pair{Opcode::text, std::string("{\"type\":\"Stop\"}")});
    CHECK(parsed.frames[1] == std::pair{Opcode::ping, std::string("ping!")});
    CHECK(parsed.frames[2] == std::pair{Opcode::text, std::string("{\"type\":1}")});
    CHECK(parsed.frames[3].second.size() == 300);
    CHECK(parsed.frames[4] == std::pair{Opcode::close, std::string("bye")});
  }
}

TEST_CASE("client frames: protocol violations carry the close code to send") {
  const auto violation = [](const std::vector<std::uint8_t>& bytes, std::size_t limit = 1024) {
    const Parsed parsed = parse_frames(bytes, 0, limit);
    return parsed.violation ? parsed.violation->close_code : std::uint16_t{0};
  };
  CHECK(violation({0x81, 0x02, 'h', 'i'}) == close_code::protocol_error);                  // unmasked
  CHECK(violation(client_frame(1, "x", true, 0x40)) == close_code::protocol_error);        // RSV1
  CHECK(violation(client_frame(3, "x")) == close_code::protocol_error);                    // opcode 3
  CHECK(violation(client_frame(9, std::string(126, 'p'))) == close_code::protocol_error);  // long ping
  CHECK(violation(client_frame(9, "p", false)) == close_code::protocol_error);             // fragmented ping
  CHECK(violation(client_frame(0, "x")) == close_code::protocol_error);                    // stray continuation
  CHECK(violation(concat({client_frame(1, "a", false), client_frame(1, "b")})) == close_code::protocol_error);
  CHECK(violation(client_frame(1, std::string(1025, 'x'))) == close_code::message_too_big);
  CHECK(violation(concat({client_frame(1, std::string(600, 'x'), false), client_frame(0, std::string(600, 'x'))})) ==
        close_code::message_too_big);
  CHECK(violation(client_frame(1, "\xff\xfe")) == close_code::invalid_payload);
  CHECK(violation(concat({client_frame(1, "\xe2\x82", false), client_frame(0, "\xac")})) == 0);  // "€" split
  CHECK(violation(client_frame(8, "\x03")) == close_code::protocol_error);                       // 1-byte close payload
  CHECK(violation(client_frame(8, "\x03\xed")) == close_code::protocol_error);       // code 1005 is not sendable
  CHECK(violation(client_frame(8, "\x0b\xb8\xff")) == close_code::invalid_payload);  // reason not UTF-8
  // A 64-bit length with the top bit set, announced before any payload: refused at once.
  CHECK(violation({0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0}) == close_code::protocol_error);
  CHECK(violation({0x81, 0xFF, 0, 0, 1, 0, 0, 0, 0, 0}) == close_code::message_too_big);

  FrameParser parser(64);
  const auto bad = client_frame(1, "x", true, 0x40);
  CHECK(parser.feed(bad, [](const ClientFrame&) {}));
  int frames = 0;
  CHECK_FALSE(parser.feed(client_frame(1, "ok"), [&](const ClientFrame&) { ++frames; }));
  CHECK(frames == 0);  // nothing after a violation
}

TEST_CASE("client messages: the protocol's types, with errors by code") {
  ClientMessageParser parser;
  const auto parse = [&](std::string_view text) { return parser.parse(text); };
  const auto code_of = [&](std::string_view text) -> std::optional<tp::ErrorCode> {
    const auto result = parse(text);
    const auto* error = std::get_if<ProtocolError>(&result);
    return error != nullptr ? std::optional(error->code) : std::nullopt;
  };
  {
    const auto result = parse(R"({"type":"Connect","data":{"probe_selector":"VID:PID:0483:374B","chip":null}})");
    const auto& connect = std::get<ConnectRequest>(std::get<ClientMessage>(result));
    CHECK(connect.probe_selector == "VID:PID:0483:374B");
    CHECK_FALSE(connect.chip);
    CHECK_FALSE(connect.token);
  }
  {
    const auto result = parse(R"({"type":"Start","data":{"allow_mask":4294967295,"baud_rate":2000000}})");
    const auto& start = std::get<StartRequest>(std::get<ClientMessage>(result));
    CHECK(start.allow_mask == 0xFFFFFFFFU);
    CHECK(start.baud_rate == 2000000U);
  }
  CHECK(std::holds_alternative<StopRequest>(std::get<ClientMessage>(parse(R"({"type":"Stop"})"))));
  CHECK(std::holds_alternative<StopRequest>(std::get<ClientMessage>(parse(R"({"type":"Stop","data":null})"))));
  {
    const auto result = parse(R"({"type":"SetFilter","data":{"port_mask":null,"event_types":["Text","*"]}})");
    const auto& filter = std::get<SetFilterRequest>(std::get<ClientMessage>(result));
    CHECK_FALSE(filter.port_mask);
    CHECK(filter.event_types == std::vector<std::string>{"Text", "*"});
  }
  CHECK(code_of("{") == ErrorCode::invalid_message);
  CHECK(code_of("[]") == ErrorCode::invalid_message);
  CHECK(code_of(R"({"data":{}})") == ErrorCode::invalid_message);
  CHECK(code_of(R"({"type":7})") == ErrorCode::invalid_message);
  CHECK(code_of(R"({"type":"Launch","data":{}})") == ErrorCode::invalid_message);
  CHECK(code_of(R"({"type":"Connect"})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Connect","data":{"token":1}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Start","data":{}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Start","data":{"allow_mask":-1}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Start","data":{"allow_mask":4294967296}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Start","data":{"allow_mask":1.5}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"Start","data":{"allow_mask":1,"baud_rate":0}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"SetFilter","data":{"event_types":[1]}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"SetFilter","data":{"event_types":[""]}})") == ErrorCode::invalid_parameters);
  CHECK(code_of(R"({"type":"SetFilter","data":{"port_mask":"all"}})") == ErrorCode::invalid_parameters);
}

TEST_CASE("server messages have the schema's fields and types") {
  simdjson::dom::parser parser;
  const auto parse = [&](const std::string& text) { return parser.parse(text).value(); };
  CHECK(std::regex_match(rfc3339_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  const std::string uuid = random_uuid();
  CHECK(std::regex_match(uuid, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  CHECK(random_uuid() != uuid);
  auto hello = parse(hello_message(uuid, "2026-01-01T00:00:00.000Z"));
  CHECK(std::string_view(hello["data"]["server_id"]) == uuid);
  auto status = parse(status_message(StatusInfo{true, std::nullopt, "STM32F407VG", std::nullopt}));
  CHECK(bool(status["data"]["connected"]));
  CHECK(status["data"]["target"].is_null());
  CHECK(std::string_view(status["data"]["chip"]) == "STM32F407VG");
  auto meta =
      parse(meta_message(R"({"0":{"port":0,"name":"Console","decoder":"Text","enabled":true}})", 168000000, true));
  CHECK(std::uint64_t(meta["data"]["cpu_hz"]) == 168000000U);
  CHECK(parse(meta_message("{}", std::nullopt, false))["data"]["cpu_hz"].is_null());
  StatsInfo stats;
  stats.events_per_sec = 1250.5;
  stats.drop_rate = 0.001;
  stats.cpu_load = 0.45;
  stats.events_total = 9;
  auto stats_doc = parse(stats_message("2026-01-01T00:00:00.000Z", stats));
  CHECK(double(stats_doc["data"]["events_per_sec"]) == doctest::Approx(1250.5));
  CHECK(double(stats_doc["data"]["cpu_load"]) == doctest::Approx(0.45));
  CHECK(std::uint64_t(stats_doc["data"]["events_total"]) == 9U);
  stats.cpu_load.reset();
  stats.events_per_sec = std::numeric_limits<double>::infinity();
  auto no_load = parse(stats_message("2026-01-01T00:00:00.000Z", stats));
  CHECK(no_load["data"]["cpu_load"].is_null());
  CHECK(double(no_load["data"]["events_per_sec"]) == 0.0);
  auto error = parse(error_message("t", "a \"quoted\"\nmessage", std::nullopt));
  CHECK(error["data"]["code"].is_null());
  CHECK(std::string_view(error["data"]["message"]) == "a \"quoted\"\nmessage");
  auto coded = parse(error_message("t", "m", tp::ErrorCode::probe_in_use));
  CHECK(std::string_view(coded["data"]["code"]) == "PROBE_IN_USE");
  // A client knows Callisto's codes only: the project's own go out as null.
  auto own_code = parse(error_message("t", "m", tp::ErrorCode::io_error));
  CHECK(own_code["data"]["code"].is_null());
  std::string event;
  append_event_message(event, R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"}})");
  CHECK(event == R"({"type":"Event","data":{"timestamp":1,"port":0,"event":{"kind":"IdleEnter"}}})");
}

TEST_CASE("record routes: a line a learnt shape vouches for routes as its parse does") {
  // trace-serve routes most lines by their shape (records/record_shapes), not their DOM.
  const std::vector<std::string> learnt = {
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"hi"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":40,"event":{"kind":"Raw","data":{"data":[1,255]}}})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Exception","data":{"number":15,"name":"SysTick","action":"enter"}},"source":"dwt","clock":"ns"})",
  };
  const std::vector<std::string> later = {
      R"({"timestamp":9,"port":31,"event":{"kind":"Text","data":{"message":"later"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":9,"port":255,"event":{"kind":"Raw","data":{"data":[]}}})",
      R"({"timestamp":9,"port":3,"event":{"kind":"Exception","data":{"number":511,"name":"IRQ495","action":"enter"}},"source":"dwt","clock":"ns"})",
  };
  KindTable kinds;
  RecordClassifier classifier(kinds);
  RecordShapes shapes;
  for (const std::string& line : learnt) REQUIRE(shapes.learn(line));
  for (const std::string& line : later) {
    CAPTURE(line);
    const CheckedLine* checked = shapes.match(line);
    REQUIRE(checked != nullptr);
    const RecordRoute quick = classifier.route(*checked);
    const RecordRoute parsed = classify(line);
    CHECK(quick.kind == parsed.kind);
    CHECK(quick.port_bits == parsed.port_bits);
    CHECK(quick.high_port == parsed.high_port);
    CHECK(quick.itm == parsed.itm);
    CHECK(quick.cycles_clock == parsed.cycles_clock);
  }
}

TEST_CASE("record routes: kinds, ports, Callisto's required fields") {
  const RecordRoute text =
      classify(R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"hi"}},"clock":"cycles"})");
  CHECK(text.kind == 0);
  CHECK(text.port_bits == 1U);
  CHECK(text.cycles_clock);
  CHECK(classify(R"({"port":31,"timestamp":2,"event":{"data":{"to_task":2,"from_task":1},"kind":"TaskSwitch"}})")
            .port_bits == 0x80000000U);
  const RecordRoute high = classify(R"({"timestamp":1,"port":40,"event":{"kind":"Raw","data":{"data":[1,255]}}})");
  CHECK(high.high_port);
  CHECK(high.port_bits == 0U);
  const RecordRoute exception =
      classify(R"({"timestamp":1,"port":0,"event":{"kind":"Exception","data":{"number":15,"name":"SysTick",)"
               R"("action":"enter"}},"source":"dwt"})");
  CHECK(exception.kind > KindTable::itm);
  CHECK_FALSE(exception.cycles_clock);
  const RecordRoute frames = classify(
      R"({"timestamp":7,"frames":[{"port":0,"data":[72],"timestamp":7},{"port":3,"data":[1],"timestamp":7}]})");
  CHECK(frames.itm);
  CHECK(frames.kind == KindTable::itm);
  CHECK(frames.port_bits == 0b1001U);
  CHECK_FALSE(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"}})"));
  CHECK_FALSE(rejected(R"({"timestamp":1,"port":2,"event":{"kind":"Marker","data":{"id":7,"name":null}}})"));
  CHECK_FALSE(rejected(
      R"({"timestamp":1,"port":3,"event":{"kind":"Counter","data":{"counter_id":1,"value":18446744073709551615}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":5}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"Text"}})"));
  CHECK(rejected(R"({"timestamp":1,"port":2,"event":{"kind":"Marker","data":{"id":4294967296}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":2,"event":{"kind":"Marker","data":{"id":1,"name":3}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":1}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":1,"event":{"kind":"IsrExit","data":{}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":3,"event":{"kind":"Counter","data":{"counter_id":1,"value":-1}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"Raw","data":{"data":[256]}}})"));
  CHECK(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"Itm"}})"));
  // The project's kinds by the project's schema, as trace-filter and trace-csv judge them.
  CHECK(rejected(R"({"timestamp":1,"port":0,"event":{"kind":"Exception","data":{"number":15}}})"));
  CHECK(rejected(R"({"timestamp":-1,"port":0,"event":{"kind":"IdleEnter"}})"));
  CHECK(rejected(R"({"timestamp":1,"port":256,"event":{"kind":"IdleEnter"}})"));
  CHECK(rejected(R"({"timestamp":1,"port":0})"));
  CHECK(rejected(R"({"timestamp":1,"frames":[{"port":300,"data":[]}]})"));
  CHECK(rejected(R"({"timestamp":1,"frames":[{"port":1,"data":["a"]}]})"));
  CHECK(rejected(R"({"timestamp":1,"frames":{}})"));
  std::string problem;
  CHECK_THROWS(classify(R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{}}})", &problem));
}

TEST_CASE("kind table: the schema's kinds from the start, clients only look up, the overflow bucket") {
  KindTable kinds;
  CHECK(kinds.intern("Text") == 0);
  CHECK(kinds.intern("Itm") == KindTable::itm);
  CHECK(KindTable::callisto_kinds == 0x1FFU);  // the nine TraceEvent kinds; Itm only on request
  const std::uint64_t generation = kinds.generation();
  const auto thread_exit = kinds.intern("ThreadExit");  // a schema kind: there already
  CHECK(thread_exit > KindTable::itm);
  CHECK(kinds.generation() == generation);
  std::vector<std::string> unknown;
  CHECK(kinds.mask_for({"Text", "ThreadExit"}, unknown) == ((1ULL << 0U) | (1ULL << thread_exit)));
  CHECK(unknown.empty());
  CHECK(kinds.mask_for({"Text", "*"}, unknown) == ~0ULL);
  // A client's invented names are reported back and never enter the table.
  std::vector<std::string> invented;
  for (int i = 0; i < 1000; ++i) invented.push_back(fmt::format("Invented{}", i));
  invented.emplace_back("Marker");
  CHECK(kinds.mask_for(invented, unknown) == (1ULL << 1U));
  CHECK(unknown.size() == 1000);
  CHECK(kinds.generation() == generation);
  const auto producer_kind = kinds.intern("ProducerKind");  // the input brings a new kind
  CHECK(producer_kind != KindTable::other);
  CHECK(kinds.generation() == generation + 1);
  CHECK(kinds.mask_for({"ProducerKind"}, unknown) == (1ULL << producer_kind));
  for (int i = 0; i < 100; ++i) kinds.intern(fmt::format("Kind{}", i));
  CHECK(kinds.intern("OneTooMany") == KindTable::other);
}

TEST_CASE("send queues: the batched form, one message per batch, exact accounting") {
  BatchBuilder builder;
  // Non-ASCII text: 'é' is 2 UTF-8 bytes and one UTF-16 unit, U+1F600 4 bytes and two units.
  const std::string text = R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"a \"quoted\" ]} )"
                           "\xC3\xA9 \xF0\x9F\x98\x80"
                           R"("}}})";
  const std::string counter =
      R"({"timestamp":2,"port":3,"event":{"kind":"Counter","data":{"counter_id":1,"value":2}}})";
  const std::string frames = R"({"timestamp":3,"frames":[{"port":0,"data":[65],"timestamp":3}]})";
  builder.add(text, classify(text), 0);
  builder.add(counter, classify(counter), 0);
  builder.add(frames, classify(frames), 0);
  const auto batch = builder.take();
  CHECK(batch->bytes.substr(batch->items[1].line_offset, batch->items[1].line_size) == counter);
  CHECK(batch->bytes.substr(batch->items[2].line_offset, batch->items[2].line_size) == frames);

  SendQueue queue(1 << 20, 4096);
  queue.use_batches();
  const Offered offered = queue.push(batch, ClientFilter{});  // Callisto kinds: not the frames line
  CHECK(offered.accepted == 2);
  CHECK(offered.dropped == 0);
  std::vector<std::string_view> gathered;
  queue.gather(gathered, 64, 1 << 20);
  REQUIRE(gathered.size() == 1);
  const std::size_t text_units = text.size() - 1 - 2;  // é: one unit fewer; U+1F600: two fewer
  const std::string expected =
      fmt::format(R"({{"type":"Events","lengths":[{},{}],"data":[{},{}]}})", text_units, counter.size(), text, counter);
  CHECK(gathered[0] == make_frame(Opcode::text, expected));
  const Delivered delivered = queue.pop(1);
  CHECK(delivered.events == 2);

  ClientFilter everything;
  everything.kinds = ~0ULL;
  SendQueue all(1 << 20, 4096);
  all.use_batches();
  CHECK(all.push(batch, everything).accepted == 3);
  all.gather(gathered, 64, 1 << 20);
  CHECK(gathered[0].find(frames) != std::string_view::npos);

  // A queue with room for one record: the other is dropped and counted.
  const std::size_t room_for_text = 10 + std::string_view(R"({"type":"Events","lengths":[)").size() + 11 + 1 +
                                    std::string_view(R"(],"data":[)").size() + text.size() + 2;
  // The batched form's queue is batched_queue_factor times the size given.
  static_assert(SendQueue::batched_queue_factor == 4);
  SendQueue tight((room_for_text + 3) / 4, 4096);
  tight.use_batches();
  const Offered squeezed = tight.push(batch, ClientFilter{});
  CHECK(squeezed.accepted == 2);
  CHECK(squeezed.dropped == 1);
  CHECK(tight.data_bytes() <= room_for_text);

  CHECK(offers_subprotocol("tracepipe.batch", batch_subprotocol));
  CHECK(offers_subprotocol("chat, \ttracepipe.batch ,x", batch_subprotocol));
  CHECK_FALSE(offers_subprotocol("tracepipe.batches", batch_subprotocol));
  CHECK_FALSE(offers_subprotocol("", batch_subprotocol));
}

TEST_CASE("send queues: shared batches, filtered copies, bounded with exact drop counts") {
  BatchBuilder builder;
  const std::string line = R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"hello"}}})";
  const std::string line3 = R"({"timestamp":2,"port":3,"event":{"kind":"Counter","data":{"counter_id":1,"value":2}}})";
  for (int i = 0; i < 10; ++i) {
    builder.add(line, classify(line), 0);
    builder.add(line3, classify(line3), 0);
  }
  const auto batch = builder.take();
  CHECK(builder.empty());
  REQUIRE(batch->items.size() == 20);
  const std::size_t frame0 = batch->items[0].size;
  CHECK(frame0 == 2 + std::string_view(R"({"type":"Event","data":)").size() + line.size() + 1);

  SendQueue everything(1 << 20, 4096);
  const Offered all = everything.push(batch, ClientFilter{});
  CHECK(all.accepted == 20);
  CHECK(all.dropped == 0);
  std::vector<std::string_view> gathered;
  everything.gather(gathered, 64, 1 << 20);
  REQUIRE(gathered.size() == 1);
  CHECK(gathered[0].data() == batch->bytes.data());  // the shared bytes, not a copy

  ClientFilter port0;
  port0.port_mask = 1;
  CHECK(port0.accepts(batch->items[0].route));
  CHECK_FALSE(port0.accepts(batch->items[1].route));
  CHECK_FALSE(port0.accepts_all(*batch));
  SendQueue filtered(1 << 20, 4096);
  const Offered port0_offer = filtered.push(batch, port0);
  CHECK(port0_offer.accepted == 10);
  CHECK(port0_offer.dropped == 0);
  filtered.gather(gathered, 64, 1 << 20);
  REQUIRE(gathered.size() == 1);
  CHECK(gathered[0].size() == 10 * frame0);
  const Delivered delivered = filtered.pop(1);
  CHECK(delivered.events == 10);
  CHECK(delivered.bytes == 10 * frame0);
  CHECK(filtered.empty());

  SendQueue small(3 * frame0, 64);
  const Offered first = small.push(batch, port0);
  CHECK(first.accepted == 10);
  CHECK(first.dropped == 7);  // 3 fit, 7 dropped
  CHECK(small.push(batch, port0).dropped == 10);
  CHECK(small.data_bytes() == 3 * frame0);
  CHECK(small.push_control(std::string(40, 'c'), true));
  CHECK_FALSE(small.push_control(std::string(40, 'c'), true));  // advisory past the budget
  CHECK(small.push_control(std::string(40, 'c'), false));       // replies always go
  small.gather(gathered, 64, 1 << 20);
  CHECK(gathered.size() == 3);
  CHECK(small.pop(3).events == 3);
  CHECK(small.bytes() == 0);

  SendQueue tiny(16, 64);  // smaller than one record: nothing is ever copied into it
  const Offered none_fit = tiny.push(batch, port0);
  CHECK(none_fit.accepted == 10);
  CHECK(none_fit.dropped == 10);
  CHECK(tiny.empty());
  CHECK(tiny.push(batch, ClientFilter{}).dropped == 20);  // nor a whole batch past its size

  ClientFilter no_text;
  no_text.kinds = 1ULL << 7U;  // Counter only
  SendQueue counters(1 << 20, 64);
  const Offered counted = counters.push(batch, no_text);
  CHECK(counted.accepted == 10);
  CHECK(counted.dropped == 0);
  CHECK(counters.pop(1).events == 10);
}

TEST_CASE("client values for command placeholders: only what chip names and selectors are made of") {
  for (const char* good :
       {"STM32F407VGTx", "nRF52840_xxAA", "VID:PID:0483:374B", "lpclink2", "serial/ABC-12+x@1", ""}) {
    CHECK_MESSAGE(!refuse_placeholder_value("chip", good), good);
  }
  for (const char* bad : {"$(touch x)", "a;b", "`id`", "a b", "it's", "a\"b", "a|b", "a&b", "a>b", "a\nb", "a\\b", "~x",
                          "*", "a\tb", "\xc3\xa9"}) {
    const auto refused = refuse_placeholder_value("chip", bad);
    REQUIRE_MESSAGE(refused, bad);
    CHECK(refused->find("chip may only contain") != std::string::npos);
  }
  CHECK(!refuse_placeholder_value("chip", std::string(max_placeholder_value, 'a')));
  CHECK(refuse_placeholder_value("probe_selector", std::string(max_placeholder_value + 1, 'a'))->find("longer") !=
        std::string::npos);
}

TEST_CASE("command placeholders, exit codes and error lines") {
  const std::map<std::string, std::string> values{{"baud_rate", "2000000"}, {"chip", "STM32F407VG"}};
  CHECK(substitute_placeholders({"--baud", "{baud_rate}", "x{chip}y{chip}", "{unknown}", "{", "}{"}, values) ==
        std::vector<std::string>{"--baud", "2000000", "xSTM32F407VGySTM32F407VG", "{unknown}", "{", "}{"});
  CHECK(substitute_placeholders({R"({"data":{"message":"{baud_rate}"}})"}, values) ==
        std::vector<std::string>{R"({"data":{"message":"2000000"}})"});
  CHECK(callisto_code_for_exit(3) == tp::ErrorCode::probe_not_found);
  CHECK(callisto_code_for_exit(4) == tp::ErrorCode::permission_denied);
  CHECK(callisto_code_for_exit(5) == tp::ErrorCode::probe_in_use);
  CHECK(callisto_code_for_exit(8) == tp::ErrorCode::target_not_responding);
  CHECK(callisto_code_for_exit(9) == tp::ErrorCode::baud_rate_error);
  // Never null: a client always gets one of Callisto's codes (a usage error too).
  CHECK(callisto_code_for_exit(2) == tp::ErrorCode::invalid_parameters);
  CHECK(callisto_code_for_exit(6) == tp::ErrorCode::invalid_parameters);
  CHECK(callisto_code_for_exit(1) == tp::ErrorCode::target_not_responding);
  CHECK(callisto_code_for_exit(7) == tp::ErrorCode::target_not_responding);
  CHECK(callisto_code_for_exit(143) == tp::ErrorCode::target_not_responding);
  for (int status = 0; status < 256; ++status) CHECK(tp::is_callisto_code(callisto_code_for_exit(status)));
  CHECK(callisto_code_for_child("BAUD_RATE_ERROR") == tp::ErrorCode::baud_rate_error);
  CHECK(callisto_code_for_child("NOT_FOUND") == tp::ErrorCode::probe_not_found);
  CHECK(callisto_code_for_child("BUSY") == tp::ErrorCode::probe_in_use);
  CHECK(callisto_code_for_child("INVALID_PARAMETERS") == tp::ErrorCode::invalid_parameters);
  CHECK(callisto_code_for_child("BAD_INPUT") == tp::ErrorCode::invalid_parameters);
  CHECK(callisto_code_for_child("IO_ERROR") == tp::ErrorCode::target_not_responding);
  CHECK(callisto_code_for_child("NO_SUCH_CODE") == tp::ErrorCode::target_not_responding);
  CHECK(callisto_code_for_child("") == tp::ErrorCode::target_not_responding);
  const auto error = parse_child_error_line(R"({"level":"error","code":"PROBE_IN_USE","message":"claimed"})");
  REQUIRE(error);
  CHECK(error->code == "PROBE_IN_USE");
  CHECK(error->message == "claimed");
  CHECK_FALSE(parse_child_error_line(R"({"level":"warn","message":"x"})"));
  CHECK_FALSE(parse_child_error_line("swo-capture: error: no probe"));
  CHECK_FALSE(parse_child_error_line(R"({"level":"error")"));
}

TEST_CASE("capture command facts: what swo-capture says of its source") {
  const auto facts = parse_child_facts_line(
      R"({"level":"info","tool":"swo-capture","message":"source facts","facts":{"probe":"LPC-Link2","serial":"ABC",)"
      R"("baud":2000000,"cpu_hz":"wrong type"}})");
  REQUIRE(facts);
  CHECK(facts->probe == "LPC-Link2");
  CHECK(facts->baud == 2000000U);
  CHECK_FALSE(facts->cpu_hz);
  CHECK(probe_description(*facts) == "LPC-Link2 (serial ABC, 2000000 bit/s)");
  const auto simulator = parse_child_facts_line(R"({"level":"info","facts":{"probe":"simulator","cpu_hz":64000000}})");
  REQUIRE(simulator);
  CHECK(simulator->cpu_hz == 64000000U);
  CHECK(probe_description(*simulator) == "simulator");
  CHECK_FALSE(parse_child_facts_line(R"({"level":"info","message":"no facts"})"));
  CHECK_FALSE(parse_child_facts_line(R"({"level":"info","facts":[1]})"));
  CHECK_FALSE(parse_child_facts_line(R"(swo-capture: "facts")"));
}

namespace {
std::string read_all(int fd) {
  std::string out;
  std::array<char, 256> buffer{};
  ssize_t n = 0;
  while ((n = ::read(fd, buffer.data(), buffer.size())) > 0) out.append(buffer.data(), static_cast<std::size_t>(n));
  return out;
}

// The child's exit as the kernel reports it (its pidfd turns readable), with a deadline whose
// expiry leaves the exit code empty, which fails the caller's check.
std::optional<int> wait_exit(ChildProcess& child) {
  const FileDescriptor exited(static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0)));
  if (exited.valid()) {
    pollfd ready{exited.get(), POLLIN, 0};
    (void)::poll(&ready, 1, 60'000);
  }
  (void)child.poll();
  return child.exit_code();
}
}  // namespace

TEST_CASE("child processes: pipes, JSON logs, exit codes, stopping the whole group") {
  ChildProcess child = ChildProcess::spawn({"sh", "-c", "echo out; echo \"$TRACEPIPE_LOG_FORMAT\" >&2; exit 3"});
  const FileDescriptor out = child.take_stdout();
  const FileDescriptor err = child.take_stderr();
  CHECK(read_all(out.get()) == "out\n");
  CHECK(read_all(err.get()) == "json\n");
  CHECK(wait_exit(child) == 3);
  CHECK_FALSE(child.running());

  CHECK_THROWS_AS(ChildProcess::spawn({"/nonexistent/capture-tool"}), Error);
  CHECK_THROWS_AS(ChildProcess::spawn({}), Error);

  // Children that would outlive the test if the group were not ended.
  const std::string children = "sleep 30 | sleep 30";  // pace: see above
  ChildProcess group = ChildProcess::spawn({"sh", "-c", children});
  const FileDescriptor group_out = group.take_stdout();
  CHECK(group.running());
  group.terminate();
  CHECK(wait_exit(group) == 128 + SIGTERM);
  // Every process of the group is gone: nothing holds the pipe open any more.
  pollfd descriptor{group_out.get(), POLLIN, 0};
  CHECK(::poll(&descriptor, 1, 2000) == 1);
  CHECK(read_all(group_out.get()).empty());
}

TEST_CASE("client slots: an exact cap, and a pool of its own for connections without the token") {
  ClientSlots slots(2, 3);
  CHECK(slots.take(Slot::client));
  CHECK(slots.take(Slot::client));
  CHECK_FALSE(slots.take(Slot::client));  // exactly --max-clients
  for (int i = 0; i < 3; ++i) CHECK(slots.take(Slot::unauthenticated));
  CHECK_FALSE(slots.take(Slot::unauthenticated));
  CHECK_FALSE(slots.promote());  // the client pool is full: it stays unauthenticated
  CHECK(slots.unauthenticated() == 3);
  slots.give_back(Slot::client);
  CHECK(slots.promote());
  CHECK(slots.clients() == 2);
  CHECK(slots.unauthenticated() == 2);
  slots.give_back(Slot::unauthenticated);
  slots.give_back(Slot::unauthenticated);
  slots.give_back(Slot::unauthenticated);  // never below zero
  CHECK(slots.unauthenticated() == 0);
  CHECK(slots.take(Slot::unauthenticated));
}

TEST_CASE("failed tokens: a few are free, then each doubles the peer's block, up to a minute") {
  FailedTokenLimiter limiter;
  const std::string peer = "192.0.2.7";
  std::uint64_t now = 1'000'000;
  for (unsigned i = 0; i < FailedTokenLimiter::free_failures; ++i) CHECK(limiter.failed(peer, now) == 0);
  CHECK(limiter.blocked_for(peer, now) == 0);
  CHECK(limiter.failed(peer, now) == 1'000'000);
  CHECK(limiter.blocked_for(peer, now + 400'000) == 600'000);
  CHECK(limiter.blocked_for("192.0.2.8", now) == 0);  // per address
  now += 1'000'000;
  CHECK(limiter.blocked_for(peer, now) == 0);
  CHECK(limiter.failed(peer, now) == 2'000'000);
  CHECK(limiter.failed(peer, now) == 4'000'000);
  for (int i = 0; i < 20; ++i) limiter.failed(peer, now);
  CHECK(limiter.blocked_for(peer, now) == FailedTokenLimiter::longest_block_us);
  // Guessing for ten minutes gets a handful of tries, not thousands a second.
  unsigned tries = 0;
  for (std::uint64_t t = now; t < now + 600'000'000; t += 10'000) {
    if (limiter.blocked_for(peer, t) == 0) {
      ++tries;
      limiter.failed(peer, t);
    }
  }
  CHECK(tries <= 11);
  limiter.succeeded(peer);
  CHECK(limiter.blocked_for(peer, now) == 0);
  CHECK(limiter.failed(peer, now) == 0);  // a fresh start after the right token
  // A peer quiet for longer than forget_after_us starts afresh.
  for (int i = 0; i < 5; ++i) limiter.failed("198.51.100.1", 0);
  CHECK(limiter.failed("198.51.100.1", FailedTokenLimiter::forget_after_us + 1) == 0);
}

TEST_CASE("failed tokens: memory stays bounded however many addresses fail") {
  FailedTokenLimiter limiter;
  for (std::size_t i = 0; i < FailedTokenLimiter::max_peers * 3; ++i) limiter.failed(std::to_string(i), i);
  CHECK(limiter.peers() <= FailedTokenLimiter::max_peers);
}

// ---- the charts' statistics (trace-top's snapshots) over a view's records --------------------

namespace {

std::string isr_record(std::string_view kind, std::uint64_t timestamp, std::string_view run, std::uint64_t seq) {
  return fmt::format(R"({{"timestamp":{},"port":0,"event":{{"kind":"{}","data":{{"isr_id":5}}}},"source":"itm",)"
                     R"("clock":"cycles","board":"b","run":"{}","seq":{},"host_us":1}})",
                     timestamp, kind, run, seq);
}

// Two runs of a board: the second's clock restarted (its first ISR is at 10, the first's at 1000).
std::vector<std::string> two_runs() {
  return {isr_record("IsrEnter", 1000, "r1", 0), isr_record("IsrExit", 1100, "r1", 1),
          isr_record("IsrEnter", 10, "r2", 0), isr_record("IsrExit", 40, "r2", 1)};
}

}  // namespace

TEST_CASE("charts' statistics: a run change starts them anew, where LiveStats alone would mix the runs") {
  simdjson::dom::parser parser;
  tp::analysis::LiveStats mixed{false, false, true};
  tp::serve::RunStatistics statistics;
  for (const auto& line : two_runs()) {
    const simdjson::dom::object record = parser.parse(line).get_object().value();
    mixed.add(*tp::analysis::observe(record));
    statistics.add(record);
  }
  // Unreset, the second run's records are taken at the first's last time: its ISR lasted 0.
  CHECK(mixed.time_anomalies() == 2);
  CHECK(mixed.isrs().handlers().at(5).durations.min == 0);
  const auto& stats = statistics.stats();
  CHECK(statistics.run() == "r2");
  CHECK(statistics.added() == 4);
  CHECK(stats.records() == 2);
  CHECK(stats.time_anomalies() == 0);
  CHECK(stats.first_time() == 10);
  CHECK(stats.last_time() == 40);
  const auto& isr = stats.isrs().handlers().at(5).durations;
  CHECK(isr.count == 1);
  CHECK(isr.min == 30);
  CHECK(isr.max == 30);
}

TEST_CASE("charts' statistics: a line the pump leaves out (the seam of then=live) is not counted; they go on") {
  // The stored part counted r2's enter; the live part reads it again (left out) and the exit.
  const std::vector<std::string> runs = two_runs();
  simdjson::dom::parser parser;
  tp::serve::RunStatistics stored;
  stored.add(parser.parse(runs[2]).get_object().value());
  std::array<int, 2> pipe_fds{};
  REQUIRE(::pipe(pipe_fds.data()) == 0);
  const std::string input = runs[2] + "\n" + runs[3] + "\n";
  REQUIRE(::write(pipe_fds[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(pipe_fds[1]);
  KindTable kinds;
  std::atomic<bool> ended{false};
  PumpCallbacks callbacks;
  callbacks.publish = [](const std::shared_ptr<const Batch>&) {};
  callbacks.bad_line = [](std::uint64_t, std::string_view) {};
  callbacks.ended = [&](std::string_view error) {
    CHECK(error.empty());
    ended = true;
  };
  PumpOptions options;
  options.top_interval_s = 1;
  options.keep = [seen = runs[2]](std::string_view line) { return line != seen; };
  options.statistics = std::move(stored);
  InputPump pump(ByteSource::from_fd(pipe_fds[0], "a pipe", true), kinds, std::move(callbacks), std::move(options));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!ended && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // pace: the poll of a wait with a deadline
  REQUIRE(ended);
  const auto statistics = pump.statistics_at_end();
  REQUIRE(statistics);
  CHECK(pump.records() == 1);
  CHECK(statistics->added() == 2);
  CHECK(statistics->stats().records() == 2);
  const auto& isr = statistics->stats().isrs().handlers().at(5).durations;
  CHECK(isr.count == 1);
  CHECK(isr.max == 30);
}
