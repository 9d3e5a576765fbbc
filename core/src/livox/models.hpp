#pragma once
// The Livox rows of the sensor registry.
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core::livox {

// `mechanical_optics`: the registry's 905 nm spinning-head optics at the row's datasheet reach.
SensorModel make_mid360(const SensorOptics& mechanical_optics);

}  // namespace lidaremu::core::livox
