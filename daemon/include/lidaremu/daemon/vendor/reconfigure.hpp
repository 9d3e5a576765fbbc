#pragma once
// How a unit's API hands a change it accepted to the running sensor.
#include <functional>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon {

struct ReconfigureResult {
  std::string error;       // empty: applied (or waiting its turn); otherwise why not
  bool forbidden = false;  // refused by policy (a stream's destination: destination_policy.hpp)
  [[nodiscard]] bool ok() const { return error.empty(); }
};

// Applies new settings to the running sensor (a new init_id, mode, profile, destination...),
// asked by the client at `requester` (its IPv4 address).
using Reconfigure =
    std::function<ReconfigureResult(const SensorSettings& next, const std::string& requester)>;

}  // namespace lidaremu::daemon
