// Real captures from ../shared/reference/captures (see its README). The test suite
// "captures" runs as its own ctest test (unit_captures), reported as skipped where the
// shared material is absent; run on its own without it, every case fails, never passes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "helpers.hpp"
#include "session_helpers.hpp"

using namespace tp;
using namespace tp::itm;
using tp::test::decode_lines;
using tp::test::decode_packets;
using tp::test::Json;

namespace {

const std::filesystem::path captures = std::filesystem::path(TRACEPIPE_SHARED_DIR) / "reference" / "captures";

void require_captures() {
  REQUIRE_MESSAGE(std::filesystem::exists(captures), captures.string()
                                                         << " not found (the shared reference captures are absent)");
}

std::vector<std::uint8_t> read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE_BEGIN("captures");

TEST_CASE("probe-rs example_capture1 decodes as asserted upstream") {
  require_captures();
  const auto p = decode_packets(read(captures / "probe-rs" / "example_capture1.bin"), 1);
  REQUIRE(p.size() == 10);
  CHECK(p[0] == make_instrumentation(0, 65, 4));
  CHECK(p[1].kind == PacketKind::local_timestamp);
  CHECK(p[1].value == 1800780);
  CHECK(p[1].info == 0);
  CHECK(p[2] == make_instrumentation(0, 66, 4));
  CHECK(p[3].value == 29);
  CHECK(p[4] == make_instrumentation(0, 67, 4));
  CHECK(p[5].kind == PacketKind::overflow);
  CHECK(p[6] == make_data_trace_pc(0, 0x08000056));
  CHECK(p[7].kind == PacketKind::overflow);
  CHECK(p[8] == make_data_trace_value(0, true, 0x5B7FEFE2, 4));
  CHECK(p[9].kind == PacketKind::local_timestamp);
  CHECK(p[9].value == 1092);
  CHECK(p[9].info == 3);
}

TEST_CASE("probe-rs example_capture2 decodes as asserted upstream, ending inside an LTS") {
  require_captures();
  const auto p = decode_packets(read(captures / "probe-rs" / "example_capture2.bin"), 1);
  REQUIRE(p.size() == 9);
  CHECK(p[0] == make_data_trace_pc(0, 0x08000044));
  CHECK(p[1] == make_data_trace_value(0, false, 727, 4));
  CHECK(p[2].value == 1800865);
  CHECK(p[3] == make_data_trace_pc(0, 0x08000048));
  CHECK(p[4].kind == PacketKind::overflow);
  CHECK(p[5] == make_data_trace_pc(0, 0x08000060));
  CHECK(p[6].kind == PacketKind::overflow);
  CHECK(p[7] == make_data_trace_value(0, true, 728, 4));
  CHECK(p[8].kind == PacketKind::malformed);  // F0 C5: the incomplete LTS1, reported
  CHECK(p[8].info == static_cast<std::uint8_t>(MalformedReason::truncated));
  CHECK(p[8].value == 2);
}

TEST_CASE("rtic-scope capture: the exception sequence") {
  require_captures();
  const auto packets = decode_packets(read(captures / "rtic-scope-itm" / "itm.bin"), 1);
  std::vector<std::pair<int, int>> exceptions;
  int syncs = 0;
  int lts = 0;
  for (const Packet& p : packets) {
    CHECK(p.kind != PacketKind::malformed);
    if (p.kind == PacketKind::exception) exceptions.emplace_back(p.port, p.info);
    syncs += p.kind == PacketKind::sync ? 1 : 0;
    lts += p.kind == PacketKind::local_timestamp ? 1 : 0;
  }
  // IRQ6 enter, IRQ8 enter, IRQ8 exit, IRQ7 enter, IRQ7 exit, IRQ6 return, thread.
  const std::vector<std::pair<int, int>> expected{{22, 1}, {24, 1}, {24, 2}, {23, 1}, {23, 2}, {22, 3}, {0, 1}, {0, 1}};
  CHECK(exceptions == expected);
  // Fourteen runs of five zero bytes and 0x80 (the capture's README says 13).
  CHECK(syncs == 14);
  CHECK(lts == 10);
}

TEST_CASE("sigrok STM32F105: TPIU bytes and extracted stream 1 give the same records") {
  require_captures();
  const auto dir = captures / "sigrok-stm32f105";
  PortMap map = PortMap::standard();
  map.set(1, PortConfig{"Sort", DecoderType::text, "%u", true, {}});  // text and 4-byte values
  SessionOptions bare;
  bare.timestamps = TimestampMode::none;
  SessionOptions tpiu = bare;
  tpiu.tpiu = true;
  const auto from_stream = decode_lines(read(dir / "stm32f105_itm_stream1.bin"), bare, map);
  const auto from_tpiu = decode_lines(read(dir / "stm32f105_swo_tpiu_raw.bin"), tpiu, map, 16 * 7);
  CHECK(from_stream == from_tpiu);

  int pc_samples = 0;
  int overflows = 0;
  int sorts = 0;
  std::string console;
  std::vector<std::string> values;
  for (const auto& line : from_stream) {
    const Json record(line);
    const std::string kind = record.str("/event/kind");
    CHECK(kind != "Malformed");
    if (kind == "PcSample") ++pc_samples;
    if (kind == "Overflow") ++overflows;
    if (kind == "Text" && record.u64("/port") == 0) console += record.str("/event/data/message");
    if (kind == "Text" && record.u64("/port") == 1) {
      const std::string message = record.str("/event/data/message");
      if (message == "Sort") {
        ++sorts;
      } else if (sorts == 1) {
        values.push_back(message);
      }
    }
  }
  CHECK(pc_samples == 393);
  CHECK(overflows == 14);
  CHECK(console == "OnOffOnOffOnOffOnOffOnOff");
  CHECK(sorts >= 1);
  CHECK(values == std::vector<std::string>{"2", "2", "11", "35", "235"});

  // The deformatter alone reproduces sigrok's stream extraction byte for byte.
  const auto raw = read(dir / "stm32f105_swo_tpiu_raw.bin");
  for (const auto& stream : {std::pair{1, "stm32f105_itm_stream1.bin"}, std::pair{2, "stm32f105_etm_stream2.bin"},
                             std::pair{0x7D, "stm32f105_trigger_id0x7d.bin"}}) {
    TpiuDeformatter d(static_cast<std::uint8_t>(stream.first));
    std::vector<std::uint8_t> out;
    d.feed(raw, out);
    CHECK_MESSAGE(out == read(dir / stream.second), "stream " << stream.first);
  }
}

TEST_SUITE_END();
