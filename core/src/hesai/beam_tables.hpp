#pragma once
// Channel tables of Hesai models too long to keep by hand, generated from their calibration
// files by scripts/gen_hesai_beams.py.
#include <array>
#include <cstdint>

namespace lidaremu::core {

extern const std::array<double, 128> kPandarQt128ElevationDeg;
extern const std::array<double, 128> kPandarQt128AzimuthDeg;
extern const std::array<double, 40> kPandar40pElevationDeg;
extern const std::array<double, 40> kPandar40pAzimuthDeg;
extern const std::array<double, 64> kPandar64ElevationDeg;
extern const std::array<double, 64> kPandar64AzimuthDeg;
extern const std::array<double, 64> kPandarQt64ElevationDeg;
extern const std::array<double, 64> kPandarQt64AzimuthDeg;
extern const std::array<double, 32> kPandarXt32mElevationDeg;
extern const std::array<double, 32> kPandarXt32mAzimuthDeg;
extern const std::array<double, 128> kPandarOt128ElevationDeg;
extern const std::array<double, 128> kPandarOt128AzimuthDeg;
extern const std::array<std::uint8_t, 47176> kPandarAt128Dat;

}  // namespace lidaremu::core
