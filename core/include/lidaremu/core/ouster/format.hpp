#pragma once
// The Ouster lidar packet formats as tables (FORMATS.md, "Ouster"; the Ouster SDK's profile
// tables): one row per field of the packet header, the column header, the pixel and the column
// footer of each UDP lidar profile (the rows: ouster/profiles.hpp). The encoder
// (ouster/encoder.cpp) writes each field and the spec decoder (ouster/spec_decoder.cpp) reads it
// from the same row, so an offset is written once.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/packet_field.hpp"

namespace lidaremu::core::ouster {

// Packet header fields (non-legacy profiles).
enum class HeaderField : std::uint8_t { kPacketType, kFrameId, kInitId, kSerialNumber };
// Column header and footer fields: frame id and encoder count are per column in LEGACY only;
// the status is a 32-bit footer in LEGACY (all ones: valid), a 16-bit header field after it.
enum class ColumnField : std::uint8_t {
  kTimestamp,
  kMeasurementId,
  kFrameId,
  kEncoderCount,
  kStatus
};
// Pixel fields; the second return's in the dual profile. Units: range in mm, near-IR in counts.
enum class PixelField : std::uint8_t {
  kRange,
  kReflectivity,
  kSignal,
  kNearIr,
  kRange2,
  kReflectivity2,
  kSignal2
};

// Byte sizes of a lidar profile's parts (FORMATS.md table).
struct ProfileLayout {
  std::size_t packet_header = 0;
  std::size_t column_header = 16;
  std::size_t pixel = 12;
  std::size_t column_footer = 4;
  std::size_t packet_footer = 0;
  [[nodiscard]] std::size_t column_size(int channels) const {
    return column_header + static_cast<std::size_t>(channels) * pixel + column_footer;
  }
  [[nodiscard]] std::size_t packet_size(int channels, int columns_per_packet) const {
    return packet_header + static_cast<std::size_t>(columns_per_packet) * column_size(channels) +
           packet_footer;
  }
};

struct ProfileFormat {
  OusterProfile profile;
  const char* name;  // udp_profile_lidar in the metadata
  ProfileLayout layout;
  std::span<const PacketField<HeaderField>> packet_header;
  std::span<const PacketField<ColumnField>> column_header;
  std::span<const PacketField<PixelField>> pixel;
  std::span<const PacketField<ColumnField>> column_footer;  // offsets from the footer's start
  // What a valid column's status holds.
  std::uint32_t status_valid;
  // Whether the packet footer's last 8 bytes hold the CRC-64 of everything before them.
  bool crc64_footer;
};

// Whether a pixel field belongs to the first or the second return (near-IR: neither, -1).
[[nodiscard]] constexpr int return_of(PixelField f) {
  switch (f) {
    case PixelField::kRange:
    case PixelField::kReflectivity:
    case PixelField::kSignal:
      return 0;
    case PixelField::kRange2:
    case PixelField::kReflectivity2:
    case PixelField::kSignal2:
      return 1;
    case PixelField::kNearIr:
      break;
  }
  return -1;
}

}  // namespace lidaremu::core::ouster
