// SystemView: packet framing (SEGGER_SYSVIEW.c's "Packet format" comment and its examples),
// the stream decoder whole and split, host-side printf, the records.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sysview/host_printf.hpp"
#include "sysview/records.hpp"
#include "sysview/stream_decoder.hpp"

using namespace tp::sysview;
using Bytes = std::vector<std::uint8_t>;

namespace {

const Bytes sync_bytes(10, 0x00);  // SEGGER_SYSVIEW.c _abSync

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// A packet as a comparable line: id, fields, text, arguments, delta.
std::string describe(const Packet& p) {
  std::string s = fmt::format("{}/{}:", p.id, p.extended_id);
  for (std::size_t i = 0; i < p.value_count; ++i) s += fmt::format("{},", p.values[i]);
  s += fmt::format("'{}'", p.text);
  for (std::size_t i = 0; i < p.argument_count; ++i) s += fmt::format(",{}", p.arguments[i]);
  s += fmt::format(" +{} [{}]", p.delta, p.payload.size());
  return s;
}

struct Collected {
  std::vector<std::string> events;
  void packet(const Packet& p) { events.push_back(describe(p)); }
  void skipped(std::string_view reason, std::uint64_t bytes) {
    events.push_back(fmt::format("skipped {}: {}", bytes, reason));
  }
};

std::vector<std::string> decode(const Bytes& bytes, std::size_t chunk, bool wait_for_sync = true) {
  StreamDecoder decoder(wait_for_sync);
  Collected sink;
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    decoder.feed(std::span(bytes).subspan(i, std::min(chunk, bytes.size() - i)), sink);
  }
  decoder.finish(sink);
  return sink.events;
}

// Every split gives the same events: whole, one byte at a time, and a few sizes between.
std::vector<std::string> decode_all_ways(const Bytes& bytes, bool wait_for_sync = true) {
  const auto whole = decode(bytes, bytes.size() + 1, wait_for_sync);
  for (const std::size_t chunk : {1U, 2U, 3U, 5U, 17U}) CHECK(decode(bytes, chunk, wait_for_sync) == whole);
  return whole;
}

Packet parse_one(const Bytes& bytes) {
  Packet p;
  const ParseResult r = parse_packet(bytes, p);
  REQUIRE(r.status == ParseStatus::complete);
  CHECK(r.consumed == bytes.size());
  return p;
}

std::string format(std::string_view format_text, std::vector<std::uint32_t> arguments) {
  std::string out;
  format_host(format_text, arguments, out);
  return out;
}

std::string records(const Bytes& bytes, RecordSettings settings = {0, true, 1}) {
  tp::OutBuffer out;
  RecordWriter writer(settings);
  StreamDecoder decoder;
  struct Sink {
    RecordWriter& writer;
    tp::OutBuffer& out;
    void packet(const Packet& p) { writer.packet(p, out); }
    void skipped(std::string_view reason, std::uint64_t n) { writer.skipped(reason, n, out); }
  } sink{writer, out};
  decoder.feed(bytes, sink);
  decoder.finish(sink);
  writer.finish(out);
  return std::string(out.view());
}

}  // namespace

TEST_CASE("SEGGER_SYSVIEW.c's example packets") {
  // 01 F4 03 80 80 10: overflow, 500 packets lost, timestamp delta 0x40000.
  Packet p = parse_one({0x01, 0xF4, 0x03, 0x80, 0x80, 0x10});
  CHECK(p.id == 1);
  CHECK(p.value(0) == 500);
  CHECK(p.delta == 0x40000);
  p = parse_one({0x02, 0x0F, 0x50});  // ISR 15 enter, delta 80
  CHECK(p.id == 2);
  CHECK(p.value(0) == 15);
  CHECK(p.delta == 80);
  p = parse_one({0x03, 0x20});  // ISR exit, delta 32: the shortest packet
  CHECK(p.id == 3);
  CHECK(p.value_count == 0);
  CHECK(p.delta == 32);
  // Data 0xFFFFFFFF encodes as FF FF FF FF 0F.
  p = parse_one({0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00});
  CHECK(p.value(0) == 0xFFFFFFFFU);
}

TEST_CASE("variable-length integers over 5 bytes or 32 bits are malformed") {
  Packet p;
  CHECK(parse_packet(Bytes{0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x00}, p).status == ParseStatus::malformed);
  CHECK(parse_packet(Bytes{0x0C, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00}, p).status == ParseStatus::malformed);
  CHECK(parse_packet(Bytes{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, p).status == ParseStatus::malformed);
  // Cut short anywhere: more is needed, nothing is malformed yet.
  const Bytes whole{0x01, 0xF4, 0x03, 0x80, 0x80, 0x10};
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    CHECK(parse_packet(std::span(whole).first(cut), p).status == ParseStatus::need_more);
  }
}

TEST_CASE("fixed packets with strings: task info, system description") {
  const Bytes task_info{0x09, 0x82, 0x02, 0x05, 0x04, 'M', 'a', 'i', 'n', 0x07};  // task 258, prio 5
  const Packet p = parse_one(task_info);
  CHECK(p.value(0) == 258);
  CHECK(p.value(1) == 5);
  CHECK(p.text == "Main");
  CHECK(p.delta == 7);
  // A string of 255 bytes or more: 255, then a 16-bit big-endian length.
  Bytes long_text(4 + 256 + 1, 'x');
  long_text[0] = 0x0E;
  long_text[1] = 0xFF;
  long_text[2] = 0x01;
  long_text[3] = 0x00;
  long_text.back() = 0x00;
  CHECK(parse_one(long_text).text.size() == 256);
}

TEST_CASE("sized packets: ids and lengths as variable-length integers, extended events, user events") {
  // print formatted: "x=%d" options 1 (warning), 1 argument 300.
  const Bytes print{0x1A, 0x09, 0x04, 'x', '=', '%', 'd', 0x01, 0x01, 0xAC, 0x02, 0x03};
  Packet p = parse_one(print);
  CHECK(p.id == 26);
  CHECK(p.text == "x=%d");
  CHECK(p.value(0) == 1);
  REQUIRE(p.argument_count == 1);
  CHECK(p.arguments[0] == 300);
  CHECK(p.delta == 3);
  // An extended mark (ID 31, EX 0) of marker 9.
  p = parse_one({0x1F, 0x02, 0x00, 0x09, 0x04});
  CHECK(p.extended_id == 0);
  CHECK(p.value(0) == 9);
  // A user event 0x400 (two-byte id) with 3 payload bytes.
  p = parse_one({0x80, 0x08, 0x03, 0x01, 0x02, 0x03, 0x00});
  CHECK(p.id == 0x400);
  CHECK(p.payload.size() == 3);
  // Arguments announced past the payload's end, or a string longer than it: malformed.
  Packet bad;
  CHECK(parse_packet(Bytes{0x1A, 0x04, 0x01, 'x', 0x00, 0x03, 0x00}, bad).status == ParseStatus::malformed);
  CHECK(parse_packet(Bytes{0x19, 0x02, 0x01, 0x05, 0x00}, bad).status == ParseStatus::malformed);
  CHECK(parse_packet(Bytes{0x1A, 0x40, 0x01, 0x00}, bad).status == ParseStatus::need_more);  // payload to come
}

TEST_CASE("the stream decoder: sync first, any split, resync after a malformed packet") {
  const Bytes packets{0x02, 0x0F, 0x50, 0x03, 0x20, 0x09, 0x02, 0x05, 0x04, 'M', 'a', 'i', 'n', 0x01};
  auto events = decode_all_ways(cat({Bytes{0x11, 0x22, 0x33}, sync_bytes, packets}));
  REQUIRE(events.size() == 4);  // the skipped bytes, then three packets (a sync is not packets)
  CHECK(events[0] == "skipped 3: before the first sync");
  events =
      decode_all_ways(cat({sync_bytes, packets, Bytes{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x42}, sync_bytes, packets}));
  CHECK(std::count_if(events.begin(), events.end(), [](const std::string& e) { return e.starts_with("skipped"); }) ==
        1);
  CHECK(std::find(events.begin(), events.end(), "skipped 7: event id over 5 bytes") != events.end());
  // Without waiting for a sync_bytes, the first byte is a packet's.
  events = decode_all_ways(packets, false);
  CHECK(events.size() == 3);
  CHECK(events[0] == "2/0:15,'' +80 [0]");
  // A packet cut short by the end of the input is reported, not dropped silently.
  events = decode_all_ways(cat({sync_bytes, Bytes{0x09, 0x02, 0x05, 0x04, 'M'}}));
  REQUIRE(!events.empty());
  CHECK(events.back() == "skipped 5: a packet cut short by the end of the input");
}

TEST_CASE("host printf: C's conversions, the target's argument slots, %% and %s") {
  CHECK(format("a=%d b=0x%04x c=%c", {static_cast<std::uint32_t>(-5), 0xAB, 'Z'}) == "a=-5 b=0x00ab c=Z");
  CHECK(format("[%5u] [%-4d] [%+d] [%#x] [%X] [%o]", {42, 7, 3, 255, 255, 8}) ==
        "[   42] [7   ] [+3] [0xff] [FF] [10]");
  // "%%" took two of the target's slots at the end, none in order: %X gets the third argument.
  CHECK(format("%d 100%% %X", {1, 0xBEEF, 0xC0DE, 0, 0}) == "1 100% BEEF");
  CHECK(format("%s!", {0x20000010}) == "(string at 0x20000010)!");
  CHECK(format("%d and %d", {1}) == "1 and %d");  // a conversion without an argument
  CHECK(format("%.3d|%08d|%-3c|", {5, static_cast<std::uint32_t>(-42), 'q'}) == "005|-0000042|q  |");
  CHECK(format("tail %", {}) == "tail %");
  CHECK(format("%ld %lu %hx %zu", {1, 2, 3, 4}) == "1 2 3 4");
}

TEST_CASE("records: clock from Init, time placed by the system time, ISR nesting, task names, overflows") {
  const Bytes start{
      0x0A, 0x00,                                                  // trace start
      0x18, 0x07, 0xC0, 0x84, 0x3D, 0x80, 0xB5, 0x18, 0x00, 0x00,  // init: 1 MHz timestamps, 400 kHz CPU, +0
      0x0C, 0xE8, 0x07, 0x05,                                      // systime 1000, +5
      0x09, 0x02, 0x05, 0x04, 'M',  'a',  'i',  'n',  0x00,        // task 2 "Main"
      0x0E, 0x0C, 'I',  '#',  '1',  '5',  '=',  'S',  'y',  's',  'T', 'i', 'c', 'k', 0x00};
  const Bytes run{0x04, 0x02, 0x0A,  // task 2 starts, +10
                  0x02, 0x0F, 0x02,  // ISR 15 enters, +2
                  0x02, 0x10, 0x01,  // ISR 16 nests, +1
                  0x03, 0x01,        // exits (16), +1
                  0x12, 0x01,        // exits to the scheduler (15), +1
                  0x11, 0x03,        // idle, +3
                  0x04, 0x02, 0x04,  // task 2 again, +4
                  0x01, 0x00, 0x02,  // overflow, DropCount 0: one packet lost
                  0x01, 0x05, 0x02,  // overflow, DropCount 5: six more
                  0x03, 0x01};       // an exit without an enter
  const std::string out = records(cat({sync_bytes, start, run}), {0, false, 1});
  // The records before the system time wait for it and are placed with it: 5 ticks before.
  CHECK(out.starts_with(R"({"timestamp":995000,"port":1,"event":{"kind":"SystemInfo","data":{"item":"trace_start"}},)"
                        R"("source":"sysview","clock":"ns"})"));
  // The system time places the target's clock: 1000 ticks at 1 MHz = 1 ms.
  CHECK(out.find(R"({"timestamp":1000000,"port":1,"event":{"kind":"SystemInfo","data":{"item":"systime")") !=
        std::string::npos);
  CHECK(out.find(R"({"timestamp":1010000,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":0,"to_task":2,)"
                 R"("to_name":"Main"}})") != std::string::npos);
  CHECK(out.find(R"("kind":"IsrEnter","data":{"isr_id":15,"name":"SysTick"}})") != std::string::npos);
  CHECK(out.find(R"({"timestamp":1014000,"port":1,"event":{"kind":"IsrExit","data":{"isr_id":16}})") !=
        std::string::npos);
  CHECK(out.find(
            R"({"timestamp":1015000,"port":1,"event":{"kind":"IsrExit","data":{"isr_id":15,"to_scheduler":true}})") !=
        std::string::npos);
  CHECK(out.find(R"({"timestamp":1018000,"port":1,"event":{"kind":"IdleEnter"})") != std::string::npos);
  CHECK(out.find(R"({"timestamp":1022000,"port":1,"event":{"kind":"IdleExit"})") != std::string::npos);
  CHECK(out.find(R"("kind":"TaskSwitch","data":{"from_task":2,"to_task":2,"from_name":"Main","to_name":"Main"}})") !=
        std::string::npos);
  CHECK(out.find(R"("kind":"Overflow","data":{"dropped":1,"target_count":0}})") != std::string::npos);
  CHECK(out.find(R"("kind":"Overflow","data":{"dropped":6,"target_count":5}})") != std::string::npos);
  CHECK(out.find(R"("kind":"IsrExit","data":{"isr_id":0}})") != std::string::npos);
  // Bytes before the first sync are placed with the records after it (not at time 0).
  const std::string junk_first = records(cat({Bytes{0x42, 0x43}, sync_bytes, start, run}), {0, true, 1});
  CHECK(junk_first.starts_with(R"({"timestamp":995,"port":1,"event":{"kind":"Malformed","data":{"reason":)"
                               R"("before the first sync","bytes":2}},"source":"sysview","clock":"cycles"})"));
  // The same without --ticks: Init, after the skipped bytes, still chooses the clock of all.
  const std::string junk_first_ns = records(cat({Bytes{0x42, 0x43}, sync_bytes, start, run}), {0, false, 1});
  CHECK(junk_first_ns.starts_with(R"({"timestamp":995000,"port":1,"event":{"kind":"Malformed","data":{"reason":)"
                                  R"("before the first sync","bytes":2}},"source":"sysview","clock":"ns"})"));
  CHECK(junk_first_ns.find(R"("clock":"cycles")") == std::string::npos);
  CHECK(junk_first_ns.substr(junk_first_ns.find('\n') + 1) == out);
  // Without a rate (no Init, no --cpu-hz): ticks, clock cycles.
  const std::string ticks = records(cat({sync_bytes, run}), {0, false, 1});
  CHECK(ticks.find(R"({"timestamp":10,"port":1,"event":{"kind":"TaskSwitch")") != std::string::npos);
  CHECK(ticks.find(R"("clock":"cycles")") != std::string::npos);
}

namespace {

// The records, fed `chunk` bytes at a time, and the error that ended them (if one did).
std::pair<std::string, std::string> records_until_error(const Bytes& bytes, RecordSettings settings,
                                                        std::size_t chunk) {
  tp::OutBuffer out;
  RecordWriter writer(settings);
  StreamDecoder decoder;
  struct Sink {
    RecordWriter& writer;
    tp::OutBuffer& out;
    void packet(const Packet& p) { writer.packet(p, out); }
    void skipped(std::string_view reason, std::uint64_t n) { writer.skipped(reason, n, out); }
  } sink{writer, out};
  try {
    for (std::size_t i = 0; i < bytes.size(); i += chunk) {
      decoder.feed(std::span(bytes).subspan(i, std::min(chunk, bytes.size() - i)), sink);
    }
    decoder.finish(sink);
    writer.finish(out);
  } catch (const tp::Error& e) {
    CHECK(e.code() == tp::ExitCode::bad_input);
    return {std::string(out.view()), e.what()};
  }
  return {std::string(out.view()), ""};
}

}  // namespace

TEST_CASE("records: a time past 2^64 ns is refused (exit 6, --ticks said), never wrapped; in ticks it goes on") {
  // At 1 Hz (a wrong rate), five deltas of 2^32-1 ticks are 2.1e19 ns: past 2^64.
  Bytes stream = cat({sync_bytes, Bytes{0x0C, 0x00, 0x00}});        // systime 0: the clock placed
  const Bytes task_long{0x04, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};  // task 2 starts, +4294967295
  for (int i = 0; i < 5; ++i) stream = cat({stream, task_long});
  const auto [whole, error] = records_until_error(stream, {1, false, 1}, stream.size() + 1);
  CHECK(error.find("past 2^64 ns") != std::string::npos);
  CHECK(error.find("--ticks") != std::string::npos);
  // Four records fit (4 * 4294967295 s in ns < 2^64); the fifth is not written wrapped.
  CHECK(whole.find(R"({"timestamp":17179869180000000000,)") != std::string::npos);
  CHECK(std::count(whole.begin(), whole.end(), '\n') == 5);  // systime + 4 task switches
  for (const std::size_t chunk : {1U, 2U, 7U}) {
    const auto split = records_until_error(stream, {1, false, 1}, chunk);
    CHECK(split.first == whole);
    CHECK(split.second == error);
  }
  // --ticks: the same stream in ticks, to the end.
  const auto [ticks, no_error] = records_until_error(stream, {1, true, 1}, stream.size() + 1);
  CHECK(no_error.empty());
  CHECK(ticks.find(R"({"timestamp":21474836475,)") != std::string::npos);
}
