// Fuzz target: the RTT control block parser on bytes read from a target (which may be
// anything: a half-initialised block, a stale copy, another program's RAM). A block it
// accepts must keep SEGGER_RTT.h's promises, no ring may overlap the block, and the ring
// arithmetic must stay inside it.
#include <cstdlib>
#include <optional>
#include <string>

#include "rtt/control_block.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::uint32_t address = tp::rtt::load_u32(data) & ~3U;
  const std::span<const std::uint8_t> bytes(data + 4, size - 4);
  std::string problem;
  const std::optional<tp::rtt::MemoryRange> ram =
      (data[0] & 1U) != 0 ? std::optional(tp::rtt::MemoryRange{0x2000'0000, 0x1'0000}) : std::nullopt;
  const auto block = tp::rtt::parse_control_block(address, bytes, ram, problem);
  if (!block) {
    if (problem.empty()) std::abort();
  } else {
    if (block->size() > bytes.size() || block->up.empty()) std::abort();
    for (const auto* buffers : {&block->up, &block->down}) {
      for (const tp::rtt::Buffer& b : *buffers) {
        if ((b.flags >> 24U) != 0) std::abort();
        if (!b.configured()) continue;
        if (b.write >= b.size || b.read >= b.size || (ram && !ram->holds(b.buffer, b.size))) std::abort();
        // A ring never lies over the block it is described in.
        if (b.buffer < std::uint64_t{address} + block->size() && address < std::uint64_t{b.buffer} + b.size)
          std::abort();
        const auto waiting = tp::rtt::waiting_bytes(b.read, b.write, b.size);
        const auto room = tp::rtt::free_space(b.read, b.write, b.size);
        if (waiting.total() + room.total() != b.size - 1) std::abort();
        if (waiting.first_offset + waiting.first_length > b.size || waiting.second_length > b.read) std::abort();
        if (room.first_offset + room.first_length > b.size || room.second_length >= b.size) std::abort();
      }
    }
  }
  for (const std::size_t offset : tp::rtt::find_id(bytes)) {
    if (offset + tp::rtt::control_block_id.size() > bytes.size()) std::abort();
  }
  return 0;
}
