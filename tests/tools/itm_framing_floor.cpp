// itm-framing-floor: how fast one core can merely walk an ITM stream packet by packet
// (ARMv7-M ARM D4.2: each packet's length from its header, a local timestamp's from its
// continuation bits) and count packets by form, with no values decoded, no ports, no
// timestamps applied and no records: the floor under any decoder that reads the stream in
// order on one thread, for scripts/bench/itm-mixes.sh. Written apart from lib/itm (it shares
// no code with the decoder). Rare forms (sync, overflow, extension, global timestamps) are
// taken as one byte: a floor, not a decoder.
// Usage: itm-framing-floor FILE   prints "MB/s packets" (the best of 5 passes, file in memory)
#include <fmt/format.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

enum Form : std::uint8_t { other, software, hardware, short_timestamp, long_timestamp, forms };

struct HeaderInfo {
  std::uint8_t payload = 0;
  Form form = other;
};

constexpr std::array<HeaderInfo, 256> header_info = [] {
  std::array<HeaderInfo, 256> table{};
  for (unsigned h = 0; h < 256; ++h) {
    constexpr std::array<std::uint8_t, 4> source_payload{0, 1, 2, 4};  // SS (D4.2.8)
    if ((h & 3U) != 0) {
      table[h] = {source_payload[h & 3U], (h & 4U) != 0 ? hardware : software};
    } else if ((h & 0x8FU) == 0 && h != 0 && h != 0x70) {
      table[h] = {0, short_timestamp};  // LTS2
    } else if ((h & 0xCFU) == 0xC0U) {
      table[h] = {0, long_timestamp};  // LTS1: 1-4 bytes, bit 7 set on all but the last
    }
  }
  return table;
}();

// One pass: the packets of each form.
std::array<std::uint64_t, forms> walk(const std::vector<std::uint8_t>& bytes) {
  std::array<std::uint64_t, forms> counts{};
  const std::uint8_t* p = bytes.data();
  const std::uint8_t* const end = bytes.data() + bytes.size() - 9;
  while (p < end) {
    const HeaderInfo info = header_info[p[0]];
    std::uint32_t after = 0;
    std::memcpy(&after, p + 1, sizeof after);
    const auto continuation = static_cast<unsigned>(std::countr_zero((~after & 0x80808080U) | 0x80000000U)) / 8U + 1U;
    p += 1U + (info.form == long_timestamp ? continuation : info.payload);
    ++counts[info.form];
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: itm-framing-floor FILE\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::size_t size = bytes.size();
  bytes.resize(size + 16);  // the last loads read past the end
  double best = 1e30;
  std::uint64_t packets = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    const auto counts = walk(bytes);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
    packets = 0;
    for (const std::uint64_t n : counts) packets += n;
  }
  fmt::print("{:.0f} {}\n", static_cast<double>(size) / 1e6 / best, packets);
  return 0;
}
