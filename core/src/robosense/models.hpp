#pragma once
// The RoboSense rows of the sensor registry.
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core::robosense {

// `mechanical_optics`: the registry's 905 nm spinning-head optics at the row's datasheet reach.
SensorModel make_rs_helios(const SensorOptics& mechanical_optics);
SensorModel make_rs_bpearl(const SensorOptics& mechanical_optics);
SensorModel make_rs_bpearl_v3(const SensorOptics& mechanical_optics);

}  // namespace lidaremu::core::robosense
