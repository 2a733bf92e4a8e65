#include <doctest/doctest.h>

#include <random>

#include "core/error.hpp"
#include "helpers.hpp"
#include "ports/port_router.hpp"
#include "ports/record_decoders.hpp"
#include "ports/text_decoder.hpp"

using namespace tp;
using tp::test::CollectingSink;

namespace {
void write_bytes(PortDecoder& d, const std::vector<std::uint8_t>& bytes, std::uint8_t chunk, EventSink& sink) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    std::uint8_t size = chunk;
    while (i + size > bytes.size()) size = static_cast<std::uint8_t>(size / 2);
    std::uint32_t v = 0;
    for (std::uint8_t k = 0; k < size; ++k) v |= static_cast<std::uint32_t>(bytes[i + k]) << (8U * k);
    d.write(v, size, sink);
    i += size;
  }
}
}  // namespace

TEST_CASE("Text: lines at newline (CR dropped), NUL, size cap, idle and end") {
  CollectingSink sink;
  TextDecoder text(0, 8, std::nullopt);
  for (const char c : std::string("Hello\r\nabc")) text.write(static_cast<std::uint8_t>(c), 1, sink);
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].text == "Hello");
  text.write(0, 1, sink);  // NUL from a byte write ends a C string
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[1].text == "abc");
  for (const char c : std::string("0123456789")) text.write(static_cast<std::uint8_t>(c), 1, sink);
  REQUIRE(sink.events.size() == 3);
  CHECK(sink.events[2].text == "01234567");  // cap of 8
  text.flush(FlushReason::overflow, sink);   // an overflow keeps the partial line
  CHECK(sink.events.size() == 3);
  text.flush(FlushReason::idle, sink);
  REQUIRE(sink.events.size() == 4);
  CHECK(sink.events[3].text == "89");
  text.write('\n', 1, sink);  // an empty line is still a line
  REQUIRE(sink.events.size() == 5);
  CHECK(sink.events[4].text.empty());
}

TEST_CASE("Text: 2/4-byte writes are packed characters with NUL padding, or values with value_format") {
  CollectingSink sink;
  TextDecoder packed(0, 4096, std::nullopt);
  packed.write(0x64636261, 4, sink);  // "abcd"
  packed.write(0x0A65, 2, sink);      // "e\n"
  packed.write(0x00000066, 4, sink);  // "f" + padding
  packed.flush(FlushReason::end, sink);
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[0].text == "abcde");
  CHECK(sink.events[1].text == "f");

  CollectingSink values;
  TextDecoder mixed(1, 4096, UserFormat::parse("%u"));
  for (const char c : std::string("Sort")) mixed.write(static_cast<std::uint8_t>(c), 1, values);
  mixed.write(235, 4, values);
  REQUIRE(values.events.size() == 2);
  CHECK(values.events[0].text == "Sort");
  CHECK(values.events[1].text == "235");
}

TEST_CASE("Text: lines longer than the first buffer, in every write size, up to a large cap") {
  // The line buffer starts small and grows with the lines (a large --max-line takes no memory
  // before lines need it); every write size and byte runs must cross its growth points.
  std::string expected;
  for (int i = 0; i < 5000; ++i) expected += static_cast<char>('a' + i % 26);
  for (const std::size_t max_line : {std::size_t{4096}, std::size_t{100000}}) {
    CollectingSink sink;
    TextDecoder text(0, max_line, std::nullopt);
    std::size_t at = 0;
    unsigned step = 0;
    while (at < expected.size()) {
      const std::size_t size =
          std::min<std::size_t>(expected.size() - at, std::array<std::size_t, 4>{1, 2, 4, 37}[step++ % 4]);
      if (size != 1 && size != 2 && size != 4) {
        text.write_bytes(std::span(reinterpret_cast<const std::uint8_t*>(expected.data() + at), size), sink);
      } else {
        std::uint32_t value = 0;
        for (std::size_t k = 0; k < size; ++k)
          value |= static_cast<std::uint32_t>(static_cast<unsigned char>(expected[at + k])) << (8U * k);
        text.write(value, static_cast<std::uint8_t>(size), sink);
      }
      at += size;
    }
    text.write('\n', 1, sink);
    std::string joined;
    for (const auto& event : sink.events) {
      CHECK(event.text.size() <= max_line);
      joined += event.text;
    }
    CHECK(joined == expected);
    CHECK(sink.events.size() == (expected.size() + max_line - 1) / max_line);
  }
}

TEST_CASE("TaskIsr: 9-byte records from any mix of write sizes, names, resync on garbage") {
  const std::vector<std::uint8_t> records{1, 1,  0, 0, 0, 2, 0, 0, 0,   // TaskSwitch 1 -> 2
                                          2, 10, 0, 0, 0, 0, 0, 0, 0,   // IsrEnter 10
                                          3, 10, 0, 0, 0, 0, 0, 0, 0,   // IsrExit 10
                                          4, 0,  0, 0, 0, 0, 0, 0, 0,   // IdleEnter
                                          5, 0,  0, 0, 0, 0, 0, 0, 0};  // IdleExit
  for (const std::uint8_t chunk : std::initializer_list<std::uint8_t>{1, 2, 4}) {
    CollectingSink sink;
    TaskIsrDecoder d(1, {{10, "TIM1_IRQHandler"}});
    write_bytes(d, records, chunk, sink);
    REQUIRE(sink.events.size() == 5);
    CHECK(sink.events[0].kind == EventKind::task_switch);
    CHECK(sink.events[0].event.from_task() == 1);
    CHECK(sink.events[0].event.to_task() == 2);
    CHECK(sink.events[1].kind == EventKind::isr_enter);
    CHECK(sink.events[1].text == "TIM1_IRQHandler");
    CHECK(sink.events[2].kind == EventKind::isr_exit);
    CHECK(sink.events[3].kind == EventKind::idle_enter);
    CHECK(sink.events[4].kind == EventKind::idle_exit);
  }
  CollectingSink sink;
  TaskIsrDecoder d(1, {});
  write_bytes(d, {0xEE, 0x00, 0x99, 1, 7, 0, 0, 0, 8, 0, 0, 0}, 1, sink);
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[0].kind == EventKind::malformed);
  CHECK(sink.events[0].event.byte_count() == 3);
  CHECK(sink.events[1].kind == EventKind::task_switch);
  CHECK(sink.events[1].event.to_task() == 8);
  // A partial record at an overflow or at the end is reported with its bytes.
  write_bytes(d, {2, 5, 0}, 1, sink);
  d.flush(FlushReason::overflow, sink);
  REQUIRE(sink.events.size() == 3);
  CHECK(sink.events[2].kind == EventKind::malformed);
  CHECK(sink.events[2].bytes == std::vector<std::uint8_t>{2, 5, 0});
}

TEST_CASE("Marker and Counter records") {
  CollectingSink sink;
  MarkerDecoder marker(2, {{42, "Checkpoint A"}});
  marker.write(42, 4, sink);
  marker.write(7, 2, sink);
  marker.write(0, 2, sink);
  CounterDecoder counter(3);
  write_bytes(counter, {1, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, 4, sink);
  counter.write(9, 1, sink);
  counter.flush(FlushReason::end, sink);
  REQUIRE(sink.events.size() == 4);
  CHECK(sink.events[0].event.id() == 42);
  CHECK(sink.events[0].text == "Checkpoint A");
  CHECK(sink.events[1].event.id() == 7);
  CHECK(sink.events[1].text.empty());
  CHECK(sink.events[2].kind == EventKind::counter);
  CHECK(sink.events[2].event.value() == 0x1122334455667788ULL);
  CHECK(sink.events[3].kind == EventKind::malformed);
}

TEST_CASE("User formats") {
  std::string out;
  UserFormat::parse("%d").format(out, 0xFF, 1);
  CHECK(out == "-1");
  out.clear();
  UserFormat::parse("%d").format(out, 0xFFFE, 2);
  CHECK(out == "-2");
  out.clear();
  UserFormat::parse("v=%08lx%%").format(out, 0xBEEF, 4);
  CHECK(out == "v=0000beef%");
  out.clear();
  UserFormat::parse("%.2f").format(out, 0x40490FDB, 4);  // pi as a float
  CHECK(out == "3.14");
  out.clear();
  UserFormat::parse("[%c]").format(out, 'x', 1);
  CHECK(out == "[x]");
  CHECK_THROWS_AS(UserFormat::parse("%d %d"), Error);
  CHECK_THROWS_AS(UserFormat::parse("%s"), Error);
  CHECK_THROWS_AS(UserFormat::parse("%"), Error);
  // Width and precision are bounded (a huge one would make every record that long).
  out.clear();
  UserFormat::parse("%64d|").format(out, 7, 4);
  CHECK(out.size() == 65);
  out.clear();
  UserFormat::parse("%-10.3f|").format(out, 0x40490FDB, 4);
  CHECK(out == "3.142     |");
  CHECK_NOTHROW(UserFormat::parse("%.64f"));
  CHECK_THROWS_WITH_AS(UserFormat::parse("%999999999d"), doctest::Contains("width 999999999 is over 64"), Error);
  CHECK_THROWS_WITH_AS(UserFormat::parse("%65x"), doctest::Contains("width 65"), Error);
  // A port map with an unusable format is refused when it is read, naming the port (the
  // port map fuzzer found maps that parsed and then failed when the decoders were made).
  CHECK_THROWS_WITH_AS(PortMap::parse(R"({"5":{"decoder":{"User":{"format":"%s %d"}}}})"),
                       doctest::Contains("port \"5\": format '%s %d': unsupported conversion '%s'"), Error);
  CHECK_THROWS_WITH_AS(PortMap::parse(R"({"0":{"decoder":"Text","value_format":"%q"}})"), doctest::Contains("port"),
                       Error);
  CHECK_THROWS_WITH_AS(UserFormat::parse("%.100f"), doctest::Contains("precision 100"), Error);
  CHECK_THROWS_AS(UserFormat::parse("%1.2.3f"), Error);
}

TEST_CASE("port map: standard, parsing, errors, JSON form") {
  const PortMap standard = PortMap::standard();
  CHECK(standard.at(0).decoder == DecoderType::text);
  CHECK(standard.at(1).decoder == DecoderType::task_isr);
  CHECK(standard.at(3).name == "Counters");
  CHECK(standard.at(200).decoder == DecoderType::raw);

  const PortMap map = PortMap::parse(R"({"ports_map": {
      "0": {"port": 0, "name": "Log", "decoder": {"User": {"format": "%x"}}, "enabled": true},
      "40": {"name": "Page1", "decoder": "Marker", "names": {"1": "boot"}},
      "5": {"decoder": "Text", "enabled": false},
      "default": {"decoder": "Counter"}}})");
  CHECK(map.at(0).decoder == DecoderType::user);
  CHECK(map.at(0).format == "%x");
  CHECK(map.at(40).names.at(1) == "boot");
  CHECK_FALSE(map.at(5).enabled);
  CHECK(map.at(9).decoder == DecoderType::counter);
  CHECK(PortMap::parse(map.to_json()).at(0).format == "%x");

  CHECK_THROWS_AS(PortMap::parse("{"), Error);
  CHECK_THROWS_AS(PortMap::parse(R"({"0": {"decoder": "Bogus"}})"), Error);
  CHECK_THROWS_AS(PortMap::parse(R"({"300": {"decoder": "Text"}})"), Error);
  CHECK_THROWS_AS(PortMap::parse(R"({"1": {"port": 2, "decoder": "Text"}})"), Error);
  CHECK_THROWS_AS(PortMap::parse(R"({"x": {"decoder": "Text"}})"), Error);
  CHECK_THROWS_AS(PortMap::parse(R"({"0": {"decoder": "User"}})"), Error);
}

TEST_CASE("router: disabled and masked ports are counted, not decoded") {
  PortMap map = PortMap::standard();
  map.set(4, PortConfig{"off", DecoderType::text, {}, false, {}});
  PortRouter router(map, 0xFFFFFFFEU);
  CollectingSink sink;
  CHECK_FALSE(router.write(0, 'a', 1, sink));  // masked
  CHECK_FALSE(router.write(4, 'a', 1, sink));  // disabled
  CHECK(router.write(100, 5, 1, sink));        // default: Raw
  CHECK(router.filtered_writes() == 2);
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].kind == EventKind::raw);
  CHECK(sink.events[0].port == 100);
}

TEST_CASE("bulk write_bytes gives exactly what byte-by-byte writes give, for every decoder") {
  std::mt19937 rng(3);
  const std::string alphabet = std::string("abc\r\n") + '\0' + "\x01\x02\x03\x04\x05";
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rng() % 200));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(alphabet[rng() % alphabet.size()]);
    const std::size_t cap = 1 + rng() % 12;
    for (const DecoderType type :
         {DecoderType::text, DecoderType::task_isr, DecoderType::marker, DecoderType::counter, DecoderType::raw}) {
      const PortConfig config{"p", type, {}, true, {}};
      auto bulk = make_port_decoder(7, config, PortDecoderLimits{cap});
      auto single = make_port_decoder(7, config, PortDecoderLimits{cap});
      CollectingSink bulk_events;
      CollectingSink single_events;
      std::size_t i = 0;
      while (i < bytes.size()) {  // random run lengths, as the ITM decoder delivers them
        const std::size_t n = std::min<std::size_t>(1 + rng() % 40, bytes.size() - i);
        bulk->write_bytes(std::span<const std::uint8_t>(bytes.data() + i, n), bulk_events);
        i += n;
      }
      for (const std::uint8_t b : bytes) single->write(b, 1, single_events);
      bulk->flush(FlushReason::end, bulk_events);
      single->flush(FlushReason::end, single_events);
      REQUIRE(bulk_events.events.size() == single_events.events.size());
      for (std::size_t k = 0; k < bulk_events.events.size(); ++k) {
        CHECK(bulk_events.events[k].kind == single_events.events[k].kind);
        CHECK(bulk_events.events[k].text == single_events.events[k].text);
        CHECK(bulk_events.events[k].event.values().a == single_events.events[k].event.values().a);
        CHECK(bulk_events.events[k].event.values().b == single_events.events[k].event.values().b);
        CHECK(bulk_events.events[k].bytes == single_events.events[k].bytes);
      }
    }
  }
}

TEST_CASE("has_line_control finds a NUL or newline among a write's bytes only, for every size") {
  // Every write of 1, 2 or 4 bytes drawn from a few telling bytes, above its size too (those
  // bytes are not the write's and must not count), against a byte-by-byte look.
  const std::array<std::uint8_t, 5> telling{0x00, 0x0A, 0x0B, 0x41, 0xFF};
  for (const std::uint8_t size : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{4}}) {
    for (std::uint32_t pick = 0; pick < 5U * 5U * 5U * 5U; ++pick) {
      std::uint32_t value = 0;
      bool expected = false;
      std::uint32_t rest = pick;
      for (std::uint32_t i = 0; i < 4; ++i, rest /= 5U) {
        const std::uint8_t byte = telling[rest % 5U];
        value |= static_cast<std::uint32_t>(byte) << (8U * i);
        if (i < size && (byte == 0x00 || byte == 0x0A)) expected = true;
      }
      CAPTURE(value);
      CAPTURE(size);
      CHECK(has_line_control(value, size) == expected);
    }
  }
}
