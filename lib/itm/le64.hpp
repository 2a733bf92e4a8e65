// 64-bit little-endian words from and to unaligned bytes: the word-at-a-time fast paths of
// the ITM decoder and the TPIU deformatter (this layer sits below core/byte_order.hpp).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace tp::itm {

inline std::uint64_t load_le64_unaligned(const std::uint8_t* p) noexcept {
  std::uint64_t word = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&word, p, sizeof word);
  } else {
    for (int i = 7; i >= 0; --i) word = word << 8U | p[i];
  }
  return word;
}

inline void store_le64_unaligned(std::uint8_t* p, std::uint64_t word) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &word, sizeof word);
  } else {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(word >> (8U * static_cast<unsigned>(i)));
  }
}

}  // namespace tp::itm
