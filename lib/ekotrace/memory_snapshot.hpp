// The memory a poll cycle reads, taken while the target is halted: regions are sorted
// and merged into as few reads as the link allows (nearby regions share one read), and
// changes are written back as one write per merged span. Writing back the unchanged
// bytes between two changes is safe because they were read during the same halt.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "elf/elf_file.hpp"
#include "target/target_memory.hpp"

namespace tp::ekotrace {

struct Region {
  std::uint64_t address = 0;
  std::uint64_t length = 0;
};

class MemorySnapshot {
 public:
  // Regions closer than merge_gap bytes are read together, up to max_span bytes a read.
  MemorySnapshot(target::TargetMemory& memory, std::size_t max_span, std::size_t merge_gap);

  // Reads every region not held yet. A merged read the target refuses is retried region
  // by region, so one bad address does not hide the others; refused regions stay absent.
  void read(std::vector<Region> regions);
  [[nodiscard]] bool has(std::uint64_t address, std::uint64_t length) const noexcept;
  // Precondition: has(address, length).
  [[nodiscard]] std::span<const std::uint8_t> bytes(std::uint64_t address, std::uint64_t length) const noexcept;
  [[nodiscard]] std::uint64_t word(std::uint64_t address, unsigned size, elf::Endian endian) const noexcept;

  // Changes bytes inside what was read (returns false, changing nothing, if not all held).
  bool modify(std::uint64_t address, std::span<const std::uint8_t> bytes);
  // Writes each changed span back in one write (from its first to its last change).
  void write_back();
  void clear() noexcept { spans_.clear(); }
  [[nodiscard]] std::size_t reads() const noexcept { return reads_; }

 private:
  struct Span {
    std::uint64_t address = 0;
    std::vector<std::uint8_t> bytes;
    std::size_t dirty_begin = 0;
    std::size_t dirty_end = 0;  // dirty_begin == dirty_end: clean
  };
  [[nodiscard]] const Span* find(std::uint64_t address, std::uint64_t length) const noexcept;
  void read_span(const std::vector<Region>& members, std::uint64_t begin, std::uint64_t end);

  target::TargetMemory& memory_;
  std::size_t max_span_;
  std::size_t merge_gap_;
  std::vector<Span> spans_;
  std::size_t reads_ = 0;
};

// Encodes an unsigned value of `size` bytes in the target's byte order.
void encode_word(std::uint64_t value, unsigned size, elf::Endian endian, std::span<std::uint8_t> out) noexcept;
std::uint64_t decode_word(std::span<const std::uint8_t> bytes, elf::Endian endian) noexcept;

}  // namespace tp::ekotrace
