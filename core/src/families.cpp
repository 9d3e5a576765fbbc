// The families, in the registry's order: the one place that maps the family enumeration to each
// family's implementation (core/src/<family>/family.cpp).
#include <algorithm>
#include <array>
#include <cstdlib>

#include "lidaremu/core/family.hpp"

namespace lidaremu::core {

std::string Family::calibration_file(const SensorModel& /*model*/) const { return {}; }
std::string Family::firetimes_file(const SensorModel& /*model*/) const { return {}; }
std::string Family::no_firetimes_file(const SensorModel& /*model*/) const {
  return "its drivers read no firing-time file";
}

ReturnMode Family::default_return_mode(const SensorModel& model) const {
  const auto modes = return_modes(model);
  if (modes.empty() ||
      std::find(modes.begin(), modes.end(), ReturnMode::kStrongest) != modes.end()) {
    return ReturnMode::kStrongest;
  }
  return modes.front();
}

ReturnMode default_return_mode(const SensorModel& model) {
  return family_of(model).default_return_mode(model);
}

// The one switch over the family enumeration: exhaustive, no default, and -Wswitch-enum an error
// here, so that a family added to the enumeration and not to the switch fails the build.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"
const Family& family_of(SensorFamily family) {
  switch (family) {
    case SensorFamily::kVelodyne:
      return velodyne::family();
    case SensorFamily::kOuster:
      return ouster::family();
    case SensorFamily::kHesai:
      return hesai::family();
    case SensorFamily::kRoboSense:
      return robosense::family();
    case SensorFamily::kLivox:
      return livox::family();
  }
  std::abort();  // every enumerator is handled above
}
#pragma GCC diagnostic pop

namespace {
constexpr std::array kFamilyIds{SensorFamily::kVelodyne, SensorFamily::kOuster,
                                SensorFamily::kHesai, SensorFamily::kRoboSense,
                                SensorFamily::kLivox};
}  // namespace

std::span<const Family* const> all_families() {
  static const auto families = [] {
    std::array<const Family*, kFamilyIds.size()> all{};
    for (std::size_t i = 0; i < kFamilyIds.size(); ++i) all[i] = &family_of(kFamilyIds[i]);
    return all;
  }();
  return families;
}

SensorFamily family_id(const Family& family) {
  for (const auto id : kFamilyIds) {
    if (&family_of(id) == &family) return id;
  }
  std::abort();  // a Family is only ever one of the above
}

const char* family_name(SensorFamily family) { return family_of(family).name().data(); }

}  // namespace lidaremu::core
