#pragma once
// Measured beam tables of real Ouster units (see scripts/gen_ouster_beams.py for the source of
// each row); the registry builds the Ouster models from them.
#include <array>
#include <span>
#include <string_view>

namespace lidaremu::core {

struct OusterBeamTable {
  std::string_view model;      // the --model spelling
  std::string_view prod_line;  // "OS-1-64"
  std::string_view prod_pn;
  std::string_view source;  // metadata file in tests/data/ouster/ the angles come from
  int row_step;             // 2: every second row of a 128-channel unit
  double lidar_origin_to_beam_origin_mm;
  std::array<double, 16> lidar_to_sensor;  // row-major, mm
  std::array<double, 16> imu_to_sensor;
  std::span<const double> altitude_deg;
  std::span<const double> azimuth_deg;
};

std::span<const OusterBeamTable> ouster_beam_tables();

}  // namespace lidaremu::core
