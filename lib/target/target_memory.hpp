// What a collector needs from a target, whatever connects to it: halt and resume the
// CPU, read and write memory (while halted, or also while running when the link can). Implemented over a GDB server
// (lib/gdb) and directly over a CMSIS-DAP probe (lib/dap).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace tp::target {

// A read or write the target refused (unmapped address, bus fault): the address range
// is named, the connection itself is still usable.
class MemoryError : public Error {
 public:
  MemoryError(std::uint64_t address, std::size_t length, const std::string& message)
      : Error(ExitCode::bad_input, message, ErrorCode::memory_access_error), address_(address), length_(length) {}
  [[nodiscard]] std::uint64_t address() const noexcept { return address_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }

 private:
  std::uint64_t address_;
  std::size_t length_;
};

class TargetMemory {
 public:
  TargetMemory() = default;
  TargetMemory(const TargetMemory&) = delete;
  TargetMemory& operator=(const TargetMemory&) = delete;
  TargetMemory(TargetMemory&&) = delete;
  TargetMemory& operator=(TargetMemory&&) = delete;
  virtual ~TargetMemory() = default;

  // Stops the CPU (no-op when already halted). Throws Error(timeout) if it does not stop.
  virtual void halt() = 0;
  // Lets it run again.
  virtual void resume() = 0;
  [[nodiscard]] virtual bool halted() const noexcept = 0;

  // Whether reads and writes work while the CPU runs (a probe's MEM-AP does; a GDB server in
  // all-stop mode answers only a halted target): a poller halts around its accesses otherwise.
  [[nodiscard]] virtual bool reads_while_running() const noexcept { return false; }

  // Reads `length` bytes in as few transactions as the link allows. MemoryError for
  // memory the target refuses; Error(io_error / timeout) when the link fails.
  virtual std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) = 0;
  virtual void write(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;
  // Reads (appending to `out`), then writes `bytes` at `write_address` only once the read
  // succeeded (a ring's bytes, then the offset that gives them back): when the write fails,
  // what was read is in `out` before the error is thrown. A link that can does both in one
  // exchange (then a failed exchange appends nothing).
  virtual void read_then_write(std::uint64_t address, std::size_t length, std::uint64_t write_address,
                               std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) {
    const std::vector<std::uint8_t> data = read(address, length);
    out.insert(out.end(), data.begin(), data.end());
    write(write_address, bytes);
  }
  // As read_then_write, and between the read and the write the word just before
  // `write_address`, returned (RTT on a running core: the ring, its WrOff as the target left
  // it while the ring was read, then RdOff, whose word follows WrOff).
  virtual std::uint32_t read_check_then_write(std::uint64_t address, std::size_t length, std::uint64_t write_address,
                                              std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) {
    const std::vector<std::uint8_t> data = read(address, length);
    out.insert(out.end(), data.begin(), data.end());
    const std::vector<std::uint8_t> word = read(write_address - 4, 4);
    write(write_address, bytes);
    return static_cast<std::uint32_t>(word[0]) | (static_cast<std::uint32_t>(word[1]) << 8U) |
           (static_cast<std::uint32_t>(word[2]) << 16U) | (static_cast<std::uint32_t>(word[3]) << 24U);
  }

  // Resumes the target if it is halted and lets go of it. Never throws: it runs on every
  // exit path, including after the link failed.
  virtual void release() noexcept = 0;

  // Request/response exchanges with the server or probe so far (what a poll cycle costs).
  [[nodiscard]] virtual std::uint64_t round_trips() const noexcept = 0;
  [[nodiscard]] virtual std::string description() const = 0;
  // How the link behaved (retries, modes), for --stats.
  [[nodiscard]] virtual std::string link_statistics() const { return {}; }
};

}  // namespace tp::target
