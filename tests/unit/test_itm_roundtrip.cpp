// Property tests: random packet sequences -> encoder -> decoder == the sequence,
// also when split anywhere and with garbage inserted before a sync. These check lib/itm's
// decoder and encoder against each other (consistency); the decoder against the ARM ARM is
// test_itm_decoder.cpp (bytes written by hand from D4.2), real captures of other tools
// (unit_captures, cli_itm_decode_captures) and an independent decoder (tests/swo/itm_model.py).
#include <doctest/doctest.h>

#include <random>

#include "helpers.hpp"

using namespace tp::itm;
using tp::test::decode_packets;

namespace {

class PacketGenerator {
 public:
  explicit PacketGenerator(std::uint32_t seed) : rng_(seed) {}

  // A valid packet sequence as a target could emit it (page packets before SWITs).
  std::vector<Packet> sequence(std::size_t count) {
    std::vector<Packet> packets;
    std::uint8_t page = 0;
    while (packets.size() < count) {
      const Packet p = one();
      if (p.kind == PacketKind::instrumentation && (p.port >> 5U) != page) {
        page = static_cast<std::uint8_t>(p.port >> 5U);
        packets.push_back(make_stimulus_page(page));
      }
      if (p.kind == PacketKind::sync) page = 0;
      if (p.kind == PacketKind::stimulus_page) page = static_cast<std::uint8_t>(p.value);
      packets.push_back(p);
    }
    return packets;
  }

  std::vector<std::uint8_t> garbage(std::size_t max) {
    std::vector<std::uint8_t> bytes(pick(1, static_cast<std::uint32_t>(max)));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(pick(0, 255));
    return bytes;
  }

 private:
  std::uint32_t pick(std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng_);
  }
  std::uint8_t size() { return std::array<std::uint8_t, 3>{1, 2, 4}[pick(0, 2)]; }
  std::uint32_t value(std::uint8_t bytes) {
    const std::uint32_t v = pick(0, 0xFFFFFFFFU);
    return bytes == 4 ? v : v & ((1U << (8U * bytes)) - 1U);
  }

  Packet one() {
    switch (pick(0, 17)) {
      case 0:
        return make_sync();
      case 1:
        return make_overflow();
      case 2:
        return make_local_timestamp(pick(0, (1U << 28U) - 1U) >> pick(0, 27), static_cast<std::uint8_t>(pick(0, 3)));
      case 3:
        return make_global_timestamp1(pick(0, (1U << 26U) - 1U) >> pick(0, 25), pick(0, 1) == 1, pick(0, 1) == 1);
      case 4:
        return make_global_timestamp2((static_cast<std::uint64_t>(pick(0, 0xFFFFFFFFU)) << 6U) | pick(0, 63),
                                      pick(0, 1) == 1);
      case 5:
        return make_stimulus_page(static_cast<std::uint8_t>(pick(0, 7)));
      case 6:
        return make_event_counter(static_cast<std::uint8_t>(pick(0, 63)));
      case 7:
        return make_exception(static_cast<std::uint16_t>(pick(0, 511)), static_cast<ExceptionAction>(pick(0, 3)));
      case 8:
        return make_pc_sample(pick(0, 0xFFFFFFFFU));
      case 9:
        return make_sleeping_pc_sample();
      case 10:
        return make_data_trace_pc(static_cast<std::uint8_t>(pick(0, 3)), pick(0, 0xFFFFFFFFU));
      case 11:
        return make_data_trace_address(static_cast<std::uint8_t>(pick(0, 3)),
                                       static_cast<std::uint16_t>(pick(0, 0xFFFF)));
      case 12: {
        const std::uint8_t s = size();
        return make_data_trace_value(static_cast<std::uint8_t>(pick(0, 3)), pick(0, 1) == 1, value(s), s);
      }
      case 13: {  // extension with SH=1, or a continued one
        Packet p{PacketKind::extension, 0, 0, 0, 0, static_cast<std::uint8_t>(pick(0, 1)), pick(0, 7)};
        p.length = p.info == 1 ? static_cast<std::uint8_t>(pick(0, 4)) : static_cast<std::uint8_t>(pick(1, 4));
        if (p.length > 0) p.value |= static_cast<std::uint64_t>(pick(0, (1U << (7U * p.length - 1U)) - 1U)) << 3U;
        std::vector<std::uint8_t> bytes;
        encode_packet(p, bytes);
        p.header = bytes[0];
        return p;
      }
      default: {
        const std::uint8_t s = size();
        return make_instrumentation(static_cast<std::uint16_t>(pick(0, 3) == 0 ? pick(0, 255) : pick(0, 31)), value(s),
                                    s);
      }
    }
  }

  std::mt19937 rng_;
};

std::vector<std::uint8_t> encode_all(const std::vector<Packet>& packets) {
  std::vector<std::uint8_t> bytes;
  for (const Packet& p : packets) encode_packet(p, bytes);
  return bytes;
}

}  // namespace

TEST_CASE("round trip: random packet sequences, any split") {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    PacketGenerator gen(seed);
    const auto packets = gen.sequence(300);
    const auto bytes = encode_all(packets);
    for (std::size_t chunk : {0U, 1U, 5U, 64U}) {
      const auto decoded = decode_packets(bytes, chunk);
      REQUIRE_MESSAGE(decoded.size() == packets.size(), "seed " << seed << " chunk " << chunk);
      for (std::size_t i = 0; i < packets.size(); ++i) {
        REQUIRE_MESSAGE(decoded[i] == packets[i],
                        "seed " << seed << " packet " << i << " kind " << packet_kind_name(packets[i].kind));
      }
    }
  }
}

TEST_CASE("round trip with garbage: the decoder resyncs at the next sync") {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    PacketGenerator gen(seed);
    const auto before = gen.sequence(50);
    const auto after = gen.sequence(50);
    auto bytes = encode_all(before);
    const auto garbage = gen.garbage(40);
    bytes.insert(bytes.end(), garbage.begin(), garbage.end());
    encode_packet(make_sync(), bytes);
    const auto after_bytes = encode_all(after);
    bytes.insert(bytes.end(), after_bytes.begin(), after_bytes.end());

    for (const bool strict : {false, true}) {
      const auto decoded = decode_packets(bytes, 3, DecoderOptions{strict, false});
      REQUIRE(decoded.size() >= before.size() + 1 + after.size());
      for (std::size_t i = 0; i < before.size(); ++i) REQUIRE(decoded[i] == before[i]);
      const std::size_t tail = decoded.size() - after.size();
      CHECK_MESSAGE(decoded[tail - 1].kind == PacketKind::sync, "seed " << seed);
      for (std::size_t i = 0; i < after.size(); ++i) REQUIRE_MESSAGE(decoded[tail + i] == after[i], "seed " << seed);
    }
  }
}

TEST_CASE("garbage that starts with a reserved header is reported, not decoded") {
  PacketGenerator gen(7);
  const auto after = gen.sequence(20);
  std::vector<std::uint8_t> bytes{0x90, 0x03, 0x55};
  encode_packet(make_sync(), bytes);
  const auto after_bytes = encode_all(after);
  bytes.insert(bytes.end(), after_bytes.begin(), after_bytes.end());
  const auto decoded = decode_packets(bytes, 1, DecoderOptions{true, false});
  REQUIRE(decoded.size() == after.size() + 2);
  CHECK(decoded[0].kind == PacketKind::malformed);
  CHECK(decoded[0].value == 3);
  CHECK(decoded[1].kind == PacketKind::sync);
}

TEST_CASE("stream encoder inserts page packets and resets after sync") {
  std::vector<std::uint8_t> bytes;
  ItmStreamEncoder enc(bytes);
  enc.write(40, 7, 1);
  enc.write(41, 8, 1);
  enc.sync();
  enc.write(40, 9, 1);
  const auto p = decode_packets(bytes);
  REQUIRE(p.size() == 6);
  CHECK(p[0].kind == PacketKind::stimulus_page);
  CHECK(p[1].port == 40);
  CHECK(p[2].port == 41);
  CHECK(p[3].kind == PacketKind::sync);
  CHECK(p[4].kind == PacketKind::stimulus_page);
  CHECK(p[5].port == 40);
}
