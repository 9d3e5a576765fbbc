#pragma once
// Ouster LEGACY lidar packets, IMU packets and the sensor metadata JSON (FORMATS.md), plus a
// spec decoder for LEGACY packets and a metadata reader for real sensors' JSON files.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/ouster/profiles.hpp"

namespace lidaremu::core::ouster {

inline constexpr std::size_t kImuPacketSize = 48;
inline constexpr std::uint32_t kEncoderTicksPerTurn = 90112;
// A valid column's status in LEGACY (the other profiles: 1; ProfileFormat::status_valid).
inline constexpr std::uint32_t kColumnValid = 0xFFFFFFFFu;
inline constexpr double kImuRateHz = 100.0;
inline constexpr std::uint16_t kPacketTypeLidar = 1;

std::array<std::uint8_t, kImuPacketSize> imu_packet(std::uint64_t time_ns,
                                                    const std::array<float, 3>& accel_g,
                                                    const std::array<float, 3>& gyro_deg_s);

ProfileLayout profile_layout(OusterProfile profile);
// "LEGACY", "RNG19_RFL8_SIG16_NIR16", "RNG19_RFL8_SIG16_NIR16_DUAL", "RNG15_RFL8_NIR8".
const char* profile_name(OusterProfile profile);
std::optional<OusterProfile> profile_from_name(std::string_view udp_profile_lidar);
// "TIME_FROM_INTERNAL_OSC", "TIME_FROM_PTP_1588".
const char* timestamp_mode_name(OusterTimestampMode mode);
std::optional<OusterTimestampMode> timestamp_mode_from_name(std::string_view name);
// PTP runs on TAI, 37 s ahead of UTC since 2017 (ouster-ros' ptp_utc_tai_offset is -37).
inline constexpr double kTaiMinusUtcS = 37.0;

// Writes one pixel of a profile's packet (instantiated per profile from its table), given its
// returns' ranges in the range fields' units (first and second return).
using PixelWriter = void (*)(std::span<std::uint8_t> packet, const FrameReturns& returns,
                             std::size_t beam, std::size_t px,
                             const std::array<std::uint32_t, 2>& range_units);

// Lidar packets in any profile (packet header with init_id and serial, CRC-64 footer as
// firmware 3.x), with IMU packets at 100 Hz interleaved in time order. A packet depends on its
// frame and its own columns only, so the packets of a step are written in parallel (up to
// kPacketsAtOnce at a time, on TBB's workers and the calling thread) and then sent in order.
class OusterEncoder final : public Encoder {
 public:
  static constexpr std::size_t kPacketsAtOnce = 32;
  static constexpr int kMaxChannels = 128;  // the largest Ouster head (OS-128)

  OusterEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                const OusterOutput& output);
  void encode_columns(const FrameReturns& returns, double frame_start_s, std::uint32_t end,
                      PacketSink& sink) override;
  void flush(PacketSink& /*sink*/) override {}  // packets never span frames
  void set_motion(const ImuReading& reading) override { motion_ = reading; }
  [[nodiscard]] std::size_t data_packet_size() const override { return packet_size_; }
  [[nodiscard]] double data_packet_period_s() const override;
  [[nodiscard]] std::size_t working_bytes() const override { return staged_.capacity(); }
  // Whether the azimuth window includes column c (its encoder angle c * 360 / W).
  [[nodiscard]] bool column_in_window(std::uint32_t column) const;

 private:
  // The packet whose first column is `first`, written whole into `packet` (thread-safe: reads
  // only the returns and the encoder's settings).
  void write_packet(std::span<std::uint8_t> packet, const FrameReturns& returns,
                    std::uint32_t first, double frame_start_s) const;
  void write_column(std::span<std::uint8_t> packet, const FrameReturns& returns,
                    std::uint32_t column, std::size_t at, std::uint64_t timestamp_ns) const;
  [[nodiscard]] bool packet_in_window(std::uint32_t first) const;
  [[nodiscard]] std::uint64_t header_field(HeaderField field) const;
  [[nodiscard]] std::uint64_t column_field(ColumnField field, std::uint32_t column,
                                           std::uint64_t timestamp_ns, bool valid) const;
  [[nodiscard]] std::uint64_t timestamp_ns(double sensor_time_s) const;

  ScanPattern pattern_;
  SensorIdentity identity_;
  OusterOutput output_;
  const ProfileFormat& format_;
  const ProfileLayout& layout_;
  PixelWriter write_pixel_;  // the profile's, chosen once (not per pixel)
  // Per return the profile has a range field for, the field's unit (millimetres x 2^shift): a
  // column's ranges are rounded to it together.
  std::vector<double> range_units_mm_;
  std::size_t packet_size_;
  // kPacketsAtOnce packets' room, written in parallel, and which columns each one starts at.
  std::vector<std::uint8_t> staged_;
  std::array<std::uint32_t, kPacketsAtOnce> staged_first_{};
  std::uint16_t frame_id_ = 0;
  std::uint32_t next_packet_column_ = 0;  // the frame being encoded: its next packet's column
  int imu_sent_ = 0;                      // and its IMU packets sent
  ImuReading motion_;
};

// The JSON a real sensor serves at /api/v1/sensor/metadata (nested format, firmware 3.1).
struct MetadataSettings {
  std::string udp_dest = "127.0.0.1";
  int udp_port_lidar = 7502;
  int udp_port_imu = 7503;
  OusterOutput output;
};
std::string metadata_json(const ScanPattern& pattern, const SensorIdentity& identity,
                          const MetadataSettings& settings);

// ---- decoding ----

// What a decoder needs from metadata; read from real sensors' JSON (flat or nested).
struct Metadata {
  std::string prod_line;
  std::string udp_profile_lidar = "LEGACY";
  int columns_per_frame = 0;
  int frames_per_second = 0;
  int columns_per_packet = 16;
  std::vector<double> beam_altitude_deg;
  std::vector<double> beam_azimuth_deg;
  std::vector<int> pixel_shift_by_row;
  double lidar_origin_to_beam_origin_mm = 0;
  std::array<double, 16> lidar_to_sensor{-1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 36.18, 0, 0, 0, 1};
  std::uint32_t initialization_id = 0;
  std::string prod_sn;
  [[nodiscard]] int channels() const { return static_cast<int>(beam_altitude_deg.size()); }
};
// Throws std::runtime_error listing every problem with its JSON path.
Metadata parse_metadata(const std::string& json_text);

struct Pixel {
  std::uint32_t range_mm = 0;
  std::uint16_t reflectivity = 0;
  std::uint16_t signal = 0;
  std::uint16_t near_ir = 0;
  std::uint32_t range2_mm = 0;  // second return (dual profile)
  std::uint16_t reflectivity2 = 0;
  std::uint16_t signal2 = 0;
};

// CRC-64/XZ (ECMA-182 polynomial, reflected, all-ones init and final xor): the last 8 bytes of
// a non-legacy packet footer (firmware 3.x) hold it for everything before them.
std::uint64_t crc64_xz(std::span<const std::uint8_t> bytes);
bool footer_crc_valid(std::span<const std::uint8_t> packet);

// Non-legacy packet header fields.
struct PacketHeader {
  std::uint16_t packet_type = 0;
  std::uint16_t frame_id = 0;
  std::uint32_t init_id = 0;
  std::uint64_t serial_number = 0;
};

struct Column {
  std::uint64_t timestamp_ns = 0;
  std::uint16_t measurement_id = 0;
  std::uint16_t frame_id = 0;
  std::uint32_t encoder_count = 0;
  std::uint32_t status = 0;
  std::vector<Pixel> pixels;
};

enum class DecodeError : std::uint8_t { kNone, kWrongSize, kBadMeasurementId, kBadStatus };
const char* to_string(DecodeError e);

// Spec decoder for every lidar profile the metadata names (LEGACY, RNG19_RFL8_SIG16_NIR16,
// its DUAL variant, RNG15_RFL8_NIR8). Throws std::runtime_error for an unknown profile.
class SpecDecoder {
 public:
  explicit SpecDecoder(const Metadata& metadata);
  [[nodiscard]] std::size_t packet_size() const;
  DecodeError decode(std::span<const std::uint8_t> packet, std::vector<Column>& columns,
                     PacketHeader* header = nullptr) const;
  // FORMATS.md "how a driver turns range into xyz": metres, sensor frame.
  [[nodiscard]] std::array<double, 3> to_xyz(const Column& column, int row) const;
  // The same for another range on that pixel's beam (the dual profile's second return).
  [[nodiscard]] std::array<double, 3> to_xyz(const Column& column, int row,
                                             std::uint32_t range_mm) const;

 private:
  Metadata metadata_;
  const ProfileFormat* format_ = nullptr;
};

}  // namespace lidaremu::core::ouster
