#pragma once
// Which echoes a sensor reports (PHYSICS.md 8), shared by the echo stage, the encoders, the
// sensor registry (the modes each model offers) and the settings.
#include <cstdint>
#include <optional>
#include <string_view>

namespace lidaremu::core {

// kDual: strongest and last (Velodyne, Hesai 0x39); kTwoStrongest: strongest and second
// strongest (Ouster); kFirstLast: first (plane 0) and last (Hesai 0x3B, the QT64's dual);
// kFirstStrongest: strongest (plane 0) and first (Hesai 0x3C, the XT32M2X's capture).
enum class ReturnMode : std::uint8_t {
  kStrongest,
  kLast,
  kFirst,
  kDual,
  kTriple,
  kTwoStrongest,
  kFirstLast,
  kFirstStrongest
};

// Whether the mode reports two echoes a beam (a Velodyne or Hesai column then takes two blocks).
constexpr bool reports_two_echoes(ReturnMode echoes) {
  return echoes == ReturnMode::kDual || echoes == ReturnMode::kTwoStrongest ||
         echoes == ReturnMode::kFirstLast || echoes == ReturnMode::kFirstStrongest;
}

// How many echo planes of FrameReturns the mode fills (the rest stay empty).
constexpr int echo_planes(ReturnMode echoes) {
  switch (echoes) {
    case ReturnMode::kStrongest:
    case ReturnMode::kLast:
    case ReturnMode::kFirst:
      return 1;
    case ReturnMode::kDual:
    case ReturnMode::kTwoStrongest:
    case ReturnMode::kFirstLast:
    case ReturnMode::kFirstStrongest:
      return 2;
    case ReturnMode::kTriple:
      return 3;
  }
  return 3;
}

// The name settings, flags and the web APIs use ("first-last"); the Ouster-only two-strongest
// mode has none (its profile selects it).
std::string_view return_mode_name(ReturnMode echoes);
std::optional<ReturnMode> return_mode_named(std::string_view name);

}  // namespace lidaremu::core
