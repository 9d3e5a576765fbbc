#pragma once
// RoboSense: the encoder of MSOP and DIFOP packets, the spec decoder written from the public
// facts (FORMATS-HESAI-ROBOSENSE.md section 2, rs_driver's packet structs), and the angle file
// rs_driver reads when told to take its calibration from a file.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/robosense/format.hpp"

namespace lidaremu::core::robosense {

// The ModelFormat of a model name ("rs-helios"); nullptr when there is none.
const ModelFormat* find_model_format(std::string_view name);

// rs_driver's angle.csv: one "vertical,horizontal" line per channel, degrees.
std::string angle_csv(const SensorModel& model);

// The echo a block of a dual-return column reports: the first block of a pair the strongest,
// the second the other echo (the last, or the second strongest when the strongest is the last);
// both the same with one echo (nebula's RobosenseSensor: return 0 strongest, 1 last).
[[nodiscard]] inline std::size_t strongest_first_slot(const FrameReturns& returns, std::size_t beam,
                                                      int copy) {
  const std::size_t second = returns.slot(beam, 1);
  return copy == 1 && returns.range_m[second] > 0 ? second : returns.slot(beam, 0);
}

class RoboSenseEncoder final : public ColumnEncoder {
 public:
  // echoes: one of the model's return modes (RoboSenseTraits); dual puts both echoes of a column
  // in two adjacent blocks with the same azimuth (RS-LiDAR-16: in the two halves of one block).
  RoboSenseEncoder(const ScanPattern& pattern, const SensorIdentity& identity, ReturnMode echoes);
  [[nodiscard]] std::size_t data_packet_size() const override { return kPacketSize; }
  [[nodiscard]] double data_packet_period_s() const override;

 private:
  using Packet = std::span<std::uint8_t>;
  // A column's range units per echo plane and channel, found for the whole column at once in
  // lanes (simd::range_units_u16) rather than a libm call a record. A block reports plane 0 or 1
  // (the dual modes' slot rules), so two planes are all it reads.
  using ColumnUnits = std::array<std::array<std::uint16_t, kChannels>, 2>;

  void append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                     PacketSink& sink) override;
  [[nodiscard]] bool packet_open() const override { return columns_in_packet_ != 0; }
  [[nodiscard]] std::uint32_t columns_per_whole_packet() const override {
    return static_cast<std::uint32_t>(columns_per_packet_);
  }
  void write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                    double frame_start_s, std::uint32_t ordinal) const override;
  void send_packet(std::span<const std::uint8_t> packet, std::uint32_t first, double frame_start_s,
                   PacketSink& sink) override;
  // The column's firings, the packet's `column_in_packet`-th column.
  void write_column(Packet packet, const FrameReturns* returns, std::uint32_t column,
                    int column_in_packet, ColumnUnits& units) const;
  // A complete packet leaves when its last column has fired (time_s), after a DIFOP when due.
  void emit(std::span<const std::uint8_t> packet, double last_column_time_s, PacketSink& sink);
  void send_difop_if_due(double time_s, PacketSink& sink);
  // Where a column's echo goes in the packet: its block, its first channel slot, and whether it
  // writes the block's flag and azimuth (the first firing of a block does).
  struct Place {
    int block = 0;
    int first_slot = 0;
    bool heads_block = true;
  };
  [[nodiscard]] Place place_of(int column_in_packet, int echo) const;
  const ScanPattern pattern_;
  const SensorIdentity identity_;
  const ModelFormat& format_;
  std::uint8_t return_mode_code_ = 0;
  int echoes_ = 1;           // echoes a column reports
  int firing_channels_ = 0;  // channel slots one firing takes in a block
  int columns_per_packet_ = 0;
  // A packet before its columns: its id, fixed bytes, temperature and tail.
  std::array<std::uint8_t, kPacketSize> header_only_{};
  std::array<std::uint8_t, kPacketSize> packet_{};  // append_column's
  int columns_in_packet_ = 0;
  double first_column_time_s_ = 0;
  bool difop_sent_ = false;
  double next_difop_s_ = 0;
  ColumnUnits column_units_{};  // append_column's
};

// The rotation rate a DIFOP states: the rate the unit was set to (a whole number of columns a
// turn makes the scan's own rate differ by a little: 1,801 blocks of 55.52 us at 600 rpm).
int difop_rpm(const ScanPattern& pattern);

// The DIFOP packet of `model` at sensor time `time_s`, reporting `return_mode_code`, the row's
// angles and the identity's address, destination and ports (where unknown, RoboSense's factory
// defaults: 192.168.1.200 sending to 255.255.255.255, MSOP 6699, DIFOP 7788).
std::array<std::uint8_t, kPacketSize> difop_packet(const SensorModel& model, double rpm,
                                                   std::uint8_t return_mode_code, double time_s,
                                                   const SensorIdentity& identity);

// What a DIFOP says, as drivers read it.
struct DifopInfo {
  int rpm = 0;
  int fov_start_cdeg = 0, fov_end_cdeg = 0;
  std::uint8_t return_mode = 0;
  double time_s = 0;
  std::array<std::uint8_t, 6> serial{};
  std::array<std::uint8_t, 4> lidar_ip{};
  std::uint16_t msop_port = 0, difop_port = 0;
  std::uint8_t sync_status = 0;
  std::array<int, kChannels> vertical_cdeg{};  // 0.01 degree
  std::array<int, kChannels> horizontal_cdeg{};
  std::string gprmc;  // up to its terminator
};
enum class DifopError : std::uint8_t { kNone, kWrongSize, kBadId, kUncalibrated, kAngleOutOfRange };
// Every field checked as rs_driver's loadFromDifop does: size, id, angles calibrated and in range.
DifopError read_difop(std::span<const std::uint8_t> packet, const ModelFormat& format,
                      DifopInfo& info);

struct Point {
  float x = 0, y = 0, z = 0;  // rs_driver's frame: x forward, y left, z up
  float distance_m = 0;
  std::uint8_t intensity = 0;
  std::uint16_t channel = 0;  // as sent, from 0
  std::uint8_t block = 0;
  std::uint8_t firing = 0;          // of the block's firings (RS-LiDAR-16 single return: 0 or 1)
  std::uint8_t echo = 0;            // dual return: 0 the strongest, 1 the other
  std::uint16_t block_azimuth = 0;  // 0.01 degree, names the column
  double time_s = 0;                // the channel's firing
};

struct PacketInfo {
  double time_s = 0;  // the header's time: the first block's
  double temperature_c = 0;
};

enum class DecodeError : std::uint8_t {
  kNone,
  kNoDifop,
  kWrongSize,
  kBadId,
  kBadBlockFlag,
  kBadTime
};

// The MSOP header's time (UNIX seconds), in the model's form (UTC seconds and microseconds, or
// YMD): nullopt for a datagram that is no MSOP packet of the model or whose fields are no time.
std::optional<double> msop_time_s(std::span<const std::uint8_t> packet, const ModelFormat& format);

// The spec decoder: points as rs_driver places them (the lens-centre offset, each channel's
// azimuth moved on by the turn during its block's firings). Like rs_driver with its default
// wait_for_difop, it decodes no MSOP packet before a valid DIFOP has given it the angles, the
// return mode and the rate.
class SpecDecoder {
 public:
  explicit SpecDecoder(const SensorModel& model);
  DifopError on_difop(std::span<const std::uint8_t> packet);
  DecodeError decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                     PacketInfo* info = nullptr);
  [[nodiscard]] bool has_difop() const { return has_difop_; }
  [[nodiscard]] const DifopInfo& difop() const { return difop_; }
  [[nodiscard]] bool dual() const;

 private:
  const SensorModel& model_;
  const ModelFormat& format_;
  bool has_difop_ = false;
  DifopInfo difop_;
};

// The temperature field (rs_driver's little-endian form, 0.0625 degC steps).
std::array<std::uint8_t, 2> temperature_bytes(double celsius);
double temperature_of(std::span<const std::uint8_t, 2> bytes);

}  // namespace lidaremu::core::robosense
