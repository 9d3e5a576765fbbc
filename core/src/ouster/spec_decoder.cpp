// The spec decoder for Ouster lidar packets (FORMATS.md), written from the public format and
// tested on real captures; the CRC-64 of the non-legacy footer.
#include <isa-l/crc64.h>

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/packet_field.hpp"

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

ProfileLayout profile_layout(OusterProfile profile) { return profile_format(profile).layout; }
// CRC-64/XZ (ECMA-182, reflected, inverted in and out): ISA-L's crc64_ecma_refl with seed 0 is
// exactly that, folded with carry-less multiplies (0.02 ns a byte here; a table lookup a byte
// took 2.3 ns, most of the RNG19 profile's encoding).
std::uint64_t crc64_xz(std::span<const std::uint8_t> bytes) {
  return crc64_ecma_refl(0, bytes.data(), bytes.size());
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
  format_ = &profile_format(*profile);
}

std::size_t SpecDecoder::packet_size() const {
  return format_->layout.packet_size(metadata_.channels(), metadata_.columns_per_packet);
}

namespace {
void set_column_field(Column& c, ColumnField field, std::uint64_t value) {
  switch (field) {
    case ColumnField::kTimestamp:
      c.timestamp_ns = value;
      break;
    case ColumnField::kMeasurementId:
      c.measurement_id = static_cast<std::uint16_t>(value);
      break;
    case ColumnField::kFrameId:
      c.frame_id = static_cast<std::uint16_t>(value);
      break;
    case ColumnField::kEncoderCount:
      c.encoder_count = static_cast<std::uint32_t>(value);
      break;
    case ColumnField::kStatus:
      c.status = static_cast<std::uint32_t>(value);
      break;
  }
}

void set_pixel_field(Pixel& p, PixelField field, std::uint64_t value) {
  switch (field) {
    case PixelField::kRange:
      p.range_mm = static_cast<std::uint32_t>(value);
      break;
    case PixelField::kReflectivity:
      p.reflectivity = static_cast<std::uint16_t>(value);
      break;
    case PixelField::kSignal:
      p.signal = static_cast<std::uint16_t>(value);
      break;
    case PixelField::kNearIr:
      p.near_ir = static_cast<std::uint16_t>(value);
      break;
    case PixelField::kRange2:
      p.range2_mm = static_cast<std::uint32_t>(value);
      break;
    case PixelField::kReflectivity2:
      p.reflectivity2 = static_cast<std::uint16_t>(value);
      break;
    case PixelField::kSignal2:
      p.signal2 = static_cast<std::uint16_t>(value);
      break;
  }
}

void set_header_field(PacketHeader& h, HeaderField field, std::uint64_t value) {
  switch (field) {
    case HeaderField::kPacketType:
      h.packet_type = static_cast<std::uint16_t>(value);
      break;
    case HeaderField::kFrameId:
      h.frame_id = static_cast<std::uint16_t>(value);
      break;
    case HeaderField::kInitId:
      h.init_id = static_cast<std::uint32_t>(value);
      break;
    case HeaderField::kSerialNumber:
      h.serial_number = value;
      break;
  }
}
}  // namespace

// Every field from the profile's table (format.hpp): the packet header (none in LEGACY, where
// each column carries its frame id), each column's header and footer, each pixel.
DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Column>& columns,
                                PacketHeader* header) const {
  if (packet.size() != packet_size()) return DecodeError::kWrongSize;
  const ProfileFormat& f = *format_;
  PacketHeader packet_header;
  for (const auto& field : f.packet_header) {
    set_header_field(packet_header, field.name, load_field(packet, 0, field));
  }
  if (header) *header = packet_header;
  const int h = metadata_.channels();
  const std::size_t column_bytes = f.layout.column_size(h);
  for (int k = 0; k < metadata_.columns_per_packet; ++k) {
    const std::size_t at = f.layout.packet_header + k * column_bytes;
    Column c;
    c.frame_id = packet_header.frame_id;
    for (const auto& field : f.column_header) {
      set_column_field(c, field.name, load_field(packet, at, field));
    }
    const std::size_t footer = at + column_bytes - f.layout.column_footer;
    for (const auto& field : f.column_footer) {
      set_column_field(c, field.name, load_field(packet, footer, field));
    }
    if (c.measurement_id >= metadata_.columns_per_frame) return DecodeError::kBadMeasurementId;
    c.pixels.resize(h);
    for (int row = 0; row < h; ++row) {
      const std::size_t px = at + f.layout.column_header + row * f.layout.pixel;
      for (const auto& field : f.pixel) {
        set_pixel_field(c.pixels[row], field.name, load_field(packet, px, field));
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
