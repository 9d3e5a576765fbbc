#pragma once
// Livox Mid-360 (FORMATS-HESAI-ROBOSENSE.md section 3, the Livox SDK2 protocol): the point and
// IMU packets and the command frames as declarative tables, read by both the writers and the
// spec decoder. Every multi-byte field is little-endian; offsets count from the start of the UDP
// payload.
#include <array>
#include <cstddef>
#include <cstdint>

#include "lidaremu/core/packet_field.hpp"

namespace lidaremu::core::livox {

// The unit's ports (lidar side, host side) and the discovery port the host broadcasts to
// (SDK2's define.h names the same numbers).
struct PortPair {
  std::uint16_t lidar = 0;
  std::uint16_t host = 0;
};
inline constexpr PortPair kCommandPorts{56100, 56101};
inline constexpr PortPair kPushPorts{56200, 56201};
inline constexpr PortPair kPointPorts{56300, 56301};
inline constexpr PortPair kImuPorts{56400, 56401};
inline constexpr PortPair kLogPorts{56500, 56501};
inline constexpr std::uint16_t kDiscoveryPort = 56000;

// The point and IMU packets' 36-byte header (SDK2's LivoxLidarEthernetPacket).
enum class HeaderField : std::uint8_t {
  kVersion,
  kLength,        // the whole datagram
  kTimeInterval,  // 0.1 us: the packet's first point to its last (livox_ros_driver2 spreads
                  // its points evenly over it)
  kDotNum,
  kUdpCount,  // per packet, wrapping
  kFrameCount,
  kDataType,
  kTimeType,
  kCrc32,      // CRC-32 of the timestamp and data; the SDK does not check it
  kTimestamp,  // ns, the first point's
};
inline constexpr std::array<PacketField<HeaderField>, 10> kHeader{{
    {HeaderField::kVersion, 0, 1, 0xFF},
    {HeaderField::kLength, 1, 2, 0xFFFF},
    {HeaderField::kTimeInterval, 3, 2, 0xFFFF},
    {HeaderField::kDotNum, 5, 2, 0xFFFF},
    {HeaderField::kUdpCount, 7, 2, 0xFFFF},
    {HeaderField::kFrameCount, 9, 1, 0xFF},
    {HeaderField::kDataType, 10, 1, 0xFF},
    {HeaderField::kTimeType, 11, 1, 0xFF},
    {HeaderField::kCrc32, 24, 4, 0xFFFF'FFFF},
    {HeaderField::kTimestamp, 28, 8, ~std::uint64_t{0}},
}};
[[nodiscard]] constexpr const PacketField<HeaderField>& header_field(HeaderField name) {
  return kHeader[static_cast<std::size_t>(name)];
}
inline constexpr std::size_t kHeaderSize = 36;
inline constexpr std::size_t kReservedAt = 12;  // 12 bytes, written 0
inline constexpr std::size_t kCrcCoveredFrom = 28;
inline constexpr std::uint8_t kPacketVersion = 0;

enum class DataType : std::uint8_t {
  kImu = 0,
  kCartesianHigh = 1,  // x y z int32 mm, reflectivity, tag: what a Mid-360 sends
  kCartesianLow = 2,   // x y z int16 cm, reflectivity, tag
  kSpherical = 3,      // depth u32 mm, zenith u16, azimuth u16 (0.01 deg), reflectivity, tag
};
// Bytes per record of each data type, by its value.
inline constexpr std::array<std::size_t, 4> kRecordSize{24, 14, 8, 10};

// livox_ros_driver2 (comm.h, pub_handler.cpp): with 0 it stamps the points with the host's
// clock; with 1 (gPTP / PTP) or 2 (GPS) it keeps the packet's time.
enum class TimeType : std::uint8_t { kNoSync = 0, kPtp = 1, kGps = 2 };

// A point of data type 1.
inline constexpr std::size_t kPointX = 0, kPointY = 4, kPointZ = 8, kPointReflectivity = 12,
                             kPointTag = 13;
// The IMU record: gyro x y z (rad/s), acceleration x y z (g), float32 each.
inline constexpr std::size_t kImuGyroAt = 0, kImuAccAt = 12;

// What a Mid-360 sends (users' logs in livox_ros_driver2#240): 96 points of data type 1 a
// packet, 1380 bytes; IMU packets of one record, 60 bytes.
inline constexpr std::size_t kPointsPerPacket = 96;
inline constexpr std::size_t kPointPacketSize =
    kHeaderSize +
    kPointsPerPacket * kRecordSize[static_cast<std::size_t>(DataType::kCartesianHigh)];
inline constexpr std::size_t kImuPacketSize =
    kHeaderSize + kRecordSize[static_cast<std::size_t>(DataType::kImu)];
static_assert(kPointPacketSize == 1380 && kImuPacketSize == 60);

// Command frames (command port, discovery): a 24-byte header, then the data.
enum class CommandField : std::uint8_t {
  kSof,
  kVersion,
  kLength,  // the whole frame
  kSequence,
  kCommandId,
  kCommandType,  // 0 request, 1 acknowledgement
  kSenderType,   // 0 host, 1 lidar
  kHeaderCrc,    // CRC-16/CCITT-FALSE of bytes 0-17
  kDataCrc,      // CRC-32 of the data; 0 without data
};
inline constexpr std::array<PacketField<CommandField>, 9> kCommandHeader{{
    {CommandField::kSof, 0, 1, 0xFF},
    {CommandField::kVersion, 1, 1, 0xFF},
    {CommandField::kLength, 2, 2, 0xFFFF},
    {CommandField::kSequence, 4, 4, 0xFFFF'FFFF},
    {CommandField::kCommandId, 8, 2, 0xFFFF},
    {CommandField::kCommandType, 10, 1, 0xFF},
    {CommandField::kSenderType, 11, 1, 0xFF},
    {CommandField::kHeaderCrc, 18, 2, 0xFFFF},
    {CommandField::kDataCrc, 20, 4, 0xFFFF'FFFF},
}};
[[nodiscard]] constexpr const PacketField<CommandField>& command_field(CommandField name) {
  return kCommandHeader[static_cast<std::size_t>(name)];
}
inline constexpr std::size_t kCommandHeaderSize = 24;
inline constexpr std::size_t kHeaderCrcCovers = 18;
inline constexpr std::uint8_t kSof = 0xAA;
inline constexpr std::uint8_t kCommandVersion = 0;
enum class CommandType : std::uint8_t { kRequest = 0, kAck = 1 };
enum class SenderType : std::uint8_t { kHost = 0, kLidar = 1 };
// The SDK's sequence numbers: it keeps 16 bits.
inline constexpr std::uint32_t kSequenceMask = 0xFFFF;
// An answer never exceeds the SDK's command buffer (define.h, kMaxCommandBufferSize).
inline constexpr std::size_t kMaxCommandFrame = 1400;

enum class CommandId : std::uint16_t {
  kDiscovery = 0x0000,
  kWorkModeControl = 0x0100,  // key-value configuration
  kGetInternalInfo = 0x0101,
  kPushMessage = 0x0102,
};

// The discovery answer's data (SDK2's DetectionData): 24 bytes.
inline constexpr std::size_t kDetectionRetCode = 0, kDetectionDevType = 1, kDetectionSerial = 2,
                             kDetectionIp = 18, kDetectionCmdPort = 22, kDetectionSize = 24;
inline constexpr std::size_t kSerialBytes = 16;
inline constexpr std::uint8_t kDevTypeMid360 = 9;

}  // namespace lidaremu::core::livox
