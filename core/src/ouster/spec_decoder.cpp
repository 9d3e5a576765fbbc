// The spec decoder for Ouster lidar packets (FORMATS.md), written from the public format and
// tested on real captures; the CRC-64 of the non-legacy footer.
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"

namespace lidaremu::core::ouster {

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kWrongSize:
      return "wrong packet size";
    case DecodeError::kBadMeasurementId:
      return "measurement id out of range";
    case DecodeError::kBadStatus:
      return "column status not valid";
  }
  return "?";
}

ProfileLayout profile_layout(OusterProfile profile) {
  switch (profile) {
    case OusterProfile::kLegacy:
      break;
    case OusterProfile::kRng19:
      return ProfileLayout{32, 12, 12, 0, 32};
    case OusterProfile::kRng19Dual:
      return ProfileLayout{32, 12, 16, 0, 32};
    case OusterProfile::kRng15:
      return ProfileLayout{32, 12, 4, 0, 32};
  }
  return ProfileLayout{0, 16, 12, 4, 0};
}
namespace {
// CRC-64/XZ, one table lookup per byte.
constexpr std::array<std::uint64_t, 256> make_crc64_table() {
  constexpr std::uint64_t kReflectedPolynomial = 0xC96C5795D7870F42ull;
  std::array<std::uint64_t, 256> table{};
  for (std::uint64_t i = 0; i < 256; ++i) {
    std::uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? kReflectedPolynomial : 0);
    table[i] = crc;
  }
  return table;
}
constexpr auto kCrc64Table = make_crc64_table();
}  // namespace

std::uint64_t crc64_xz(std::span<const std::uint8_t> bytes) {
  std::uint64_t crc = ~0ull;
  for (const std::uint8_t byte : bytes) crc = kCrc64Table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

bool footer_crc_valid(std::span<const std::uint8_t> packet) {
  if (packet.size() < 8) return false;
  return crc64_xz(packet.first(packet.size() - 8)) ==
         load_le<std::uint64_t>(packet, packet.size() - 8);
}

SpecDecoder::SpecDecoder(const Metadata& metadata) : metadata_(metadata) {
  const auto profile = profile_from_name(metadata.udp_profile_lidar);
  if (!profile) {
    throw std::runtime_error("metadata: unknown udp_profile_lidar '" + metadata.udp_profile_lidar +
                             "'");
  }
  profile_ = *profile;
  layout_ = profile_layout(profile_);
}

std::size_t SpecDecoder::packet_size() const {
  return layout_.packet_size(metadata_.channels(), metadata_.columns_per_packet);
}

DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Column>& columns,
                                PacketHeader* header) const {
  if (packet.size() != packet_size()) return DecodeError::kWrongSize;
  if (profile_ != OusterProfile::kLegacy) return decode_profile(packet, columns, header);
  const int h = metadata_.channels();
  const std::size_t column_bytes = kLegacyColumnHeader + h * kLegacyPixel + kLegacyColumnFooter;
  for (int k = 0; k < metadata_.columns_per_packet; ++k) {
    const std::size_t at = k * column_bytes;
    Column c;
    c.timestamp_ns = load_le<std::uint64_t>(packet, at);
    c.measurement_id = load_le<std::uint16_t>(packet, at + 8);
    c.frame_id = load_le<std::uint16_t>(packet, at + 10);
    c.encoder_count = load_le<std::uint32_t>(packet, at + 12);
    c.status = load_le<std::uint32_t>(packet, at + column_bytes - kLegacyColumnFooter);
    if (c.measurement_id >= metadata_.columns_per_frame) return DecodeError::kBadMeasurementId;
    c.pixels.resize(h);
    for (int row = 0; row < h; ++row) {
      const std::size_t px = at + kLegacyColumnHeader + row * kLegacyPixel;
      c.pixels[row] = {
          load_le<std::uint32_t>(packet, px) & 0xFFFFFu, load_le<std::uint16_t>(packet, px + 4),
          load_le<std::uint16_t>(packet, px + 6), load_le<std::uint16_t>(packet, px + 8)};
    }
    columns.push_back(std::move(c));
  }
  return DecodeError::kNone;
}

// The non-legacy profiles (FORMATS.md): a 32-byte packet header, 12-byte column headers, the
// profile's pixels, a 32-byte footer.
DecodeError SpecDecoder::decode_profile(std::span<const std::uint8_t> packet,
                                        std::vector<Column>& columns, PacketHeader* header) const {
  const std::uint16_t frame_id = load_le<std::uint16_t>(packet, 2);
  if (header) {
    header->packet_type = load_le<std::uint16_t>(packet, 0);
    header->frame_id = frame_id;
    header->init_id = load_le<std::uint32_t>(packet, 4) & 0xFFFFFFu;
    header->serial_number = load_le<std::uint64_t>(packet, 7) & 0xFFFFFFFFFFull;
  }
  const int h = metadata_.channels();
  const std::size_t column_bytes = layout_.column_header + h * layout_.pixel;
  for (int k = 0; k < metadata_.columns_per_packet; ++k) {
    const std::size_t at = layout_.packet_header + k * column_bytes;
    Column c;
    c.timestamp_ns = load_le<std::uint64_t>(packet, at);
    c.measurement_id = load_le<std::uint16_t>(packet, at + 8);
    c.status = load_le<std::uint16_t>(packet, at + 10);
    c.frame_id = frame_id;
    if (c.measurement_id >= metadata_.columns_per_frame) return DecodeError::kBadMeasurementId;
    c.pixels.resize(h);
    for (int row = 0; row < h; ++row) {
      const std::size_t px = at + layout_.column_header + row * layout_.pixel;
      Pixel& p = c.pixels[row];
      if (profile_ == OusterProfile::kRng15) {
        p.range_mm = (load_le<std::uint16_t>(packet, px) & 0x7FFFu) * 8u;
        p.reflectivity = packet[px + 2];
        p.near_ir = static_cast<std::uint16_t>(packet[px + 3] * 16);
      } else if (profile_ == OusterProfile::kRng19Dual) {
        p.range_mm = load_le<std::uint32_t>(packet, px) & 0x7FFFFu;
        p.reflectivity = packet[px + 3];
        p.range2_mm = load_le<std::uint32_t>(packet, px + 4) & 0x7FFFFu;
        p.reflectivity2 = packet[px + 7];
        p.signal = load_le<std::uint16_t>(packet, px + 8);
        p.signal2 = load_le<std::uint16_t>(packet, px + 10);
        p.near_ir = load_le<std::uint16_t>(packet, px + 12);
      } else {
        p.range_mm = load_le<std::uint32_t>(packet, px) & 0x7FFFFu;
        p.reflectivity = packet[px + 4];
        p.signal = load_le<std::uint16_t>(packet, px + 6);
        p.near_ir = load_le<std::uint16_t>(packet, px + 8);
      }
    }
    columns.push_back(std::move(c));
  }
  return DecodeError::kNone;
}

std::array<double, 3> SpecDecoder::to_xyz(const Column& column, int row) const {
  return to_xyz(column, row, column.pixels[row].range_mm);
}

std::array<double, 3> SpecDecoder::to_xyz(const Column& column, int row,
                                          std::uint32_t range_mm) const {
  constexpr double kDeg = std::numbers::pi / 180.0;
  const double r = range_mm;
  const double encoder =
      2.0 * std::numbers::pi * (1.0 - double(column.measurement_id) / metadata_.columns_per_frame);
  const double azimuth = -metadata_.beam_azimuth_deg[row] * kDeg;
  const double altitude = metadata_.beam_altitude_deg[row] * kDeg;
  const double n = metadata_.lidar_origin_to_beam_origin_mm;
  const double dx = std::cos(encoder + azimuth) * std::cos(altitude);
  const double dy = std::sin(encoder + azimuth) * std::cos(altitude);
  const double dz = std::sin(altitude);
  const double lx = r * dx + n * std::cos(encoder) - n * dx;
  const double ly = r * dy + n * std::sin(encoder) - n * dy;
  const double lz = r * dz - n * dz;
  const auto& t = metadata_.lidar_to_sensor;
  return {0.001 * (t[0] * lx + t[1] * ly + t[2] * lz + t[3]),
          0.001 * (t[4] * lx + t[5] * ly + t[6] * lz + t[7]),
          0.001 * (t[8] * lx + t[9] * ly + t[10] * lz + t[11])};
}

}  // namespace lidaremu::core::ouster
