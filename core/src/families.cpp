// The families, in the registry's order: the one place that maps the family enumeration to each
// family's implementation (core/src/<family>/family.cpp).
#include <array>
#include <cstdlib>

#include "lidaremu/core/family.hpp"

namespace lidaremu::core {

std::string Family::calibration_file(const SensorModel& /*model*/) const { return {}; }

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
  std::abort();  // every enumerator is handled above (-Wswitch-enum)
}

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
