// The Ouster UDP lidar profiles as tables (FORMATS.md "Ouster", field offsets as the Ouster SDK's
// profile tables give them). Byte offsets are from the start of the part the table describes.
#include <array>
#include <stdexcept>

#include "lidaremu/core/ouster/format.hpp"

namespace lidaremu::core::ouster {
namespace {

using H = HeaderField;
using C = ColumnField;
using P = PixelField;

// LEGACY (firmware 1.x-2.x, still served by 3.x): no packet header; each column has its frame id
// and encoder count, and a 32-bit status footer.
constexpr std::array<PacketField<C>, 4> kLegacyColumnHeader{{
    {C::kTimestamp, 0, 8, ~0ull},
    {C::kMeasurementId, 8, 2, 0xFFFF},
    {C::kFrameId, 10, 2, 0xFFFF},
    {C::kEncoderCount, 12, 4, 0xFFFFFFFF},
}};
constexpr std::array<PacketField<C>, 1> kLegacyColumnFooter{{{C::kStatus, 0, 4, 0xFFFFFFFF}}};
constexpr std::array<PacketField<P>, 4> kLegacyPixel{{
    {P::kRange, 0, 4, 0xFFFFF},  // 20 bits of mm
    {P::kReflectivity, 4, 2, 0xFFFF},
    {P::kSignal, 6, 2, 0xFFFF},
    {P::kNearIr, 8, 2, 0xFFFF},
}};

// The profiles of firmware 2.2 on: a 32-byte packet header (the serial number is 40 bits and
// overlaps nothing: init_id is 24), a 12-byte column header, no column footer.
constexpr std::array<PacketField<H>, 4> kPacketHeader{{
    {H::kPacketType, 0, 2, 0xFFFF},
    {H::kFrameId, 2, 2, 0xFFFF},
    {H::kInitId, 4, 4, 0xFFFFFF},
    {H::kSerialNumber, 7, 8, 0xFFFFFFFFFFull},
}};
constexpr std::array<PacketField<C>, 3> kColumnHeader{{
    {C::kTimestamp, 0, 8, ~0ull},
    {C::kMeasurementId, 8, 2, 0xFFFF},
    {C::kStatus, 10, 2, 0xFFFF},
}};
constexpr std::array<PacketField<P>, 4> kRng19Pixel{{
    {P::kRange, 0, 4, 0x7FFFF},  // 19 bits of mm
    {P::kReflectivity, 4, 1, 0xFF},
    {P::kSignal, 6, 2, 0xFFFF},
    {P::kNearIr, 8, 2, 0xFFFF},
}};
// The dual profile packs each return's reflectivity into the top byte of its range word.
constexpr std::array<PacketField<P>, 7> kRng19DualPixel{{
    {P::kRange, 0, 4, 0x7FFFF},
    {P::kReflectivity, 3, 1, 0xFF},
    {P::kRange2, 4, 4, 0x7FFFF},
    {P::kReflectivity2, 7, 1, 0xFF},
    {P::kSignal, 8, 2, 0xFFFF},
    {P::kSignal2, 10, 2, 0xFFFF},
    {P::kNearIr, 12, 2, 0xFFFF},
}};
// Low data rate: 15 bits of range in 8 mm steps, near-IR in steps of 16 counts.
constexpr std::array<PacketField<P>, 3> kRng15Pixel{{
    {P::kRange, 0, 2, 0x7FFF, 3},
    {P::kReflectivity, 2, 1, 0xFF},
    {P::kNearIr, 3, 1, 0xFF, 4},
}};

constexpr std::array<ProfileFormat, 4> kProfiles{{
    {OusterProfile::kLegacy,
     "LEGACY",
     ProfileLayout{0, 16, 12, 4, 0},
     {},
     kLegacyColumnHeader,
     kLegacyPixel,
     kLegacyColumnFooter,
     0xFFFFFFFFu,
     false},
    {OusterProfile::kRng19,
     "RNG19_RFL8_SIG16_NIR16",
     ProfileLayout{32, 12, 12, 0, 32},
     kPacketHeader,
     kColumnHeader,
     kRng19Pixel,
     {},
     1u,
     true},
    {OusterProfile::kRng19Dual,
     "RNG19_RFL8_SIG16_NIR16_DUAL",
     ProfileLayout{32, 12, 16, 0, 32},
     kPacketHeader,
     kColumnHeader,
     kRng19DualPixel,
     {},
     1u,
     true},
    {OusterProfile::kRng15,
     "RNG15_RFL8_NIR8",
     ProfileLayout{32, 12, 4, 0, 32},
     kPacketHeader,
     kColumnHeader,
     kRng15Pixel,
     {},
     1u,
     true},
}};

}  // namespace

std::span<const ProfileFormat> profile_formats() { return kProfiles; }

const ProfileFormat& profile_format(OusterProfile profile) {
  for (const ProfileFormat& f : kProfiles) {
    if (f.profile == profile) return f;
  }
  throw std::logic_error("ouster: a profile without a format table");
}

}  // namespace lidaremu::core::ouster
