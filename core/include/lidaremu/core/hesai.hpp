#pragma once
// Hesai: the encoder of point-cloud packets, the spec decoder written from the public facts
// (FORMATS-HESAI-ROBOSENSE.md) and tested on real captures against nebula's decoded clouds, and
// the angle calibration CSV both nebula and the Hesai SDK read.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/hesai/format.hpp"
#include "lidaremu/core/hesai/mirror_correction.hpp"

namespace lidaremu::core::hesai {

// "Channel,Elevation,Azimuth" (or "Laser id,...") then one line per channel, degrees.
struct Calibration {
  std::vector<double> elevation_deg;
  std::vector<double> azimuth_offset_deg;
  // A mirror scan's correction (the AT128's .dat): the angles come from it, as nebula computes
  // them, not from the two rows above.
  const MirrorCorrection* mirror = nullptr;
  // Firing times the decoder turns into azimuth as the Hesai SDK does with its firetime file
  // (firetime x rpm x 6e-6 degrees; the QT128's loop from the tail's mode flag): one row per
  // loop, an entry per channel, microseconds. Empty: none, as nebula.
  std::vector<std::vector<double>> firetime_us{};
};
// Throws std::runtime_error naming the line at fault.
Calibration parse_calibration_csv(const std::string& text);

// The Hesai SDK's firetime file of a model (firetimes_path; --firetimes-out, and the PTC 0xA9
// answer): "Channel,fire time(us)" and a line per channel, or the QT128's form (an "EEFF" line,
// the resolution mode and loop count, a header, then a line per channel of channel and time for
// each loop). Empty when the SDK reads none of the model (firetimes_file_note says why).
std::string firetimes_file(const SensorModel& model);
// Why a model has no firetime file; empty when it has one.
std::string_view firetimes_file_note(const SensorModel& model);
// Either form above; throws std::runtime_error naming the line at fault.
std::vector<std::vector<double>> parse_firetimes_file(const std::string& text);

// The calibration CSV of a model's angles, as the unit's PTC answer (0x05) and nebula's
// calibration files hold them: "Channel,Elevation,Azimuth", channels from 1, degrees.
std::string calibration_csv(const SensorModel& model);
// What the unit serves on PTC 0x05 and --calibration-out writes: that CSV, or a mirror scan's
// binary correction as it is.
std::string calibration_file(const SensorModel& model);
// The angles a decoder of the model's packets uses: its rows, and its mirror correction.
Calibration calibration_of(const SensorModel& model);

// Return-mode bytes (the tail), single and dual.
inline constexpr std::uint8_t kFirst = 0x33;
inline constexpr std::uint8_t kStrongest = 0x37;
inline constexpr std::uint8_t kLast = 0x38;
inline constexpr std::uint8_t kLastStrongest = 0x39;
inline constexpr std::uint8_t kFirstLast = 0x3B;
inline constexpr std::uint8_t kFirstStrongest = 0x3C;
// The return-mode byte of an echo mode; 0 when Hesai packets cannot carry it.
std::uint8_t return_mode_byte(ReturnMode echoes);

class HesaiEncoder final : public ColumnEncoder {
 public:
  // echoes: first, strongest or last (one block per column) or dual, first-last, first-strongest
  // (blocks in pairs with the same azimuth, as paired_block_slot orders them).
  HesaiEncoder(const ScanPattern& pattern, const SensorIdentity& identity, ReturnMode echoes);
  [[nodiscard]] std::size_t data_packet_size() const override { return packet_.size(); }
  [[nodiscard]] double data_packet_period_s() const override;

 private:
  static constexpr std::size_t kMaxLasers = 128;
  using Packet = std::span<std::uint8_t>;
  // A column's range units per echo plane and channel, found for the whole column at once in
  // lanes (simd::range_units_u16) rather than a libm call a record. A block reports plane 0 or 1
  // (the dual modes' slot rules), so two planes are all it reads.
  using ColumnUnits = std::array<std::array<std::uint16_t, kMaxLasers>, 2>;

  void append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                     PacketSink& sink) override;
  [[nodiscard]] bool packet_open() const override { return columns_in_packet_ != 0; }
  // Whole packets of columns that all fire: a mirror scan's (AT128) passes, between its dark
  // columns, which send nothing (a packet that spans them is appended a column at a time).
  [[nodiscard]] std::uint32_t columns_per_whole_packet() const override;
  [[nodiscard]] std::uint32_t firing_run(std::uint32_t first, std::uint32_t end) const override;
  void write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                    double frame_start_s, std::uint32_t ordinal) const override;
  void send_packet(std::span<const std::uint8_t> packet, std::uint32_t first, double frame_start_s,
                   PacketSink& sink) override;
  void write_header();
  // The column's blocks, the packet's `column_in_packet`-th column.
  void write_column(Packet packet, const FrameReturns* returns, std::uint32_t column,
                    int column_in_packet, ColumnUnits& units) const;
  // The packet's time from its first and last columns' (the model's rule).
  [[nodiscard]] double stamp_s(double first_column_time_s, double last_column_time_s) const;
  // The time of the whole packet of the frame's columns from `first` (write_packet, send_packet).
  [[nodiscard]] double whole_packet_stamp_s(double frame_start_s, std::uint32_t first) const;
  [[nodiscard]] std::uint32_t firing_loop_of(std::uint32_t column) const;
  void write_tail(Packet packet, double time_s, std::uint32_t packet_loop,
                  std::uint32_t udp_sequence) const;
  // A complete packet leaves, with the GPS packets of the seconds it passed.
  void emit(std::span<const std::uint8_t> packet, double stamp_s, PacketSink& sink);
  void send_gps_packets_up_to(double time_s, PacketSink& sink);
  const ScanPattern pattern_;
  const SensorIdentity identity_;
  const ModelFormat& format_;
  ReturnMode echoes_;
  int blocks_per_column_ = 1;  // 2 in the dual modes
  int columns_per_packet_ = 0;
  std::uint8_t return_mode_ = 0;
  std::vector<std::uint8_t> header_only_;  // a packet before its columns: the header written
  std::vector<std::uint8_t> packet_;       // append_column's
  int columns_in_packet_ = 0;
  double first_column_time_s_ = 0;
  double last_column_time_s_ = 0;
  std::uint32_t packet_loop_ = 0;
  std::uint32_t udp_sequence_ = 0;
  std::int64_t next_gps_second_ = 0;  // 0: from the first packet's second on
  ColumnUnits column_units_{};        // append_column's
};

// The GPS packet (format.hpp, kGpsPacket) for the whole second `unix_second` (the PPS edge the
// unit stamps it with), `micros` past it, at the unit's position.
std::array<std::uint8_t, kGpsPacket.size> gps_packet(std::int64_t unix_second, std::uint32_t micros,
                                                     const SensorIdentity& identity);

struct GpsInfo {
  std::int64_t unix_second = 0;  // the date and time fields
  std::uint32_t micros = 0;
  char positioning_status = 0;  // 'A' valid, 'V' invalid, 0 unlocked
  bool pps_locked = false;
  std::string nmea;  // up to its terminator
};
enum class GpsError : std::uint8_t { kNone, kWrongSize, kBadFlag, kBadDigits, kBadDate };
// Reads a GPS packet as the spec states it; every field checked.
GpsError read_gps_packet(std::span<const std::uint8_t> packet, GpsInfo& info);

// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial all ones, not reflected, no final xor (the
// QT128's body, functional-safety and tail CRCs).
std::uint32_t crc32_mpeg2(std::span<const std::uint8_t> bytes);

// The ModelFormat of a model name ("pandar-xt32"); nullptr when there is none.
const ModelFormat* find_model_format(std::string_view name);

struct PacketInfo {
  int distance_unit_mm = 0;
  int return_num = 0;
  int first_block_return = 0;
  std::uint8_t flags = 0;
  std::uint8_t return_mode = 0;
  int motor_rpm = 0;
  double time_s = 0;  // UNIX seconds: the tail's date and microseconds (the model's year base)
  std::uint8_t factory = 0;
  std::uint32_t udp_sequence = 0;
  int crcs_checked = 0;        // all valid (a bad one is an error)
  std::uint8_t mode_flag = 0;  // QT128: the firing loop of the packet's first column
};

struct Point {
  float x = 0, y = 0, z = 0;
  float distance_m = 0;
  float azimuth_deg = 0;  // the block's azimuth plus the channel's offset (and firing turn)
  std::uint8_t reflectivity = 0;
  std::uint16_t channel = 0;  // from 0
  std::uint8_t block = 0;
  std::uint16_t block_azimuth = 0;  // as sent, 0.01 degree: names the column
};

// The tail of a packet of `format` (its size already checked): return mode, rpm, factory byte,
// UDP sequence, and the time (the date with the SDK's year rule, the microseconds). false when
// the date is out of range.
bool read_tail(std::span<const std::uint8_t> packet, const ModelFormat& format, PacketInfo& info);

enum class DecodeError : std::uint8_t {
  kNone,
  kWrongSize,
  kBadSignature,
  kWrongProtocol,
  kWrongShape,  // laser or block count not the model's
  kBadAzimuth,
  kBadDate,
  kBadCrc
};
const char* to_string(DecodeError e);

class SpecDecoder {
 public:
  // Throws std::invalid_argument when the calibration (or a firing-time loop) has not one row
  // per laser.
  SpecDecoder(const ModelFormat& format, Calibration calibration);
  // Appends the packet's returns (distance 0 skipped). Sensor frame as nebula's clouds: x right,
  // y forward, z up; azimuth clockwise from y seen from above.
  DecodeError decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                     PacketInfo* info = nullptr) const;

 private:
  const ModelFormat& format_;
  Calibration calibration_;
};

}  // namespace lidaremu::core::hesai
