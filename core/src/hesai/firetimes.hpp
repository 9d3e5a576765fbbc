#pragma once
// Each Hesai model's firing-time table (firetimes.cpp names the source of each).
#include <array>
#include <vector>

namespace lidaremu::core::hesai {

// Microseconds after its block's azimuth that channel ch (from 0) fires: one row per firing loop,
// in the SDK's loop order.
using Firetimes = std::vector<std::vector<double>>;

Firetimes firetimes_pandar_xt32();
Firetimes firetimes_pandar_xt16();
Firetimes firetimes_pandar_xt32m();
Firetimes firetimes_pandar_qt64();
Firetimes firetimes_pandar_40p();
Firetimes firetimes_pandar_64();
Firetimes firetimes_pandar_qt128();
Firetimes firetimes_pandar_ot128();

}  // namespace lidaremu::core::hesai
