#pragma once
// A model's scan from what the user chose: a rotation rate (spinning heads), a lidar mode
// (Ouster) or a scan table (Livox); which of the three a model takes is its family's
// (Family::scan_kind). The daemon's settings and the clients' tools make their scans here.
#include <optional>
#include <string>
#include <string_view>

#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

struct ScanChoice {
  int rpm = 0;               // 0: the model's default
  std::string mode;          // "COLUMNSxFPS"; empty: the model's default
  std::string scan_pattern;  // a scan-table CSV, or "test-pattern"
};

struct ScanChoiceResult {
  std::optional<ScanPattern> pattern;
  std::string error;
  std::string_view setting;  // the choice the error is about: "rpm", "mode" or "scan_pattern"
};

[[nodiscard]] ScanKind scan_kind(const SensorModel& model);
[[nodiscard]] ScanChoiceResult make_scan(const SensorModel& model, const ScanChoice& choice);

}  // namespace lidaremu::core
