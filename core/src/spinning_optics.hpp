#pragma once
// The optics the sensor registry's 905 nm spinning heads share (spinning_optics.cpp).
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

// A spinning head's optics at its datasheet's reach (metres, taken at 10 % and 50 % detection).
SensorOptics spinning_head_optics(double datasheet_range_m);

}  // namespace lidaremu::core
