// Fuzz target: the TPIU deformatter; output never exceeds the input, any split agrees (fed
// whole, whole frames take the fast path; byte by byte, none do), counts included.
#include <cstdlib>
#include <vector>

#include "itm/tpiu.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto stream = static_cast<std::uint8_t>(data[0] & 0x7FU);
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  tp::itm::TpiuDeformatter whole(stream);
  std::vector<std::uint8_t> out_whole;
  whole.feed(input, out_whole);
  tp::itm::TpiuDeformatter bytewise(stream);
  std::vector<std::uint8_t> out_bytewise;
  for (std::size_t i = 0; i < input.size(); ++i) bytewise.feed(input.subspan(i, 1), out_bytewise);
  if (out_whole != out_bytewise || out_whole.size() > input.size()) std::abort();
  if (whole.stats() != bytewise.stats() || whole.current_id() != bytewise.current_id()) std::abort();
  return 0;
}
