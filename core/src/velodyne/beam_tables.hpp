#pragma once
// Laser tables of Velodyne models too long to keep by hand, generated from ros-drivers'
// calibration files by scripts/gen_velodyne_beams.py.
#include <array>

#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

extern const std::array<double, 128> kVls128ElevationDeg;
extern const std::array<double, 128> kVls128RotCorrectionDeg;
extern const std::array<VelodyneLaserCorrection, 64> kHdl64eS3Corrections;

}  // namespace lidaremu::core
