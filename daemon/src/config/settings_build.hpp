#pragma once
// Shared by the two sources of settings (flags in settings.cpp, the TOML file in config_file.cpp):
// problems are collected with their key paths, then raised together.
#include <string>
#include <vector>

#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon {

using Problems = std::vector<std::string>;

// Throws a SettingsError listing every problem, one per line, under `source`.
[[noreturn]] void raise(const Problems& problems, const std::string& source);

// Turns one sensor's flag values into settings; `at` is "--" for the command line (problems name
// flags) or "sensor[i]." for a file (problems name keys).
void build_sensor(const SensorFlags& f, const std::string& at, SensorSettings& s,
                  Problems& problems);

}  // namespace lidaremu::daemon
