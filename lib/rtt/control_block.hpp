// SEGGER RTT's control block as SEGGER_RTT.h declares it (a 32-bit little-endian target):
//
//   SEGGER_RTT_CB       acID[16] "SEGGER RTT"  MaxNumUpBuffers  MaxNumDownBuffers   (24 bytes)
//                       aUp[MaxNumUpBuffers], aDown[MaxNumDownBuffers]              (24 bytes each)
//   SEGGER_RTT_BUFFER   sName  pBuffer  SizeOfBuffer  WrOff  RdOff  Flags           (6 words)
//
// Up buffers go target -> host: the target writes WrOff, the host reads the bytes from RdOff
// to WrOff and writes RdOff back. Down buffers go host -> target with the roles swapped. One
// byte of each ring stays free, so WrOff == RdOff is empty and WrOff + 1 == RdOff is full.
// Pure: parsing and checking bytes read from the target, the ring arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::rtt {

inline constexpr std::string_view control_block_id = "SEGGER RTT";
inline constexpr std::size_t header_size = 24;
inline constexpr std::size_t descriptor_size = 24;
inline constexpr std::uint32_t descriptor_write_offset = 12;  // WrOff within a descriptor
inline constexpr std::uint32_t descriptor_read_offset = 16;   // RdOff
// SEGGER_RTT_Conf.h's defaults are 3 and 3; J-Link accepts more. Beyond this it is not a block.
inline constexpr std::int32_t max_buffers = 64;
// Larger rings exist, but a "buffer" over this is a wrong pointer read as a size.
inline constexpr std::uint32_t max_buffer_size = 16U << 20U;

// SEGGER_RTT.h SEGGER_RTT_MODE_*: Flags[1:0].
enum class Mode : std::uint8_t { no_block_skip = 0, no_block_trim = 1, block_if_fifo_full = 2, reserved = 3 };
std::string_view mode_name(Mode mode) noexcept;

enum class Direction : std::uint8_t { up, down };

struct Buffer {
  Direction direction = Direction::up;
  unsigned index = 0;
  std::uint32_t descriptor = 0;  // the descriptor's address
  std::uint32_t name_pointer = 0;
  std::uint32_t buffer = 0;
  std::uint32_t size = 0;
  std::uint32_t write = 0;
  std::uint32_t read = 0;
  std::uint32_t flags = 0;
  std::string name;  // read separately (the name lives elsewhere, often in flash)

  [[nodiscard]] Mode mode() const noexcept { return static_cast<Mode>(flags & 3U); }
  [[nodiscard]] bool configured() const noexcept { return buffer != 0 && size != 0; }
};

struct ControlBlock {
  std::uint32_t address = 0;
  std::vector<Buffer> up;
  std::vector<Buffer> down;

  [[nodiscard]] std::size_t size() const noexcept { return header_size + descriptor_size * (up.size() + down.size()); }
};

// A range of target memory where buffers may be (--ram); none given: any 32-bit address.
// `size` may be 4 GiB (0:4G, the whole 32-bit space): start + size is at most 2^32.
struct MemoryRange {
  std::uint32_t start = 0;
  std::uint64_t size = 0;
  [[nodiscard]] bool holds(std::uint32_t address, std::uint32_t length) const noexcept {
    return address >= start && length <= size && address - start <= size - length;
  }
};

// The buffer counts of a header (its first 24 bytes), or why it is not a control block.
struct HeaderCounts {
  std::int32_t up = 0;
  std::int32_t down = 0;
};
std::optional<HeaderCounts> parse_header(std::span<const std::uint8_t> bytes, std::string& problem);

// The whole block (header and every descriptor, as read from `address`), checked: the id,
// the counts, every configured buffer's pointer and size (inside `ram` when given, never over
// the block itself), its offsets below its size, Flags[31:24] zero. nullopt and `problem` saying what is wrong
// otherwise (a target that has not run SEGGER_RTT_Init yet has a zero or half-written block).
std::optional<ControlBlock> parse_control_block(std::uint32_t address, std::span<const std::uint8_t> bytes,
                                                const std::optional<MemoryRange>& ram, std::string& problem);

// One descriptor's six words (re-read each poll), into `buffer` (name kept).
void parse_descriptor(std::span<const std::uint8_t, descriptor_size> bytes, Buffer& buffer);

// The bytes waiting in a ring from `read` to `write`: one or two pieces (the second from the
// ring's start when it wraps).
struct RingPieces {
  std::uint32_t first_offset = 0;
  std::uint32_t first_length = 0;
  std::uint32_t second_length = 0;  // from offset 0
  [[nodiscard]] std::uint32_t total() const noexcept { return first_length + second_length; }
};
RingPieces waiting_bytes(std::uint32_t read, std::uint32_t write, std::uint32_t size) noexcept;
// Room for the writer (one byte always stays free), as pieces from `write`.
RingPieces free_space(std::uint32_t read, std::uint32_t write, std::uint32_t size) noexcept;

// The offsets of every place `id` starts in `bytes` (a scan of RAM for the block).
std::vector<std::size_t> find_id(std::span<const std::uint8_t> bytes);

[[nodiscard]] inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8U) |
         (static_cast<std::uint32_t>(p[2]) << 16U) | (static_cast<std::uint32_t>(p[3]) << 24U);
}

}  // namespace tp::rtt
