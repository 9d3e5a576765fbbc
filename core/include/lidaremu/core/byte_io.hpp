#pragma once
// Explicit little-endian stores and loads over byte spans: packet bytes are never produced or
// read by casting a struct over a buffer.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace lidaremu::core {

template <typename T>
inline void store_le(std::span<std::uint8_t> out, std::size_t offset, T value) {
  static_assert(std::is_integral_v<T> || std::is_floating_point_v<T>);
  using Bits = std::conditional_t<
      sizeof(T) == 8, std::uint64_t,
      std::conditional_t<sizeof(T) == 4, std::uint32_t,
                         std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
  const auto bits = std::bit_cast<Bits>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[offset + i] = static_cast<std::uint8_t>((bits >> (8 * i)) & 0xFFu);
  }
}

template <typename T>
inline T load_le(std::span<const std::uint8_t> in, std::size_t offset) {
  using Bits = std::conditional_t<
      sizeof(T) == 8, std::uint64_t,
      std::conditional_t<sizeof(T) == 4, std::uint32_t,
                         std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
  Bits bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bits = static_cast<Bits>(bits | (static_cast<Bits>(in[offset + i]) << (8 * i)));
  }
  return std::bit_cast<T>(bits);
}

// Big-endian words of 1 to 8 bytes (RoboSense packets).
inline void store_be(std::span<std::uint8_t> out, std::size_t offset, std::size_t bytes,
                     std::uint64_t value) {
  for (std::size_t i = 0; i < bytes; ++i) {
    out[offset + bytes - 1 - i] = static_cast<std::uint8_t>((value >> (8 * i)) & 0xFFu);
  }
}
inline std::uint64_t load_be(std::span<const std::uint8_t> in, std::size_t offset,
                             std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value = (value << 8) | in[offset + i];
  return value;
}

inline std::uint16_t load_be16(std::span<const std::uint8_t> in, std::size_t offset) {
  return static_cast<std::uint16_t>((in[offset] << 8) | in[offset + 1]);
}

}  // namespace lidaremu::core
