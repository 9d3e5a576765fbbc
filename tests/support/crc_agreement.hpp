#pragma once
// A folded CRC against a bitwise reference: ISA-L takes 16 bytes at a time with carry-less
// multiplies where the CPU has them and the unaligned head and the tail apart, so every length
// up to a few folds at every alignment to 16 is where an error would hide.
#include <cstddef>
#include <cstdint>
#include <span>

namespace lidaremu::test {

// How many of the spans of `data` starting at offsets 0..15 with lengths 0..max_length the two
// CRCs disagree on (data holds at least 15 + max_length bytes).
template <typename Crc, typename Reference>
int crc_disagreements(std::span<const std::uint8_t> data, Crc crc, Reference reference,
                      std::size_t max_length = 300) {
  int disagreements = 0;
  for (std::size_t at = 0; at < 16; ++at) {
    for (std::size_t n = 0; n <= max_length; ++n) {
      const auto part = data.subspan(at, n);
      disagreements += crc(part) != reference(part) ? 1 : 0;
    }
  }
  return disagreements;
}

}  // namespace lidaremu::test
