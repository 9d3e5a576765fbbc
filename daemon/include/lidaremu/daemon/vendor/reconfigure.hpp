#pragma once
// How a unit's API hands a change it accepted to the running sensor.
#include <functional>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon {

// Applies new settings to the running sensor (a new init_id, mode, profile, destination...).
// Returns an empty string, or why it could not.
using Reconfigure = std::function<std::string(const SensorSettings&)>;

}  // namespace lidaremu::daemon
