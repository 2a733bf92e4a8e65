#include <doctest/doctest.h>

#include <array>
#include <stdexcept>

#include "core/json_writer.hpp"
#include "decode/record_entries.hpp"
#include "itm/encoder.hpp"
#include "itm/exception_names.hpp"
#include "session_helpers.hpp"

using namespace tp;
using namespace tp::itm;
using tp::test::decode_lines;
using tp::test::Json;

TEST_CASE("records take the time of the local timestamp that follows them") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.text(0, "hi\n");
  enc.timestamp(1000);
  enc.packet(make_exception(16 + 3, itm::ExceptionAction::enter));
  enc.timestamp(500);
  enc.packet(make_pc_sample(0x08000100));
  const auto lines = decode_lines(bytes);
  REQUIRE(lines.size() == 3);
  const Json text(lines[0]);
  CHECK(text.u64("/timestamp") == 1000);
  CHECK(text.str("/clock") == "cycles");
  CHECK(text.str("/event/kind") == "Text");
  CHECK(text.str("/event/data/message") == "hi");
  CHECK(text.str("/source") == "itm");
  const Json exception(lines[1]);
  CHECK(exception.u64("/timestamp") == 1500);
  CHECK(exception.str("/event/data/name") == "IRQ3");
  CHECK(exception.str("/event/data/action") == "enter");
  CHECK(exception.str("/source") == "dwt");
  // No timestamp after the PC sample: it gets the last target time.
  CHECK(Json(lines[2]).u64("/timestamp") == 1500);
}

TEST_CASE("a text line has its first character's time, as orbcat dates console lines") {
  // 'A', LTS 1, PC sample, LTS 2, 'B', LTS 4, '\n', LTS 3: the line began when 'A' was
  // written (time 1); the PC sample has time 3; the line is written when it ends, after it.
  const std::vector<std::uint8_t> bytes{0x01, 0x41, 0x10, 0x17, 0x00, 0x01, 0x00, 0x08,
                                        0x20, 0x01, 0x42, 0x40, 0x01, 0x0A, 0x30};
  for (const std::size_t chunk : {std::size_t{0}, std::size_t{1}}) {
    const auto lines = decode_lines(bytes, {}, PortMap::standard(), chunk);
    REQUIRE(lines.size() == 2);
    CHECK(Json(lines[0]).str("/event/kind") == "PcSample");
    CHECK(Json(lines[0]).u64("/timestamp") == 3);
    CHECK(Json(lines[1]).str("/event/data/message") == "AB");
    CHECK(Json(lines[1]).u64("/timestamp") == 1);
  }
  // Begun and ended between the same two timestamps: the next one dates it, as any record.
  const auto same = decode_lines({0x10, 0x01, 0x41, 0x01, 0x0A, 0x20});
  REQUIRE(same.size() == 1);
  CHECK(Json(same[0]).u64("/timestamp") == 3);
}

TEST_CASE("a text line that began before the oldest kept timestamp gets a later time, not exact") {
  // 'A', then 70000 x (LTS 1, 'x'): the line spans more timestamps than the session keeps
  // (65536), so its first character's time is gone; it gets the oldest kept, and says so.
  std::vector<std::uint8_t> bytes{0x01, 0x41};
  constexpr int timestamps = 70000;
  for (int i = 0; i < timestamps; ++i) bytes.insert(bytes.end(), {0x10, 0x01, 0x78});
  bytes.insert(bytes.end(), {0x01, 0x0A, 0x10});
  SessionOptions options;
  options.max_line = 200000;
  const auto lines = decode_lines(bytes, options);
  REQUIRE(lines.size() == 1);
  const Json line(lines[0]);
  CHECK(line.str("/event/data/message").size() == 1 + timestamps);
  CHECK(line.u64("/timestamp") == timestamps - 65535);  // the oldest of the 65535 kept when it ended
  CHECK_FALSE(line["/time_exact"].get_bool().value());

  // Within the kept timestamps the first character's time is exact, as before.
  std::vector<std::uint8_t> short_span{0x01, 0x41};
  for (int i = 0; i < 1000; ++i) short_span.insert(short_span.end(), {0x10, 0x01, 0x78});
  short_span.insert(short_span.end(), {0x01, 0x0A, 0x10});
  const auto kept = decode_lines(short_span, options);
  REQUIRE(kept.size() == 1);
  CHECK(Json(kept[0]).u64("/timestamp") == 1);
  CHECK_FALSE(Json(kept[0]).has("/time_exact"));
}

TEST_CASE("a port whose payloads mostly fail its decoder is reported once, naming --port-map") {
  // Text written on port 1 (the map's TaskIsr port), as the sigrok STM32F105 capture does:
  // 0x0B (port 1, 1 byte) before each character of "Hello, world\n" repeated.
  std::vector<std::uint8_t> bytes;
  for (int i = 0; i < 4; ++i) {
    for (const char c : std::string_view("Hello, world\n")) {
      bytes.push_back(0x09);
      bytes.push_back(static_cast<std::uint8_t>(c));
    }
  }
  const int fd = ::memfd_create("tracepipe-test", 0);
  BatchedWriter writer(fd, false, 4096);
  ItmSession session(PortMap::standard(), {}, writer);
  session.feed(bytes, 1000);
  session.finish(1000);
  const auto warnings = session.take_warnings();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("port 1") != std::string::npos);
  CHECK(warnings[0].find("TaskIsr") != std::string::npos);
  CHECK(warnings[0].find("--port-map") != std::string::npos);
  CHECK(session.take_warnings().empty());
  ::close(fd);
  // Records that decode: no warning.
  std::vector<std::uint8_t> good;
  for (int i = 0; i < 20; ++i) {
    for (const std::uint8_t b : std::array<std::uint8_t, 9>{0x02, 0x0A, 0, 0, 0, 0, 0, 0, 0}) {
      good.push_back(0x09);
      good.push_back(b);
    }
  }
  const int fd2 = ::memfd_create("tracepipe-test", 0);
  BatchedWriter writer2(fd2, false, 4096);
  ItmSession clean(PortMap::standard(), {}, writer2);
  clean.feed(good, 1000);
  clean.finish(1000);
  CHECK(clean.take_warnings().empty());
  ::close(fd2);
}

TEST_CASE("prescaler, nanoseconds with --cpu-hz, global timestamps rebase") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.write(2, 7, 4);
  enc.timestamp(250);
  enc.packet(make_global_timestamp1(1'000'000));
  enc.write(2, 8, 4);
  enc.timestamp(10);
  SessionOptions options;
  options.prescaler = 4;
  options.cpu_hz = 1'000'000;  // 1 cycle = 1 us
  const auto lines = decode_lines(bytes, options);
  REQUIRE(lines.size() == 2);
  CHECK(Json(lines[0]).u64("/timestamp") == 1000 * 1000);  // 250 ticks x 4 = 1000 cycles
  CHECK(Json(lines[0]).str("/clock") == "ns");
  CHECK(Json(lines[1]).u64("/timestamp") == (1'000'000 + 40) * 1000ULL);
  CHECK(Json(lines[1]).u64("/event/data/id") == 8);
}

TEST_CASE("without target timestamps records get host time, and say so") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.text(0, "x\n");
  const auto lines = decode_lines(bytes, {}, PortMap::standard(), 0, 777);
  REQUIRE(lines.size() == 1);
  CHECK(Json(lines[0]).u64("/timestamp") == 777);
  CHECK(Json(lines[0]).str("/clock") == "us");
  SessionOptions none;
  none.timestamps = TimestampMode::none;
  CHECK(Json(decode_lines(bytes, none)[0]).str("/clock") == "none");
}

TEST_CASE("a time that is not exact says so: delayed timestamps, records released before theirs") {
  // 'A\n', LTS1 with TC = 1 (timestamp delayed, D4.2.4) of 5; 'B\n', LTS2 of 3 (exact, TC
  // always 0); 'C\n' and the end of input: released with the last time, a lower bound.
  const std::vector<std::uint8_t> bytes{0x01, 'A',  0x01, '\n', 0xD0, 0x05, 0x01, 'B',
                                        0x01, '\n', 0x30, 0x01, 'C',  0x01, '\n'};
  const auto lines = decode_lines(bytes);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == R"({"timestamp":5,"port":0,"event":{"kind":"Text","data":{"message":"A"}},"source":"itm",)"
                    R"("clock":"cycles","time_exact":false})");
  CHECK(lines[1] ==
        R"({"timestamp":8,"port":0,"event":{"kind":"Text","data":{"message":"B"}},"source":"itm","clock":"cycles"})");
  CHECK(lines[2] == R"({"timestamp":8,"port":0,"event":{"kind":"Text","data":{"message":"C"}},"source":"itm",)"
                    R"("clock":"cycles","time_exact":false})");

  SessionOptions frames;
  frames.frames = true;
  const auto with_frames = decode_lines(bytes, frames);
  REQUIRE(with_frames.size() == 6);
  CHECK(with_frames[1] == R"({"timestamp":5,"frames":[{"port":0,"data":[65],"timestamp":5},)"
                          R"({"port":0,"data":[10],"timestamp":5}],"clock":"cycles","time_exact":false})");
  CHECK(with_frames[3].find("time_exact") == std::string::npos);

  SessionOptions text;
  text.format = OutputFormat::text;
  const auto text_lines = decode_lines(bytes, text);
  REQUIRE(text_lines.size() == 3);
  CHECK(text_lines[0].starts_with("             5~"));
  CHECK(text_lines[1].starts_with("             8 "));
}

TEST_CASE("records before the first target timestamp carry host time, not exact, and the switch is said") {
  const int fd = ::memfd_create("tracepipe-test", 0);
  std::vector<std::string> warnings;
  {
    BatchedWriter writer(fd, false, 4096);
    ItmSession session(PortMap::standard(), SessionOptions{}, writer);
    const std::vector<std::uint8_t> early{0x01, 'x', 0x01, '\n'};
    session.feed(early, 700);
    session.idle(800);  // input pauses: released with its host time
    CHECK(session.take_warnings().empty());
    const std::vector<std::uint8_t> later{0x01, 'y', 0x01, '\n', 0x20};  // 'y\n', LTS2 of 2
    session.feed(later, 900);
    warnings = session.take_warnings();
    session.finish(1000);
    writer.flush();
  }
  std::string content(4096, '\0');
  content.resize(static_cast<std::size_t>(::pread(fd, content.data(), content.size(), 0)));
  ::close(fd);
  CHECK(content == R"({"timestamp":700,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm",)"
                   R"("clock":"us","time_exact":false})"
                   "\n"
                   R"({"timestamp":2,"port":0,"event":{"kind":"Text","data":{"message":"y"}},"source":"itm",)"
                   R"("clock":"cycles"})"
                   "\n");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("first 1 record(s) came before the stream's first ITM timestamp") != std::string::npos);

  // --timestamps host: host time is what was asked for, exact for what it says.
  SessionOptions host;
  host.timestamps = TimestampMode::host;
  const auto lines = decode_lines({0x01, 'z', 0x01, '\n'}, host, PortMap::standard(), 0, 55);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        R"({"timestamp":55,"port":0,"event":{"kind":"Text","data":{"message":"z"}},"source":"itm","clock":"us"})");
}

TEST_CASE("replaying a file, a pause in target time ends a partial line as the live decode did") {
  // 1 MHz core, line timeout 200 ms. 'a' 'b', LTS 10; 'c', LTS 300000 (0.3 s: the pause was
  // before 'c'); 'd' '\n', LTS 1. Then 'x', LTS 5, LTS 300000 alone; 'y' '\n', LTS 1.
  const std::vector<std::uint8_t> bytes{0x01, 'a',  0x01, 'b',  0xC0, 0x0A, 0x01, 'c',  0xC0, 0xE0,
                                        0xA7, 0x12, 0x01, 'd',  0x01, '\n', 0x10, 0x01, 'x',  0xC0,
                                        0x05, 0xC0, 0xE0, 0xA7, 0x12, 0x01, 'y',  0x01, '\n', 0x10};
  SessionOptions replay;
  replay.cpu_hz = 1'000'000;
  replay.cut_lines_by_target_time = true;
  const auto lines = decode_lines(bytes, replay);
  REQUIRE(lines.size() == 4);
  CHECK(Json(lines[0]).str("/event/data/message") == "ab");
  CHECK(Json(lines[0]).u64("/timestamp") == 10'000);  // ns
  CHECK(Json(lines[1]).str("/event/data/message") == "cd");
  CHECK(Json(lines[1]).u64("/timestamp") == 300'010'000);
  CHECK(Json(lines[2]).str("/event/data/message") == "x");
  CHECK(Json(lines[2]).u64("/timestamp") == 300'016'000);
  CHECK(Json(lines[3]).str("/event/data/message") == "y");
  CHECK(Json(lines[3]).u64("/timestamp") == 600'017'000);

  // Live (the option off), or without --cpu-hz: the lines are as the newlines make them.
  const auto live = decode_lines(bytes, SessionOptions{.cpu_hz = 1'000'000});
  REQUIRE(live.size() == 2);
  CHECK(Json(live[0]).str("/event/data/message") == "abcd");
  CHECK(Json(live[1]).str("/event/data/message") == "xy");
  SessionOptions no_clock;
  no_clock.cut_lines_by_target_time = true;
  CHECK(decode_lines(bytes, no_clock).size() == 2);
}

TEST_CASE("every record kind is valid JSON with the Callisto field names") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.text(0, "quote\" back\\ ctl\x01 bad\xff utf8 \xc3\xa9\n");
  const std::vector<std::uint8_t> task{1, 3, 0, 0, 0, 4, 0, 0, 0};
  enc.bytes(1, task, 4);
  enc.write(2, 9, 4);
  const std::vector<std::uint8_t> counter{5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  enc.bytes(3, counter, 4);
  enc.write(20, 0xAB, 1);
  enc.packet(make_event_counter(0x21));
  enc.packet(make_data_trace_value(1, true, 0x1234, 2));
  enc.packet(make_sleeping_pc_sample());
  enc.packet(make_overflow());
  bytes.push_back(0x90);  // reserved header
  const auto lines = decode_lines(bytes);
  REQUIRE(lines.size() == 10);
  CHECK(Json(lines[0]).str("/event/data/message") == "quote\" back\\ ctl\x01 bad\xEF\xBF\xBD utf8 \xc3\xa9");
  CHECK(Json(lines[1]).str("/event/kind") == "TaskSwitch");
  CHECK(Json(lines[1]).u64("/event/data/to_task") == 4);
  CHECK(Json(lines[2]).u64("/event/data/id") == 9);
  CHECK_FALSE(Json(lines[2]).has("/event/data/name"));
  CHECK(Json(lines[3]).u64("/event/data/counter_id") == 5);
  CHECK(Json(lines[3]).u64("/event/data/value") == 1);
  CHECK(Json(lines[4]).u64("/event/data/data/0") == 0xAB);
  CHECK(Json(lines[5]).str("/event/kind") == "EventCounter");
  CHECK(Json(lines[5])["/event/data/cyc"].get_bool().value());
  CHECK(Json(lines[6]).str("/event/data/type") == "write");
  CHECK(Json(lines[7])["/event/data/sleep"].get_bool().value());
  CHECK(Json(lines[8]).str("/event/kind") == "Overflow");
  CHECK(Json(lines[9]).str("/event/kind") == "Malformed");
  CHECK(Json(lines[9]).u64("/event/data/bytes") == 1);
}

TEST_CASE("names from tracepipe's tables are written as they are: none needs escaping") {
  const auto written_as_is = [](std::string_view name) {
    OutBuffer out;
    append_json_string(out, name);
    std::string quoted(1, '"');
    quoted.append(name).push_back('"');
    return out.view() == quoted;
  };
  for (std::uint16_t number = 0; number < 512; ++number) CHECK(written_as_is(exception_name(number)));
  for (const std::string_view kind : record_kind_names) CHECK(written_as_is(kind));
  for (std::uint8_t type = 0; type < 4; ++type) CHECK(written_as_is(type_name(static_cast<DataTraceType>(type))));
  // An exception record's name and action, by the ARMv7-M numbering (B1.5.2).
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.packet(make_exception(3, itm::ExceptionAction::enter));
  enc.packet(make_exception(16 + 37, itm::ExceptionAction::resume));
  const auto lines = decode_lines(bytes);
  REQUIRE(lines.size() == 2);
  CHECK(Json(lines[0]).str("/event/data/name") == "HardFault");
  CHECK(Json(lines[0]).str("/event/data/action") == "enter");
  CHECK(Json(lines[1]).str("/event/data/name") == "IRQ37");
  CHECK(Json(lines[1]).str("/event/data/action") == "resume");
  SessionOptions terminal;
  terminal.format = OutputFormat::text;
  const auto text_lines = decode_lines(bytes, terminal);
  REQUIRE(text_lines.size() == 2);
  CHECK(text_lines[0].find("enter HardFault (3)") != std::string::npos);
  CHECK(text_lines[1].find("resume IRQ37 (53)") != std::string::npos);
}

TEST_CASE("frames lines carry the raw SWIT payloads") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.write(20, 0x0201, 2);  // a Raw port: its record comes before the frames line
  enc.timestamp(3);
  SessionOptions options;
  options.frames = true;
  const auto lines = decode_lines(bytes, options);
  REQUIRE(lines.size() == 2);
  const Json frames(lines[1]);
  CHECK(frames.u64("/frames/0/port") == 20);
  CHECK(frames.u64("/frames/0/data/1") == 2);
  CHECK(frames.u64("/frames/0/timestamp") == 3);
}

TEST_CASE("TPIU input gives the same records as the bare stream") {
  std::vector<std::uint8_t> itm_bytes;
  ItmStreamEncoder enc(itm_bytes);
  for (int i = 0; i < 50; ++i) {
    enc.text(0, "line\n");
    enc.packet(make_pc_sample(0x08000000U + static_cast<std::uint32_t>(i)));
    enc.timestamp(static_cast<std::uint64_t>(i) + 100);
  }
  TpiuFramer framer;
  std::vector<std::uint8_t> framed;
  framer.sync(framed);
  for (std::size_t i = 0; i < itm_bytes.size(); i += 7) {
    framer.write(1, std::span(itm_bytes).subspan(i, std::min<std::size_t>(7, itm_bytes.size() - i)), framed);
    framer.write(2, std::vector<std::uint8_t>{0xEE, 0xEF}, framed);
  }
  framer.flush(framed);
  SessionOptions tpiu;
  tpiu.tpiu = true;
  CHECK(decode_lines(framed, tpiu, PortMap::standard(), 13) == decode_lines(itm_bytes));
}

TEST_CASE("text output format") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.text(0, "hello\n");
  enc.timestamp(42);
  SessionOptions options;
  options.format = OutputFormat::text;
  const auto lines = decode_lines(bytes, options);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("42") != std::string::npos);
  CHECK(lines[0].find("[Console] hello") != std::string::npos);
}

TEST_CASE("records do not wait forever for a timestamp when input never pauses") {
  const int fd = ::memfd_create("tracepipe-test", 0);
  BatchedWriter writer(fd, false, 1 << 16);
  ItmSession session(PortMap::standard(), SessionOptions{}, writer);
  std::vector<std::uint8_t> first;
  ItmStreamEncoder(first).text(0, "early\n");
  std::vector<std::uint8_t> later;
  ItmStreamEncoder(later).text(0, "x");
  session.feed(first, 1'000);
  session.feed(later, 2'000);
  writer.flush();
  CHECK(::lseek(fd, 0, SEEK_END) == 0);  // 1 ms later: still waiting
  session.feed(later, 1'000 + 50'000);
  writer.flush();
  CHECK(::lseek(fd, 0, SEEK_END) > 0);  // 50 ms later: written with its host time
  ::close(fd);
}

TEST_CASE("statistics separate malformed packets from port decoder errors") {
  const int fd = ::memfd_create("tracepipe-test", 0);
  BatchedWriter writer(fd, true, 1 << 16);
  ItmSession session(PortMap::standard(), SessionOptions{}, writer);
  std::vector<std::uint8_t> bytes{0x90, 0x90};  // a reserved header run: one malformed packet
  ItmStreamEncoder enc(bytes);
  enc.write(1, 0xEE, 1);  // garbage on the TaskIsr port
  enc.write(1, 0x04, 1);  // a record start, then end of input inside the record
  session.feed(bytes, 1);
  session.finish(2);
  const DecodeStats stats = session.stats();
  CHECK(stats.malformed_packets == 1);
  CHECK(stats.malformed_bytes == 2);
  CHECK(stats.port_errors == 2);  // the garbage byte, and the unfinished record
}

TEST_CASE("statistics count packets by kind and target clock changes") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.text(0, "ab\n");
  enc.packet(make_pc_sample(0x08000000));
  enc.packet(make_global_timestamp1(5, true, false));
  const int fd = ::memfd_create("tracepipe-test", 0);
  BatchedWriter writer(fd, true, 1 << 16);
  ItmSession session(PortMap::standard(), SessionOptions{}, writer);
  session.feed(bytes, 1);
  session.finish(2);
  const DecodeStats stats = session.stats();
  CHECK(stats.by_kind[static_cast<std::size_t>(PacketKind::instrumentation)] == 3);
  CHECK(stats.by_kind[static_cast<std::size_t>(PacketKind::pc_sample)] == 1);
  CHECK(stats.clock_changes == 1);
  CHECK(session.stats_summary().find("instrumentation 3 pc_sample 1") != std::string::npos);
}

TEST_CASE("records formatted on the writer's thread are the records formatted in the session" *
          doctest::test_suite("threads")) {
  // A long stream of every kind, in writer batches of 4 KB: the thread formats most of them
  // and the session the ones that find it busy (BatchedWriter::write_in_background).
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  std::uint32_t state = 12345;
  const auto next = [&state] {
    state = state * 1664525U + 1013904223U;
    return state >> 8U;
  };
  for (int i = 0; i < 40000; ++i) {
    switch (next() % 9) {
      case 0:
        enc.text(0, "line \"" + std::to_string(next()) + "\"\t\xc3\xa9\n");
        break;
      case 1: {
        const std::vector<std::uint8_t> task{static_cast<std::uint8_t>(1 + next() % 5), 1, 0, 0, 0, 2, 0, 0, 0};
        enc.bytes(1, task, static_cast<std::uint8_t>(1U << (next() % 3)));
        break;
      }
      case 2:
        enc.write(2, next(), 4);
        break;
      case 3:
        enc.packet(make_exception(static_cast<std::uint16_t>(next() % 64), itm::ExceptionAction::enter));
        break;
      case 4:
        enc.packet(make_pc_sample(next()));
        break;
      case 5:
        enc.packet(make_event_counter(static_cast<std::uint8_t>(next() & 0x3FU)));
        break;
      case 6:
        enc.timestamp(next() % 5000, static_cast<std::uint8_t>(next() % 2));
        break;
      case 7:
        enc.write(20, next(), 2);  // a Raw port
        break;
      default:
        bytes.push_back(0x90);  // a reserved header: Malformed
        break;
    }
  }
  for (const OutputFormat format : {OutputFormat::ndjson, OutputFormat::text}) {
    for (const bool frames : {false, true}) {
      SessionOptions options;
      options.format = format;
      options.frames = frames;
      options.max_pending = 64;
      const std::string in_session = tp::test::decode_output(bytes, options, PortMap::standard(), 4093, 1000);
      options.format_in_background = true;
      CHECK(tp::test::decode_output(bytes, options, PortMap::standard(), 4093, 1000) == in_session);
      CHECK(in_session.size() > bytes.size());
    }
  }
}

TEST_CASE("record entries: formatted as the session formats records; a batch cut inside an entry is a bug, said") {
  const Event marker = Event::marker(2, 7, "boot \"done\"");
  Event raw = Event::of(EventKind::raw, 20);
  const std::array<std::uint8_t, 3> payload{1, 2, 255};
  raw.bytes = payload;
  OutBuffer batch;
  stage_record_entry(batch, marker);
  stamp_record_entry(batch.data(), 42, "ns", false);
  const std::size_t second = batch.size();
  stage_record_entry(batch, raw);
  stamp_record_entry(batch.data() + second, 43, "cycles", true);
  append_line_entry(batch, "{\"timestamp\":43,\"frames\":[]}\n");

  const PortMap map = PortMap::standard();
  const EntryFormatter entries(OutputFormat::ndjson, map, nullptr);
  OutBuffer out;
  entries.format(batch.view(), out);
  const RecordFormatter formatter(OutputFormat::ndjson, &map);
  OutBuffer expected;
  RecordFormatter::Stamp stamp;
  OutBuffer body;
  formatter.stamp(stamp, 42, "ns", false);
  formatter.body(body, marker);
  RecordFormatter::line(expected, stamp, body.view());
  body.clear();
  formatter.stamp(stamp, 43, "cycles", true);
  formatter.body(body, raw);
  RecordFormatter::line(expected, stamp, body.view());
  expected += "{\"timestamp\":43,\"frames\":[]}\n";
  CHECK(out.view() == expected.view());
  CHECK(Json(std::string(out.view().substr(0, out.view().find('\n')))).str("/event/data/name") == "boot \"done\"");

  for (std::size_t cut = 1; cut < second; ++cut) {  // every cut inside the first entry
    OutBuffer partial;
    CHECK_THROWS_AS(entries.format(batch.view().substr(0, cut), partial), std::logic_error);
  }
  OutBuffer ignored;
  CHECK_THROWS_AS(entries.format("X", ignored), std::logic_error);
  CHECK_THROWS_AS(stamp_record_entry(batch.data(), 1, "fortnights", true), std::logic_error);
}
