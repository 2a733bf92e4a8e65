#include <doctest/doctest.h>

#include <random>

#include "itm/tpiu.hpp"

using namespace tp::itm;
using Bytes = std::vector<std::uint8_t>;

namespace {
Bytes deformat(const Bytes& input, std::uint8_t stream, std::size_t chunk = 1, TpiuStats* stats = nullptr) {
  TpiuDeformatter d(stream);
  Bytes out;
  for (std::size_t i = 0; i < input.size(); i += chunk) {
    d.feed(std::span<const std::uint8_t>(input.data() + i, std::min(chunk, input.size() - i)), out);
  }
  if (stats != nullptr) *stats = d.stats();
  return out;
}
}  // namespace

TEST_CASE("a frame with an immediate ID change and LSBs in the aux byte") {
  // ID 1, data 0x17, then even data 0x19 (LSB from aux bit 1), ..., byte 14 data 0x41 (aux bit 7).
  Bytes frame{0x03, 0x17, 0x18, 0x02, 0x00, 0x08, 0x01, 0x00, 0x03, 0x55, 0x00, 0x00, 0x00, 0x00, 0x40, 0x82};
  const Bytes out = deformat(frame, 1);
  CHECK(out == Bytes{0x17, 0x19, 0x02, 0x00, 0x08, 0x55, 0x00, 0x00, 0x00, 0x00, 0x41});
}

TEST_CASE("delayed ID change: the next byte still belongs to the old stream") {
  // ID 1; data A; even slot 2 = ID 2 with aux bit 1 set (delayed): byte 3 is stream 1.
  Bytes frame{0x03, 0xAA, 0x05, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x02};
  CHECK(deformat(frame, 1) == Bytes{0xAA, 0xBB});
  CHECK(deformat(frame, 2) == Bytes{0xCC, 0xDD, 0xEE, 0xFF, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16});
}

TEST_CASE("whole data frames fed at once: LSBs from the aux byte, a sync across frames still found") {
  // Frame 1 sets stream 1 (ID change, so it is decoded byte by byte); frames 2 and 3 are data
  // only, fed in one call (the whole-frame path): every even byte takes its LSB from byte 15.
  const Bytes set_stream{0x03, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70,
                         0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0x00};
  const Bytes data_a{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0xA5};
  const Bytes data_b{0xFE, 0xFF, 0xFE, 0xEE, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xFE, 0xFF};
  Bytes input = set_stream;
  input.insert(input.end(), data_a.begin(), data_a.end());
  input.insert(input.end(), data_b.begin(), data_b.end());
  const Bytes expected{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0,  //
                       0x01, 0x01, 0x02, 0x03, 0x05, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0B, 0x0B, 0x0C, 0x0D, 0x0F,
                       0xFF, 0xFF, 0xFF, 0xEE, 0x11, 0x20, 0x31, 0x40, 0x51, 0x60, 0x71, 0x80, 0x91, 0xA0, 0xFF};
  CHECK(deformat(input, 1, input.size()) == expected);
  CHECK(deformat(input, 1, 1) == expected);

  // A full sync split across frames: FF FF FF ending one (byte 14, even with its LSB set, is an
  // ID change to 0x7F, delayed by aux bit 7), 7F starting the next. The frame after it is data
  // only but must not be taken whole: its first byte completes the sync. Then the delayed ID
  // takes effect after one more data byte.
  Bytes split_sync = set_stream;
  Bytes ends_in_sync = data_a;
  ends_in_sync[13] = 0xFF;
  ends_in_sync[14] = 0xFF;
  ends_in_sync[15] = 0xFF;
  split_sync.insert(split_sync.end(), ends_in_sync.begin(), ends_in_sync.end());
  split_sync.push_back(0x7F);
  split_sync.insert(split_sync.end(), data_a.begin(), data_a.end());
  TpiuStats stats;
  const Bytes out = deformat(split_sync, 1, split_sync.size(), &stats);
  CHECK(stats.full_syncs == 1);
  CHECK(stats.frames == 3);
  CHECK(stats.other_bytes == 14);
  CHECK(Bytes(out.begin() + 14, out.end()) ==
        Bytes{0x01, 0x01, 0x03, 0x03, 0x05, 0x05, 0x07, 0x07, 0x09, 0x09, 0x0B, 0x0B, 0x0D, 0xFF, 0x01});
  CHECK(deformat(split_sync, 1, 1) == out);
}

TEST_CASE("full sync at any alignment restarts framing; half syncs are padding; trigger counted") {
  tp::itm::TpiuFramer framer;
  Bytes stream;
  const Bytes payload{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  framer.write(1, payload, stream);
  framer.write(0x7D, Bytes{0x99}, stream);
  framer.flush(stream);
  for (std::size_t junk = 0; junk < 16; ++junk) {
    Bytes input(junk, 0x42);  // misaligned junk before a sync
    input.insert(input.end(), {0xFF, 0xFF, 0xFF, 0x7F});
    // A half sync at a 16-bit boundary inside the first frame is dropped.
    input.insert(input.end(), stream.begin(), stream.begin() + 4);
    input.insert(input.end(), {0xFF, 0x7F});
    input.insert(input.end(), stream.begin() + 4, stream.end());
    TpiuStats stats;
    CHECK(deformat(input, 1, 3, &stats) == payload);
    CHECK(stats.full_syncs == 1);
    CHECK(stats.half_syncs == 1);
    CHECK(stats.trigger_bytes == 1);
  }
}

// A consistency check of the framer and the deformatter against each other; the deformatter
// against the CoreSight formatter's rules is the hand-written frames above, and against another
// tool's frames the sigrok capture (cli_itm_decode_captures: --tpiu equals the extracted stream).
TEST_CASE("framer and deformatter are inverses for random interleaved streams") {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    TpiuFramer framer;
    Bytes framed;
    std::array<Bytes, 4> expected;
    const int runs = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int r = 0; r < runs; ++r) {
      const auto id = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(1, 3)(rng));
      Bytes run(static_cast<std::size_t>(std::uniform_int_distribution<int>(1, 20)(rng)));
      for (auto& b : run) b = static_cast<std::uint8_t>(rng());
      framer.write(id, run, framed);
      expected[id].insert(expected[id].end(), run.begin(), run.end());
      if (rng() % 10 == 0) framer.sync(framed);
    }
    framer.flush(framed);
    for (std::uint8_t id = 1; id <= 3; ++id) REQUIRE(deformat(framed, id, 5) == expected[id]);
  }
}
