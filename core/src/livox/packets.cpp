// Livox point and IMU packets: the writers and the spec decoder (FORMATS-HESAI-ROBOSENSE.md
// section 3; SDK2's LivoxLidarEthernetPacket, livox_ros_driver2's reading of it).
#include <algorithm>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/livox.hpp"

namespace lidaremu::core::livox {
namespace {

constexpr std::size_t record_size(DataType type) {
  return kRecordSize[static_cast<std::size_t>(type)];
}

// The header of a packet of `records` records of `type`, its CRC left for seal_packet.
void write_header(std::span<std::uint8_t> packet, const PacketStamp& stamp, DataType type,
                  std::size_t records) {
  std::fill(packet.begin(), packet.begin() + kHeaderSize, std::uint8_t{0});
  const auto put = [&](HeaderField name, std::uint64_t value) {
    store_raw(packet, 0, header_field(name), value);
  };
  put(HeaderField::kVersion, kPacketVersion);
  put(HeaderField::kLength, packet.size());
  put(HeaderField::kTimeInterval, stamp.time_interval_100ns);
  put(HeaderField::kDotNum, records);
  put(HeaderField::kUdpCount, stamp.udp_count);
  put(HeaderField::kFrameCount, stamp.frame_count);
  put(HeaderField::kDataType, static_cast<std::uint8_t>(type));
  put(HeaderField::kTimeType, static_cast<std::uint8_t>(stamp.time_type));
  put(HeaderField::kTimestamp, stamp.timestamp_ns);
}

void seal_packet(std::span<std::uint8_t> packet) {
  store_raw(packet, 0, header_field(HeaderField::kCrc32), crc32(packet.subspan(kCrcCoveredFrom)));
}

}  // namespace

std::size_t write_point_packet(std::span<std::uint8_t> out, const PacketStamp& stamp,
                               std::span<const PointRecord> points) {
  const std::size_t size = kHeaderSize + points.size() * record_size(DataType::kCartesianHigh);
  if (points.size() > kPointsPerPacket || size > out.size()) return 0;
  const auto packet = out.first(size);
  write_header(packet, stamp, DataType::kCartesianHigh, points.size());
  std::size_t at = kHeaderSize;
  for (const PointRecord& p : points) {
    store_le<std::int32_t>(packet, at + kPointX, p.x_mm);
    store_le<std::int32_t>(packet, at + kPointY, p.y_mm);
    store_le<std::int32_t>(packet, at + kPointZ, p.z_mm);
    packet[at + kPointReflectivity] = p.reflectivity;
    packet[at + kPointTag] = p.tag;
    at += record_size(DataType::kCartesianHigh);
  }
  seal_packet(packet);
  return size;
}

std::size_t write_imu_packet(std::span<std::uint8_t> out, const PacketStamp& stamp,
                             const ImuRecord& imu) {
  if (out.size() < kImuPacketSize) return 0;
  const auto packet = out.first(kImuPacketSize);
  write_header(packet, stamp, DataType::kImu, 1);
  for (std::size_t k = 0; k < 3; ++k) {
    store_le<float>(packet, kHeaderSize + kImuGyroAt + 4 * k, imu.gyro_rad_s[k]);
    store_le<float>(packet, kHeaderSize + kImuAccAt + 4 * k, imu.acceleration_g[k]);
  }
  seal_packet(packet);
  return kImuPacketSize;
}

DecodeError read_header(std::span<const std::uint8_t> packet, PacketInfo& info) {
  if (packet.size() < kHeaderSize) return DecodeError::kTooShort;
  const auto get = [&](HeaderField name) { return load_raw(packet, 0, header_field(name)); };
  info.version = static_cast<std::uint8_t>(get(HeaderField::kVersion));
  info.length = static_cast<std::uint16_t>(get(HeaderField::kLength));
  info.time_interval_100ns = static_cast<std::uint16_t>(get(HeaderField::kTimeInterval));
  info.dot_num = static_cast<std::uint16_t>(get(HeaderField::kDotNum));
  info.udp_count = static_cast<std::uint16_t>(get(HeaderField::kUdpCount));
  info.frame_count = static_cast<std::uint8_t>(get(HeaderField::kFrameCount));
  info.data_type = static_cast<std::uint8_t>(get(HeaderField::kDataType));
  info.time_type = static_cast<std::uint8_t>(get(HeaderField::kTimeType));
  info.timestamp_ns = get(HeaderField::kTimestamp);
  if (info.version != kPacketVersion) return DecodeError::kBadVersion;
  if (info.length != packet.size()) return DecodeError::kLengthMismatch;
  if (info.data_type >= kRecordSize.size()) return DecodeError::kUnknownDataType;
  if (kHeaderSize + info.dot_num * kRecordSize[info.data_type] != packet.size()) {
    return DecodeError::kSizeMismatch;
  }
  info.crc_valid = get(HeaderField::kCrc32) == crc32(packet.subspan(kCrcCoveredFrom));
  return DecodeError::kNone;
}

DecodeError decode_points(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                          PacketInfo* info) {
  PacketInfo header;
  if (const DecodeError e = read_header(packet, header); e != DecodeError::kNone) return e;
  if (info != nullptr) *info = header;
  const auto type = static_cast<DataType>(header.data_type);
  if (type != DataType::kCartesianHigh && type != DataType::kCartesianLow) {
    return DecodeError::kNotPoints;
  }
  const std::uint64_t point_interval_ns =
      header.dot_num == 0 ? 0 : std::uint64_t{header.time_interval_100ns} * 100 / header.dot_num;
  const std::size_t size = record_size(type);
  for (std::size_t i = 0; i < header.dot_num; ++i) {
    const std::size_t at = kHeaderSize + i * size;
    Point p;
    if (type == DataType::kCartesianHigh) {
      p.x = static_cast<float>(load_le<std::int32_t>(packet, at + kPointX) * 1e-3);
      p.y = static_cast<float>(load_le<std::int32_t>(packet, at + kPointY) * 1e-3);
      p.z = static_cast<float>(load_le<std::int32_t>(packet, at + kPointZ) * 1e-3);
      p.reflectivity = packet[at + kPointReflectivity];
      p.tag = packet[at + kPointTag];
    } else {  // x y z int16 cm, reflectivity, tag
      p.x = static_cast<float>(load_le<std::int16_t>(packet, at) * 1e-2);
      p.y = static_cast<float>(load_le<std::int16_t>(packet, at + 2) * 1e-2);
      p.z = static_cast<float>(load_le<std::int16_t>(packet, at + 4) * 1e-2);
      p.reflectivity = packet[at + 6];
      p.tag = packet[at + 7];
    }
    p.time_ns = header.timestamp_ns + i * point_interval_ns;
    out.push_back(p);
  }
  return DecodeError::kNone;
}

DecodeError decode_imu(std::span<const std::uint8_t> packet, ImuSample& out, PacketInfo* info) {
  PacketInfo header;
  if (const DecodeError e = read_header(packet, header); e != DecodeError::kNone) return e;
  if (info != nullptr) *info = header;
  if (static_cast<DataType>(header.data_type) != DataType::kImu || header.dot_num != 1) {
    return DecodeError::kNotImu;
  }
  for (std::size_t k = 0; k < 3; ++k) {
    out.record.gyro_rad_s[k] = load_le<float>(packet, kHeaderSize + kImuGyroAt + 4 * k);
    out.record.acceleration_g[k] = load_le<float>(packet, kHeaderSize + kImuAccAt + 4 * k);
  }
  out.time_ns = header.timestamp_ns;
  return DecodeError::kNone;
}

}  // namespace lidaremu::core::livox
