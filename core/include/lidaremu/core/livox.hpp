#pragma once
// Livox Mid-360 (FORMATS-HESAI-ROBOSENSE.md section 3, the Livox SDK2 protocol): writers of the
// point and IMU packets and of the command frames (discovery answer included), and the spec
// decoder that reads them as Livox SDK2 and livox_ros_driver2 do; the Mid-360's encoder, on a scan
// table the user supplies (no Mid-360 scan pattern is among the facts). Its registry row is
// "livox-mid360" (livox/models.cpp); the daemon's side of the command port is
// daemon/livox_sdk_server.hpp.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/livox/format.hpp"
#include "lidaremu/core/livox/parameters.hpp"
#include "lidaremu/core/motion.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core::livox {

// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, not reflected, no final xor): the
// command frames' header CRC.
std::uint16_t crc16_ccitt_false(std::span<const std::uint8_t> bytes);
// CRC-32 (ISO-HDLC: polynomial 0x04C11DB7 reflected, initial and final xor all ones): the
// command frames' data CRC and the point packets' CRC.
std::uint32_t crc32(std::span<const std::uint8_t> bytes);

struct CommandHeader {
  std::uint32_t sequence = 0;
  std::uint16_t command_id = 0;
  CommandType type = CommandType::kRequest;
  SenderType sender = SenderType::kHost;
};

// Writes a command frame (header, both CRCs, data) at the start of `out`: its size, or 0 when
// it would not fit in `out` or exceed kMaxCommandFrame.
std::size_t write_command(std::span<std::uint8_t> out, const CommandHeader& header,
                          std::span<const std::uint8_t> data);

enum class CommandError : std::uint8_t {
  kNone,
  kTooShort,      // under a header
  kBadSof,        // not 0xAA
  kBadVersion,    // not 0
  kBadLength,     // under a header, or past the datagram
  kBadHeaderCrc,  // the SDK drops the frame
  kBadDataCrc,    // the SDK drops the frame
};
struct CommandView {
  CommandHeader header;
  std::span<const std::uint8_t> data;  // within the datagram read
};
// Every check Livox SDK2 makes before it takes a frame (sdk_protocol.cpp's CheckPreamble: sof,
// version, length, the header CRC, the data CRC), and the length within the datagram.
CommandError read_command(std::span<const std::uint8_t> datagram, CommandView& out);

// The answer to a host's discovery request (command 0x0000): an acknowledgement from the lidar
// with the request's sequence number and the DetectionData (return code 0, device type 9, serial,
// address, command port). Its size, 0 when `out` is too small.
std::size_t write_discovery_answer(std::span<std::uint8_t> out, std::uint32_t sequence,
                                   const UnitState& unit);

// What the unit answers on its command port and to discovery: the answer to one datagram, written
// at the start of `out` (its size), or 0 for none. Answered: discovery (0x0000: the DetectionData);
// work-mode / key-value configuration (0x0100: answer_work_mode, its host ends applied through
// `apply`); internal information (0x0101: write_internal_info). Not answered: frames SDK2 would
// drop (read_command), acknowledgements, frames from a lidar, and other commands (the facts do
// not give their answers); and, where SDK2's parser would read the frame and ignore the rest, a
// datagram with bytes past its frame's length (a unit takes one frame a datagram: what follows
// is not a request it can answer).
enum class CommandOutcome : std::uint8_t {
  kAnswered,
  kMalformed,
  kNotARequest,
  kUnknownCommand,
  kTrailingBytes
};
struct CommandAnswer {
  std::size_t size = 0;
  CommandOutcome outcome = CommandOutcome::kMalformed;
};
CommandAnswer answer_command(std::span<const std::uint8_t> datagram, const UnitState& unit,
                             std::span<std::uint8_t> out, const ApplyWorkMode& apply = {});

// A point packet's or IMU packet's header values that change packet to packet.
struct PacketStamp {
  std::uint64_t timestamp_ns = 0;  // the first point's
  std::uint16_t time_interval_100ns = 0;
  std::uint16_t udp_count = 0;
  std::uint8_t frame_count = 0;
  TimeType time_type = TimeType::kPtp;
};

struct PointRecord {
  std::int32_t x_mm = 0, y_mm = 0, z_mm = 0;  // Livox's frame: x forward, y left, z up
  std::uint8_t reflectivity = 0;
  std::uint8_t tag = 0;
};
// A point packet of data type 1 with up to kPointsPerPacket points (a Mid-360 sends 96): its
// size, 0 when there are more or `out` is too small.
std::size_t write_point_packet(std::span<std::uint8_t> out, const PacketStamp& stamp,
                               std::span<const PointRecord> points);

struct ImuRecord {
  std::array<float, 3> gyro_rad_s{};
  std::array<float, 3> acceleration_g{};
};
std::size_t write_imu_packet(std::span<std::uint8_t> out, const PacketStamp& stamp,
                             const ImuRecord& imu);

// The spec decoder: what SDK2 hands its point callback and what livox_ros_driver2 makes of it.
struct PacketInfo {
  std::uint8_t version = 0;
  std::uint16_t length = 0;
  std::uint16_t dot_num = 0;
  std::uint16_t udp_count = 0;
  std::uint8_t frame_count = 0;
  std::uint8_t data_type = 0;
  std::uint8_t time_type = 0;
  std::uint16_t time_interval_100ns = 0;
  std::uint64_t timestamp_ns = 0;
  bool crc_valid = false;  // the stated CRC-32 of timestamp and data (no driver checks it)
};
struct Point {
  float x = 0, y = 0, z = 0;  // metres, Livox's frame
  std::uint8_t reflectivity = 0;
  std::uint8_t tag = 0;
  // livox_ros_driver2's point time: the packet's timestamp plus the point's index times
  // time_interval * 100 / dot_num nanoseconds (integer division, as the driver).
  std::uint64_t time_ns = 0;
};
struct ImuSample {
  ImuRecord record;
  std::uint64_t time_ns = 0;
};
enum class DecodeError : std::uint8_t {
  kNone,
  kTooShort,         // under a header
  kBadVersion,       // not 0
  kLengthMismatch,   // the length field is not the datagram's size
  kSizeMismatch,     // dot_num records of the data type do not fill the packet
  kUnknownDataType,  // past 3
  kNotPoints,        // an IMU or spherical packet handed to decode_points
  kNotImu,
};
DecodeError read_header(std::span<const std::uint8_t> packet, PacketInfo& info);
// Cartesian points (data types 1 and 2); appends to `out`.
DecodeError decode_points(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                          PacketInfo* info = nullptr);
DecodeError decode_imu(std::span<const std::uint8_t> packet, ImuSample& out,
                       PacketInfo* info = nullptr);

// The Mid-360's point packets (data channel: 96 points of data type 1 each, one per 24 firings,
// stamped with the first firing's time, time type PTP so that drivers keep it) and its IMU
// packets (telemetry channel, 200 a second, what set_motion last said). A beam without a
// return is sent as the point (0, 0, 0), as a real unit fills its fixed 96 points.
class LivoxEncoder final : public ColumnEncoder {
 public:
  explicit LivoxEncoder(const ScanPattern& pattern);
  [[nodiscard]] std::size_t data_packet_size() const override { return kPointPacketSize; }
  [[nodiscard]] double data_packet_period_s() const override;
  void set_motion(const ImuReading& reading) override { imu_ = reading; }

 private:
  void append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                     PacketSink& sink) override;
  [[nodiscard]] bool packet_open() const override { return firings_in_packet_ > 0; }
  void send_imu_up_to(double time_s, PacketSink& sink);

  ScanPattern pattern_;
  BeamGeometry geometry_;
  std::vector<PointRecord> points_;  // the packet being filled
  std::vector<std::uint8_t> packet_;
  std::array<std::uint8_t, kImuPacketSize> imu_packet_{};
  int firings_in_packet_ = 0;
  double packet_time_s_ = 0;
  std::uint16_t udp_count_ = 0;
  std::uint8_t frame_count_ = 0;
  ImuReading imu_;
  double next_imu_s_ = -1;  // none sent yet
};

}  // namespace lidaremu::core::livox
