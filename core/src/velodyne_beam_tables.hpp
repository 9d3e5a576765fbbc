#pragma once
// Laser tables of Velodyne models too long to keep by hand, generated from ros-drivers'
// calibration files by scripts/gen_velodyne_beams.py.
#include <array>

namespace lidaremu::core {

extern const std::array<double, 128> kVls128ElevationDeg;
extern const std::array<double, 128> kVls128RotCorrectionDeg;

}  // namespace lidaremu::core
