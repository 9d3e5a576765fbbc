#pragma once
// Angle helpers shared by the scan geometry's source files (sensor_model.cpp, beam_locate.cpp).
#include <cmath>
#include <numbers>

namespace lidaremu::core::angles {

inline constexpr double kDeg = std::numbers::pi / 180.0;

// Degrees into [0, 360).
inline double wrap_degrees(double deg) {
  deg = std::fmod(deg, 360.0);
  return deg < 0 ? deg + 360.0 : deg;
}

}  // namespace lidaremu::core::angles
