#pragma once
// The Ouster UDP lidar profiles as tables (FORMATS.md "Ouster", field offsets as the Ouster SDK's
// profile tables give them). Byte offsets are from the start of the part the table describes.
// Constant expressions: the encoder instantiates its pixel writer per profile from them, so a
// table costs nothing per pixel over hand-written stores.
#include <array>
#include <span>

#include "lidaremu/core/ouster/format.hpp"

namespace lidaremu::core::ouster {
namespace profile_tables {

using H = HeaderField;
using C = ColumnField;
using P = PixelField;

// LEGACY (firmware 1.x-2.x, still served by 3.x): no packet header; each column has its frame id
// and encoder count, and a 32-bit status footer.
inline constexpr std::array<PacketField<C>, 4> kLegacyColumnHeader{{
    {C::kTimestamp, 0, 8, ~0ull},
    {C::kMeasurementId, 8, 2, 0xFFFF},
    {C::kFrameId, 10, 2, 0xFFFF},
    {C::kEncoderCount, 12, 4, 0xFFFFFFFF},
}};
inline constexpr std::array<PacketField<C>, 1> kLegacyColumnFooter{
    {{C::kStatus, 0, 4, 0xFFFFFFFF}}};
inline constexpr std::array<PacketField<P>, 4> kLegacyPixel{{
    {P::kRange, 0, 4, 0xFFFFF},  // 20 bits of mm
    {P::kReflectivity, 4, 2, 0xFFFF},
    {P::kSignal, 6, 2, 0xFFFF},
    {P::kNearIr, 8, 2, 0xFFFF},
}};

// The profiles of firmware 2.2 on: a 32-byte packet header (the serial number is 40 bits and
// overlaps nothing: init_id is 24), a 12-byte column header, no column footer.
inline constexpr std::array<PacketField<H>, 4> kPacketHeader{{
    {H::kPacketType, 0, 2, 0xFFFF},
    {H::kFrameId, 2, 2, 0xFFFF},
    {H::kInitId, 4, 4, 0xFFFFFF},
    {H::kSerialNumber, 7, 8, 0xFFFFFFFFFFull},
}};
inline constexpr std::array<PacketField<C>, 3> kColumnHeader{{
    {C::kTimestamp, 0, 8, ~0ull},
    {C::kMeasurementId, 8, 2, 0xFFFF},
    {C::kStatus, 10, 2, 0xFFFF},
}};
inline constexpr std::array<PacketField<P>, 4> kRng19Pixel{{
    {P::kRange, 0, 4, 0x7FFFF},  // 19 bits of mm
    {P::kReflectivity, 4, 1, 0xFF},
    {P::kSignal, 6, 2, 0xFFFF},
    {P::kNearIr, 8, 2, 0xFFFF},
}};
// The dual profile packs each return's reflectivity into the top byte of its range word.
inline constexpr std::array<PacketField<P>, 7> kRng19DualPixel{{
    {P::kRange, 0, 4, 0x7FFFF},
    {P::kReflectivity, 3, 1, 0xFF},
    {P::kRange2, 4, 4, 0x7FFFF},
    {P::kReflectivity2, 7, 1, 0xFF},
    {P::kSignal, 8, 2, 0xFFFF},
    {P::kSignal2, 10, 2, 0xFFFF},
    {P::kNearIr, 12, 2, 0xFFFF},
}};
// Low data rate: 15 bits of range in 8 mm steps, near-IR in steps of 16 counts.
inline constexpr std::array<PacketField<P>, 3> kRng15Pixel{{
    {P::kRange, 0, 2, 0x7FFF, 3},
    {P::kReflectivity, 2, 1, 0xFF},
    {P::kNearIr, 3, 1, 0xFF, 4},
}};

}  // namespace profile_tables

// Every profile, LEGACY first.
inline constexpr std::array<ProfileFormat, 4> kProfileFormats{{
    {.profile = OusterProfile::kLegacy,
     .name = "LEGACY",
     .layout = ProfileLayout{0, 16, 12, 4, 0},
     .packet_header = {},
     .column_header = profile_tables::kLegacyColumnHeader,
     .pixel = profile_tables::kLegacyPixel,
     .column_footer = profile_tables::kLegacyColumnFooter,
     .status_valid = 0xFFFFFFFFu,
     .crc64_footer = false},
    {.profile = OusterProfile::kRng19,
     .name = "RNG19_RFL8_SIG16_NIR16",
     .layout = ProfileLayout{32, 12, 12, 0, 32},
     .packet_header = profile_tables::kPacketHeader,
     .column_header = profile_tables::kColumnHeader,
     .pixel = profile_tables::kRng19Pixel,
     .column_footer = {},
     .status_valid = 1u,
     .crc64_footer = true},
    {.profile = OusterProfile::kRng19Dual,
     .name = "RNG19_RFL8_SIG16_NIR16_DUAL",
     .layout = ProfileLayout{32, 12, 16, 0, 32},
     .packet_header = profile_tables::kPacketHeader,
     .column_header = profile_tables::kColumnHeader,
     .pixel = profile_tables::kRng19DualPixel,
     .column_footer = {},
     .status_valid = 1u,
     .crc64_footer = true},
    {.profile = OusterProfile::kRng15,
     .name = "RNG15_RFL8_NIR8",
     .layout = ProfileLayout{32, 12, 4, 0, 32},
     .packet_header = profile_tables::kPacketHeader,
     .column_header = profile_tables::kColumnHeader,
     .pixel = profile_tables::kRng15Pixel,
     .column_footer = {},
     .status_valid = 1u,
     .crc64_footer = true},
}};

constexpr std::span<const ProfileFormat> profile_formats() { return kProfileFormats; }

// Every OusterProfile has its row (test_format_tables).
constexpr std::size_t profile_index(OusterProfile profile) {
  for (std::size_t i = 0; i < kProfileFormats.size(); ++i) {
    if (kProfileFormats[i].profile == profile) return i;
  }
  return 0;
}
constexpr const ProfileFormat& profile_format(OusterProfile profile) {
  return kProfileFormats[profile_index(profile)];
}

}  // namespace lidaremu::core::ouster
