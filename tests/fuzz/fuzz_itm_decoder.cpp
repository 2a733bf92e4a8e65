// Fuzz target: the ITM/DWT packet decoder, fed in chunks; decoding must not depend on
// how the bytes are split, and malformed reports must account for real bytes.
#include <cstdlib>
#include <vector>

#include "itm/decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const tp::itm::DecoderOptions options{(data[0] & 1U) != 0, (data[0] & 2U) != 0};
  const std::size_t chunk = 1U + (data[0] >> 2U);
  const std::span<const std::uint8_t> input(data + 1, size - 1);

  std::vector<tp::itm::Packet> whole;
  tp::itm::ItmDecoder a(options);
  const auto collect_whole = [&](const tp::itm::Packet& p) { whole.push_back(p); };
  a.feed(input, collect_whole);
  a.finish(collect_whole);

  std::vector<tp::itm::Packet> split;
  tp::itm::ItmDecoder b(options);
  const auto collect_split = [&](const tp::itm::Packet& p) { split.push_back(p); };
  for (std::size_t i = 0; i < input.size(); i += chunk)
    b.feed(input.subspan(i, std::min(chunk, input.size() - i)), collect_split);
  b.finish(collect_split);

  // A sink that takes byte runs must see the same writes, expanded.
  struct RunSink {
    std::vector<tp::itm::Packet>& packets;
    void operator()(const tp::itm::Packet& p) const { packets.push_back(p); }
    void byte_run(std::uint16_t port, std::span<const std::uint8_t> bytes) const {
      for (const std::uint8_t b : bytes) {
        tp::itm::Packet p{
            tp::itm::PacketKind::instrumentation, 0, 1, static_cast<std::uint8_t>(port & 31U), port, 0, b};
        p.header = static_cast<std::uint8_t>((static_cast<unsigned>(p.address) << 3U) | 1U);
        packets.push_back(p);
      }
    }
  };
  std::vector<tp::itm::Packet> runs;
  tp::itm::ItmDecoder c(options);
  for (std::size_t i = 0; i < input.size(); i += chunk)
    c.feed(input.subspan(i, std::min(chunk, input.size() - i)), RunSink{runs});
  c.finish(RunSink{runs});

  if (whole != split || whole != runs) std::abort();
  std::uint64_t malformed_bytes = 0;
  for (const auto& p : whole) {
    if (p.kind == tp::itm::PacketKind::malformed) {
      if (p.value == 0) std::abort();
      malformed_bytes += p.value;
    }
  }
  if (malformed_bytes > input.size()) std::abort();
  return 0;
}
