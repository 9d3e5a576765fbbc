#pragma once
// Hesai: the spec decoder for point-cloud packets, written from the public facts
// (FORMATS-HESAI-ROBOSENSE.md) and tested on real captures against nebula's decoded clouds, and
// the angle calibration CSV both nebula and the Hesai SDK read.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/hesai/format.hpp"

namespace lidaremu::core::hesai {

// "Channel,Elevation,Azimuth" (or "Laser id,...") then one line per channel, degrees.
struct Calibration {
  std::vector<double> elevation_deg;
  std::vector<double> azimuth_offset_deg;
};
// Throws std::runtime_error naming the line at fault.
Calibration parse_calibration_csv(const std::string& text);

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
  int crcs_checked = 0;  // all valid (a bad one is an error)
};

struct Point {
  float x = 0, y = 0, z = 0;
  float distance_m = 0;
  float azimuth_deg = 0;  // the block's azimuth plus the channel's offset
  std::uint8_t reflectivity = 0;
  std::uint16_t channel = 0;  // from 0
  std::uint8_t block = 0;
};

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
  // Throws std::invalid_argument when the calibration has not one row per laser.
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
