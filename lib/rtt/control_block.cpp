#include "rtt/control_block.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace tp::rtt {

std::string_view mode_name(Mode mode) noexcept {
  static constexpr std::array<std::string_view, 4> names{"NO_BLOCK_SKIP", "NO_BLOCK_TRIM", "BLOCK_IF_FIFO_FULL",
                                                         "reserved mode 3"};
  return names[static_cast<std::size_t>(mode)];
}

std::optional<HeaderCounts> parse_header(std::span<const std::uint8_t> bytes, std::string& problem) {
  if (bytes.size() < header_size) {
    problem = "the control block is cut short";
    return std::nullopt;
  }
  if (std::memcmp(bytes.data(), control_block_id.data(), control_block_id.size()) != 0) {
    problem = "no \"SEGGER RTT\" id (the target has not run SEGGER_RTT_Init yet, or this is not the block)";
    return std::nullopt;
  }
  const auto up = static_cast<std::int32_t>(load_u32(bytes.data() + 16));
  const auto down = static_cast<std::int32_t>(load_u32(bytes.data() + 20));
  if (up < 1 || up > max_buffers || down < 0 || down > max_buffers) {
    problem =
        fmt::format("implausible buffer counts ({} up, {} down): the block is being initialised or corrupt", up, down);
    return std::nullopt;
  }
  return HeaderCounts{up, down};
}

void parse_descriptor(std::span<const std::uint8_t, descriptor_size> bytes, Buffer& buffer) {
  buffer.name_pointer = load_u32(bytes.data());
  buffer.buffer = load_u32(bytes.data() + 4);
  buffer.size = load_u32(bytes.data() + 8);
  buffer.write = load_u32(bytes.data() + 12);
  buffer.read = load_u32(bytes.data() + 16);
  buffer.flags = load_u32(bytes.data() + 20);
}

namespace {

// What is wrong with a descriptor, or empty. `block` is where the control block lies: a ring
// over it would be read as the target's output (and its RdOff written into the block).
std::string check_buffer(const Buffer& b, const std::optional<MemoryRange>& ram, const MemoryRange& block) {
  const std::string_view which = b.direction == Direction::up ? "up" : "down";
  if ((b.flags >> 24U) != 0)
    return fmt::format("{} buffer {}: Flags[31:24] not zero (0x{:08x})", which, b.index, b.flags);
  if (b.buffer == 0 && b.size == 0) return {};  // not configured
  if (b.buffer == 0 || b.size < 2 || b.size > max_buffer_size) {
    return fmt::format("{} buffer {}: implausible pointer 0x{:08x} / size {}", which, b.index, b.buffer, b.size);
  }
  if (b.buffer > 0xFFFF'FFFFU - b.size) {
    return fmt::format("{} buffer {}: 0x{:08x}+{} runs past 4 GiB", which, b.index, b.buffer, b.size);
  }
  if (ram && !ram->holds(b.buffer, b.size)) {
    return fmt::format("{} buffer {}: 0x{:08x}+{} is outside the RAM given (0x{:08x}+{})", which, b.index, b.buffer,
                       b.size, ram->start, ram->size);
  }
  if (b.buffer < block.start + block.size && block.start < std::uint64_t{b.buffer} + b.size) {
    return fmt::format("{} buffer {}: 0x{:08x}+{} overlaps the control block (0x{:08x}+{})", which, b.index, b.buffer,
                       b.size, block.start, block.size);
  }
  if (b.write >= b.size || b.read >= b.size) {
    return fmt::format("{} buffer {}: offsets WrOff {} / RdOff {} not below its size {}", which, b.index, b.write,
                       b.read, b.size);
  }
  return {};
}

}  // namespace

std::optional<ControlBlock> parse_control_block(std::uint32_t address, std::span<const std::uint8_t> bytes,
                                                const std::optional<MemoryRange>& ram, std::string& problem) {
  const auto counts = parse_header(bytes, problem);
  if (!counts) return std::nullopt;
  ControlBlock block;
  block.address = address;
  const std::size_t total = header_size + descriptor_size * static_cast<std::size_t>(counts->up + counts->down);
  if (bytes.size() < total) {
    problem = fmt::format("the control block is cut short ({} of {} bytes)", bytes.size(), total);
    return std::nullopt;
  }
  for (std::int32_t i = 0; i < counts->up + counts->down; ++i) {
    Buffer b;
    const bool up = i < counts->up;
    b.direction = up ? Direction::up : Direction::down;
    b.index = static_cast<unsigned>(up ? i : i - counts->up);
    const std::size_t offset = header_size + descriptor_size * static_cast<std::size_t>(i);
    b.descriptor = address + static_cast<std::uint32_t>(offset);
    parse_descriptor(bytes.subspan(offset).first<descriptor_size>(), b);
    if (std::string wrong = check_buffer(b, ram, {address, total}); !wrong.empty()) {
      problem = std::move(wrong);
      return std::nullopt;
    }
    (up ? block.up : block.down).push_back(b);
  }
  return block;
}

RingPieces waiting_bytes(std::uint32_t read, std::uint32_t write, std::uint32_t size) noexcept {
  if (size == 0 || read >= size || write >= size) return {};
  if (write >= read) return {read, write - read, 0};
  return {read, size - read, write};
}

RingPieces free_space(std::uint32_t read, std::uint32_t write, std::uint32_t size) noexcept {
  if (size == 0 || read >= size || write >= size) return {};
  if (read > write) return {write, read - write - 1, 0};
  // From write to the end, then from 0 up to read - 1 (one byte stays free).
  if (read == 0) return {write, size - write - 1, 0};
  return {write, size - write, read - 1};
}

std::vector<std::size_t> find_id(std::span<const std::uint8_t> bytes) {
  std::vector<std::size_t> found;
  const auto* begin = bytes.data();
  const auto* end = begin + bytes.size();
  for (const auto* at = begin; at + control_block_id.size() <= end;) {
    at = std::search(at, end, control_block_id.begin(), control_block_id.end());
    if (at == end) break;
    found.push_back(static_cast<std::size_t>(at - begin));
    ++at;
  }
  return found;
}

}  // namespace tp::rtt
