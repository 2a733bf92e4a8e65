#include "ekotrace/memory_snapshot.hpp"

#include <algorithm>

namespace tp::ekotrace {

void encode_word(std::uint64_t value, unsigned size, elf::Endian endian, std::span<std::uint8_t> out) noexcept {
  for (unsigned i = 0; i < size && i < out.size(); ++i) {
    const unsigned shift = endian == elf::Endian::little ? 8 * i : 8 * (size - 1 - i);
    out[i] = static_cast<std::uint8_t>(value >> shift);
  }
}

std::uint64_t decode_word(std::span<const std::uint8_t> bytes, elf::Endian endian) noexcept {
  std::uint64_t value = 0;
  const std::size_t size = std::min<std::size_t>(bytes.size(), 8);
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t shift = endian == elf::Endian::little ? 8 * i : 8 * (size - 1 - i);
    value |= static_cast<std::uint64_t>(bytes[i]) << shift;
  }
  return value;
}

MemorySnapshot::MemorySnapshot(target::TargetMemory& memory, std::size_t max_span, std::size_t merge_gap)
    : memory_(memory), max_span_(std::max<std::size_t>(max_span, 1)), merge_gap_(merge_gap) {}

const MemorySnapshot::Span* MemorySnapshot::find(std::uint64_t address, std::uint64_t length) const noexcept {
  for (const auto& span : spans_) {
    if (address >= span.address && address - span.address <= span.bytes.size() &&
        span.bytes.size() - (address - span.address) >= length) {
      return &span;
    }
  }
  return nullptr;
}

bool MemorySnapshot::has(std::uint64_t address, std::uint64_t length) const noexcept {
  return find(address, length) != nullptr;
}

std::span<const std::uint8_t> MemorySnapshot::bytes(std::uint64_t address, std::uint64_t length) const noexcept {
  const Span* span = find(address, length);
  if (span == nullptr) return {};
  return std::span(span->bytes).subspan(address - span->address, length);
}

std::uint64_t MemorySnapshot::word(std::uint64_t address, unsigned size, elf::Endian endian) const noexcept {
  return decode_word(bytes(address, size), endian);
}

void MemorySnapshot::read_span(const std::vector<Region>& members, std::uint64_t begin, std::uint64_t end) {
  try {
    ++reads_;
    spans_.push_back({begin, memory_.read(begin, end - begin), 0, 0});
    return;
  } catch (const target::MemoryError&) {
    if (members.size() == 1) return;  // refused: the caller sees has() == false
  }
  for (const auto& region : members) {
    try {
      ++reads_;
      spans_.push_back({region.address, memory_.read(region.address, region.length), 0, 0});
    } catch (const target::MemoryError&) {  // this one region is unreadable; has() says so
    }
  }
}

void MemorySnapshot::read(std::vector<Region> regions) {
  std::erase_if(regions, [this](const Region& r) {
    return r.length == 0 || r.address + r.length < r.address || has(r.address, r.length);
  });
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.address < b.address; });
  std::vector<Region> members;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  for (const auto& region : regions) {
    const std::uint64_t region_end = region.address + region.length;
    const bool joins =
        !members.empty() && region.address <= end + merge_gap_ && std::max(end, region_end) - begin <= max_span_;
    if (!joins) {
      if (!members.empty()) read_span(members, begin, end);
      members.clear();
      begin = region.address;
      end = region_end;
    }
    end = std::max(end, region_end);
    members.push_back(region);
  }
  if (!members.empty()) read_span(members, begin, end);
}

bool MemorySnapshot::modify(std::uint64_t address, std::span<const std::uint8_t> bytes) {
  bool held = false;
  for (auto& span : spans_) {  // every span holding these bytes, so no copy of them goes stale
    if (address < span.address || address - span.address > span.bytes.size() ||
        span.bytes.size() - (address - span.address) < bytes.size()) {
      continue;
    }
    const std::size_t at = address - span.address;
    std::copy(bytes.begin(), bytes.end(), span.bytes.begin() + static_cast<std::ptrdiff_t>(at));
    if (span.dirty_begin == span.dirty_end) {
      span.dirty_begin = at;
      span.dirty_end = at + bytes.size();
    } else {
      span.dirty_begin = std::min(span.dirty_begin, at);
      span.dirty_end = std::max(span.dirty_end, at + bytes.size());
    }
    held = true;
  }
  return held;
}

void MemorySnapshot::write_back() {
  for (auto& span : spans_) {
    if (span.dirty_begin == span.dirty_end) continue;
    memory_.write(span.address + span.dirty_begin,
                  std::span(span.bytes).subspan(span.dirty_begin, span.dirty_end - span.dirty_begin));
    span.dirty_begin = span.dirty_end = 0;
  }
}

}  // namespace tp::ekotrace
