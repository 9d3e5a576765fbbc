#pragma once
// A field of a packet as a row of a declarative format table: where it lies (byte offset and
// width of the little-endian word that holds it), which bits of that word are its own (mask),
// and its unit as a power of two (the raw bits times 2^unit_shift give the value in the unit the
// table names). An encoder writes a field and a spec decoder reads it from the same row, as the
// Ouster SDK's profile tables (offset, mask, shift) are read by both its parser and its writer.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace lidaremu::core {

template <typename Name>
struct PacketField {
  Name name;
  std::uint16_t offset = 0;  // bytes from the start of the part (header, column, pixel)
  std::uint8_t bytes = 0;    // width of the word: 1, 2, 4 or 8 (no other; test_format_tables)
  std::uint64_t mask = 0;    // the field's bits within the word
  std::uint8_t unit_shift = 0;

  // The largest value the field holds, in its unit.
  [[nodiscard]] constexpr std::uint64_t max_value() const { return mask << unit_shift; }
};

namespace packet_field_detail {
// The little-endian word of `bytes` bytes at `at`: a single load or store of that width on a
// little-endian host (the loop otherwise), since encoders write millions of fields a second.
template <std::size_t N>
inline std::uint64_t load_word(const std::uint8_t* at) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint64_t word = 0;
    std::memcpy(&word, at, N);
    return word;
  } else {
    std::uint64_t word = 0;
    for (std::size_t i = 0; i < N; ++i) word |= std::uint64_t{at[i]} << (8 * i);
    return word;
  }
}
template <std::size_t N>
inline void store_word(std::uint8_t* at, std::uint64_t word) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(at, &word, N);
  } else {
    for (std::size_t i = 0; i < N; ++i) at[i] = static_cast<std::uint8_t>(word >> (8 * i));
  }
}
template <typename Op>
inline decltype(auto) by_width(std::uint8_t bytes, Op&& op) {
  switch (bytes) {
    case 1:
      return op(std::integral_constant<std::size_t, 1>{});
    case 2:
      return op(std::integral_constant<std::size_t, 2>{});
    case 4:
      return op(std::integral_constant<std::size_t, 4>{});
    default:
      return op(std::integral_constant<std::size_t, 8>{});
  }
}
}  // namespace packet_field_detail

// Reads the field's bits (not yet shifted to its unit) at `base`.
template <typename Name>
[[nodiscard]] inline std::uint64_t load_raw(std::span<const std::uint8_t> in, std::size_t base,
                                            const PacketField<Name>& f) {
  const std::uint8_t* at = in.subspan(base + f.offset, f.bytes).data();
  return packet_field_detail::by_width(
             f.bytes, [&](auto n) { return packet_field_detail::load_word<n()>(at); }) &
         f.mask;
}

// The field's value in its unit.
template <typename Name>
[[nodiscard]] inline std::uint64_t load_field(std::span<const std::uint8_t> in, std::size_t base,
                                              const PacketField<Name>& f) {
  return load_raw(in, base, f) << f.unit_shift;
}

// Writes raw bits (already in the field's unit steps) into the field, leaving the word's other
// bits (another field's) as they are; bits beyond the mask are cut.
template <typename Name>
inline void store_raw(std::span<std::uint8_t> out, std::size_t base, const PacketField<Name>& f,
                      std::uint64_t raw) {
  std::uint8_t* at = out.subspan(base + f.offset, f.bytes).data();
  packet_field_detail::by_width(f.bytes, [&](auto n) {
    const std::uint64_t word = packet_field_detail::load_word<n()>(at);
    packet_field_detail::store_word<n()>(at, (word & ~f.mask) | (raw & f.mask));
  });
}

}  // namespace lidaremu::core
