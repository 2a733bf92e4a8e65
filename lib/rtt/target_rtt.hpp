// RTT over a target's memory (lib/target: a GDB server or a CMSIS-DAP probe): finding the
// control block, reading an up buffer, writing a down buffer, as SEGGER's host side does.
// Reads of a ring take one transfer per piece (one, or two when it wraps), never per word.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rtt/control_block.hpp"
#include "target/target_memory.hpp"

namespace tp::rtt {

struct LocateSettings {
  std::optional<std::uint32_t> address;  // --address, or the ELF's _SEGGER_RTT
  std::optional<MemoryRange> scan;       // where to look for the id
  std::optional<MemoryRange> ram;        // where buffers may be (checked when given)
};

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
  bool full = false;           // the ring was full (NO_BLOCK_SKIP: within an eighth of it): writes may be lost
  bool reinitialised = false;  // the descriptor changed under us (a target reset, a new block)
  std::string problem;         // why reinitialised
};

// An up buffer: read() appends what waits to `out` and gives the ring back (RdOff).
class UpChannel {
 public:
  explicit UpChannel(Buffer buffer) : buffer_(std::move(buffer)), last_read_(buffer_.read) {}
  UpRead read(target::TargetMemory& memory, std::vector<std::uint8_t>& out);
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
