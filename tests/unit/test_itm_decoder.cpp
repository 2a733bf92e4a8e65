#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace tp;
using namespace tp::itm;
using tp::test::decode_packets;
using Bytes = std::vector<std::uint8_t>;

namespace {
// Every split of the input must give the same packets: whole, and one byte at a time.
std::vector<Packet> decode_all_ways(const Bytes& bytes) {
  const auto whole = decode_packets(bytes);
  for (std::size_t chunk : {1U, 2U, 3U, 7U}) {
    const auto split = decode_packets(bytes, chunk);
    REQUIRE(split.size() == whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) CHECK(split[i] == whole[i]);
  }
  return whole;
}
}  // namespace

TEST_CASE("sync needs 47 zero bits then a one, and resets the stimulus page") {
  auto p = decode_all_ways({0x00, 0x00, 0x00, 0x00, 0x00, 0x80});
  REQUIRE(p.size() == 1);
  CHECK(p[0].kind == PacketKind::sync);
  p = decode_all_ways({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80});  // longer runs too
  REQUIRE(p.size() == 1);
  CHECK(p[0].kind == PacketKind::sync);
  // Four zero bytes are only 39 zero bits: not a sync.
  p = decode_all_ways({0x00, 0x00, 0x00, 0x00, 0x80});
  REQUIRE(p.size() == 1);
  CHECK(p[0].kind == PacketKind::malformed);
  CHECK(p[0].value == 5);
  // Page 2, then sync: the next SWIT is on page 0 again.
  p = decode_all_ways({0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x09, 0x41});
  REQUIRE(p.size() == 3);
  CHECK(p[0].kind == PacketKind::stimulus_page);
  CHECK(p[2].port == 1);
}

TEST_CASE("zeros that ended the previous packet count toward a sync (resync mid-stream)") {
  // SWIT 4-byte value 0x41 whose high bytes are zero, then 00 80: a sync by bit count.
  const auto p = decode_all_ways({0x03, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x42});
  REQUIRE(p.size() == 3);
  CHECK(p[0].kind == PacketKind::instrumentation);
  CHECK(p[1].kind == PacketKind::sync);
  CHECK(p[2].value == 0x42);
}

TEST_CASE("overflow, LTS1 with every TC, LTS2") {
  const auto p = decode_all_ways({0x70, 0xC0, 0x81, 0x01, 0xD0, 0x05, 0xE0, 0xFF, 0xFF, 0xFF, 0x7F, 0xF0, 0x01, 0x30});
  REQUIRE(p.size() == 6);
  CHECK(p[0].kind == PacketKind::overflow);
  CHECK(p[1].kind == PacketKind::local_timestamp);
  CHECK(p[1].value == 129);
  CHECK(p[1].info == 0);
  CHECK(p[2].info == 1);
  CHECK(p[3].value == (1U << 28U) - 1U);
  CHECK(p[3].info == 2);
  CHECK(p[4].info == 3);
  CHECK(p[5].length == 0);
  CHECK(p[5].value == 3);
}

TEST_CASE("an over-long LTS1 is skipped to its byte with bit 7 clear, as sigrok resyncs") {
  // The sigrok capture's case: reading the fifth payload byte (01) as a header would invent a
  // port 0 write of 0x01 and lose 'B' and the timestamp 2.
  const auto p =
      decode_all_ways({0x01, 0x41, 0xC0, 0x81, 0x81, 0x81, 0x81, 0x01, 0x01, 0x42, 0xC0, 0x02, 0x01, 0x43, 0xC0, 0x10});
  REQUIRE(p.size() == 6);
  CHECK(p[0].value == 'A');
  CHECK(p[1].kind == PacketKind::malformed);
  CHECK(p[1].info == static_cast<std::uint8_t>(MalformedReason::too_long));
  CHECK(p[1].value == 6);
  CHECK(p[2].kind == PacketKind::instrumentation);
  CHECK(p[2].value == 'B');
  CHECK(p[3].kind == PacketKind::local_timestamp);
  CHECK(p[3].value == 2);
  CHECK(p[4].value == 'C');
  CHECK(p[5].kind == PacketKind::local_timestamp);
  CHECK(p[5].value == 16);
  // A run of continuation bytes that the input ends in: one report, nothing invented.
  const auto cut = decode_all_ways({0xC0, 0x80, 0x80, 0x80, 0x80, 0x81, 0x81});
  REQUIRE(cut.size() == 1);
  CHECK(cut[0].kind == PacketKind::malformed);
  CHECK(cut[0].value == 7);
}

TEST_CASE("GTS1 with wrap and clock change, GTS2 in both forms") {
  // GTS1: low 26 bits = 0x3FFFFFF with ClkCh and Wrap set in byte 4.
  auto p = decode_all_ways({0x94, 0xFF, 0xFF, 0xFF, 0x7F, 0x94, 0x05, 0xB4, 0x81, 0x80, 0x80, 0x01, 0xB4, 0x81, 0x80,
                            0x80, 0x80, 0x80, 0x01});
  REQUIRE(p.size() == 4);
  CHECK(p[0].kind == PacketKind::global_timestamp1);
  CHECK(p[0].value == 0x3FFFFFF);
  CHECK(p[0].info == 3);
  CHECK(p[1].value == 5);
  CHECK(p[1].length == 1);
  CHECK(p[2].kind == PacketKind::global_timestamp2);
  CHECK(p[2].length == 4);
  CHECK(p[2].value == (1U | (1U << 21U)));
  CHECK(p[3].length == 6);
  CHECK(p[3].value == (1ULL | (1ULL << 35U)));
  // A GTS2 of 2 bytes is neither form.
  p = decode_all_ways({0xB4, 0x81, 0x01});
  REQUIRE(p.size() == 1);
  CHECK(p[0].info == static_cast<std::uint8_t>(MalformedReason::bad_length));
}

TEST_CASE("stimulus pages give ports above 31; other extensions are reported") {
  auto p = decode_all_ways({0x78, 0xF9, 0x7A, 0x0C, 0x9C, 0x01});
  REQUIRE(p.size() == 4);
  CHECK(p[0].kind == PacketKind::stimulus_page);
  CHECK(p[0].value == 7);
  CHECK(p[1].kind == PacketKind::instrumentation);
  CHECK(p[1].port == 7 * 32 + 31);
  CHECK(p[2].kind == PacketKind::extension);
  CHECK(p[2].info == 1);
  CHECK(p[3].kind == PacketKind::extension);
  CHECK(p[3].value == (1U | (1U << 3U)));
}

TEST_CASE("SWIT payloads of 1, 2 and 4 bytes, little-endian") {
  const auto p = decode_all_ways({0x01, 0x41, 0x0A, 0x34, 0x12, 0xFB, 0x78, 0x56, 0x34, 0x12});
  REQUIRE(p.size() == 3);
  CHECK(p[0].port == 0);
  CHECK(p[0].length == 1);
  CHECK(p[1].port == 1);
  CHECK(p[1].value == 0x1234);
  CHECK(p[2].port == 31);
  CHECK(p[2].value == 0x12345678);
}

TEST_CASE("DWT event counter, exception trace, PC samples, data trace") {
  const auto p = decode_all_ways({0x05, 0x3F, 0x0E, 0x2C, 0x11, 0x0E, 0x0F, 0x20, 0x0E, 0x00, 0x30, 0x17,
                                  0x18, 0x02, 0x00, 0x08, 0x15, 0x00, 0x57, 0x8C, 0x02, 0x00, 0x08, 0x6E,
                                  0x14, 0x10, 0x85, 0x2A, 0x8E, 0x34, 0x12, 0x9F, 0x01, 0x02, 0x03, 0x04});
  REQUIRE(p.size() == 11);
  CHECK(p[0].kind == PacketKind::event_counter);
  CHECK(p[0].value == 0x3F);
  CHECK(p[1].kind == PacketKind::exception);
  CHECK(p[1].port == 0x12C);
  CHECK(p[1].info == 1);
  CHECK(p[2].port == 15);
  CHECK(p[2].info == 2);
  CHECK(p[3].port == 0);
  CHECK(p[3].info == 3);
  CHECK(p[4].kind == PacketKind::pc_sample);
  CHECK(p[4].value == 0x08000218);
  CHECK(p[5].kind == PacketKind::pc_sample);
  CHECK(p[5].info == 1);
  CHECK(p[6].kind == PacketKind::data_trace_pc);
  CHECK(p[6].port == 1);
  CHECK(p[6].value == 0x0800028C);
  CHECK(p[7].kind == PacketKind::data_trace_address);
  CHECK(p[7].port == 2);
  CHECK(p[7].value == 0x1014);
  CHECK(p[8].kind == PacketKind::data_trace_value);
  CHECK(p[8].info == 0);
  CHECK(p[8].length == 1);
  CHECK(p[9].kind == PacketKind::data_trace_value);
  CHECK(p[9].info == 1);
  CHECK(p[9].port == 0);
  CHECK(p[9].value == 0x1234);
  CHECK(p[10].port == 1);
  CHECK(p[10].info == 1);
  CHECK(p[10].value == 0x04030201);
}

TEST_CASE("reserved discriminators and odd sizes are hardware packets, payload consumed") {
  const auto p = decode_all_ways({0x1D, 0xAA, 0x06, 0x01, 0x02, 0x16, 0x01, 0x2, 0x01, 0x43});
  REQUIRE(p.size() == 4);
  CHECK(p[0].kind == PacketKind::hardware);
  CHECK(p[0].address == 3);
  CHECK(p[1].kind == PacketKind::hardware);  // event counter must be 1 byte
  CHECK(p[2].kind == PacketKind::hardware);  // PC sample of 2 bytes
  CHECK(p[3].kind == PacketKind::instrumentation);
}

TEST_CASE("reserved headers are coalesced into one malformed report") {
  const auto p = decode_all_ways({0x90, 0xA0, 0x04, 0x00, 0x00, 0x01, 0x41});
  REQUIRE(p.size() == 2);
  CHECK(p[0].kind == PacketKind::malformed);
  CHECK(p[0].value == 5);  // 90 A0 04 + two stray zero bytes
  CHECK(p[1].value == 0x41);
}

TEST_CASE("end of input inside a packet is reported as truncated") {
  const auto p = decode_all_ways({0x03, 0x01, 0x02});
  REQUIRE(p.size() == 1);
  CHECK(p[0].kind == PacketKind::malformed);
  CHECK(p[0].info == static_cast<std::uint8_t>(MalformedReason::truncated));
  CHECK(p[0].value == 3);
}

TEST_CASE("strict sync: after garbage nothing is decoded until the next sync") {
  const Bytes bytes{0x90, 0x01, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x42};
  const auto lenient = decode_packets(bytes);
  REQUIRE(lenient.size() == 4);
  CHECK(lenient[1].value == 0x41);
  const auto strict = decode_packets(bytes, 1, DecoderOptions{true, false});
  REQUIRE(strict.size() == 3);
  CHECK(strict[0].kind == PacketKind::malformed);
  CHECK(strict[0].value == 3);
  CHECK(strict[1].kind == PacketKind::sync);
  CHECK(strict[2].value == 0x42);
}

TEST_CASE("wait_for_sync skips a stream's start up to the first sync") {
  const auto p =
      decode_packets({0x01, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x42}, 0, DecoderOptions{false, true});
  REQUIRE(p.size() == 3);
  CHECK(p[0].kind == PacketKind::malformed);
  CHECK(p[0].info == static_cast<std::uint8_t>(MalformedReason::unsynchronized));
  CHECK(p[1].kind == PacketKind::sync);
  CHECK(p[2].value == 0x42);
}
