#pragma once
// A test scan pattern for the Livox Mid-360, in livox_laser_simulation's CSV form: NOT the
// unit's (no Mid-360 pattern is among the facts). The firings sweep the azimuth by a golden angle
// each while the four lasers' elevations wander over the datasheet's -7 to +52 degrees, so every
// frame looks elsewhere. Header-only: the tests and the micro-benchmarks both use it.
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>

namespace lidaremu::test {

inline std::string golden_angle_pattern_csv(std::size_t firings, int lasers = 4) {
  std::ostringstream csv;
  csv << "Time/s,Azimuth/deg,Zenith/deg\n";
  for (std::size_t f = 0; f < firings; ++f) {
    for (int k = 0; k < lasers; ++k) {
      const double azimuth = std::fmod(static_cast<double>(f) * 137.508, 360.0);
      const double wander = static_cast<double>(f) * 0.00618 + static_cast<double>(k) / lasers;
      const double elevation = -7.0 + 59.0 * (wander - std::floor(wander));
      csv << f * static_cast<std::size_t>(lasers) + static_cast<std::size_t>(k) << ',' << azimuth
          << ',' << 90.0 - elevation << '\n';
    }
  }
  return csv.str();
}

}  // namespace lidaremu::test
