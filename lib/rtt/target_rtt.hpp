// RTT over a target's memory (lib/target: a GDB server or a CMSIS-DAP probe): finding the
// control block, reading an up buffer, writing a down buffer, as SEGGER's host side does.
// Reads of a ring take one transfer per piece (one, or two when it wraps), never per word.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rtt/control_block.hpp"
#include "target/target_memory.hpp"

namespace tp::rtt {

struct LocateSettings {
  std::optional<std::uint32_t> address;  // --address, or the ELF's _SEGGER_RTT
  std::optional<MemoryRange> scan;       // where to look for the id
  std::optional<MemoryRange> ram;        // where buffers may be (checked when given)
  std::function<void()> between_reads;   // a scan calls it between its 4 KiB reads, when given
};

// An option's 32-bit address (0x20000000 or decimal); Error(usage) naming `option` otherwise.
std::uint32_t parse_address(std::string_view text, std::string_view option);
// An option's START:SIZE (SIZE a byte count, 64K or 4G, or 0x...): inside the 32-bit address
// space (START+SIZE at most 2^32, so 0:4G is all of it) and not empty; Error(usage) otherwise.
MemoryRange parse_memory_range(std::string_view text, std::string_view option);

// Reads and checks the control block where the settings say (or finds it by scanning for its
// id, in 4 KiB reads). nullopt with `problem` when it is not there or not valid yet; throws
// Error(usage) when a scan finds more than one valid block (their addresses named).
std::optional<ControlBlock> locate(target::TargetMemory& memory, const LocateSettings& settings, std::string& problem);

// The buffers' names (C strings of up to 32 bytes, often in flash); unreadable: empty.
void read_names(target::TargetMemory& memory, ControlBlock& block);

// What one read of an up buffer found.
struct UpRead {
  std::uint32_t bytes = 0;
  std::uint32_t fill = 0;      // bytes waiting when it was read
  std::uint32_t left = 0;      // of them, not read this time (over the read's bound): the next read's
  bool full = false;           // the ring was full (NO_BLOCK_SKIP: within an eighth of it): writes may be lost
  bool reinitialised = false;  // the descriptor changed under us (a target reset, a new block)
  std::string problem;         // why reinitialised
};

// An up buffer: read() appends what waits (at most `most` bytes) to `out` and gives what it
// read back (RdOff). When the RdOff write fails, the bytes read are in `out` all the same
// (the target will send them again: better twice than never) and the error is thrown.
class UpChannel {
 public:
  explicit UpChannel(Buffer buffer) : buffer_(std::move(buffer)), last_read_(buffer_.read) {}
  UpRead read(target::TargetMemory& memory, std::vector<std::uint8_t>& out,
              std::uint32_t most = std::numeric_limits<std::uint32_t>::max());
  [[nodiscard]] const Buffer& buffer() const noexcept { return buffer_; }

 private:
  Buffer buffer_;
  std::uint32_t last_read_;  // the RdOff we wrote: another value means someone reset the block
};

// A down buffer: write() puts as much of `bytes` as there is room for; returns how many.
class DownChannel {
 public:
  explicit DownChannel(Buffer buffer) : buffer_(std::move(buffer)) {}
  std::size_t write(target::TargetMemory& memory, std::span<const std::uint8_t> bytes);
  [[nodiscard]] const Buffer& buffer() const noexcept { return buffer_; }

 private:
  Buffer buffer_;
};

}  // namespace tp::rtt
