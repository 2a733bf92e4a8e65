// Unsigned integers loaded from bytes in a stated byte order (protocol replies and packets),
// whatever the host's. The caller has checked that the bytes are there.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tp {

template <typename T, std::size_t Bytes = sizeof(T)>
[[nodiscard]] inline T load_little_endian(const std::uint8_t* bytes) noexcept {
  T value = 0;
  if constexpr (std::endian::native == std::endian::little && Bytes == sizeof(T)) {
    std::memcpy(&value, bytes, sizeof(T));  // one load on the hot paths (ITM payloads)
  } else {
    for (std::size_t i = Bytes; i-- > 0;) value = static_cast<T>(value << 8U | bytes[i]);
  }
  return value;
}

template <typename T, std::size_t Bytes = sizeof(T)>
[[nodiscard]] constexpr T load_big_endian(const std::uint8_t* bytes) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < Bytes; ++i) value = static_cast<T>(value << 8U | bytes[i]);
  return value;
}

[[nodiscard]] inline std::uint16_t load_le16(const std::uint8_t* bytes) noexcept {
  return load_little_endian<std::uint16_t>(bytes);
}
[[nodiscard]] inline std::uint32_t load_le32(const std::uint8_t* bytes) noexcept {
  return load_little_endian<std::uint32_t>(bytes);
}
[[nodiscard]] inline std::uint64_t load_le64(const std::uint8_t* bytes) noexcept {
  return load_little_endian<std::uint64_t>(bytes);
}
[[nodiscard]] constexpr std::uint16_t load_be16(const std::uint8_t* bytes) noexcept {
  return load_big_endian<std::uint16_t>(bytes);
}
[[nodiscard]] constexpr std::uint32_t load_be32(const std::uint8_t* bytes) noexcept {
  return load_big_endian<std::uint32_t>(bytes);
}

}  // namespace tp
