#include "lidaremu/core/scan_choice.hpp"

#include <charconv>

#include "lidaremu/core/family.hpp"

namespace lidaremu::core {

ScanKind scan_kind(const SensorModel& model) { return family_of(model).scan_kind(); }

bool rpm_driven(const SensorModel& model) { return scan_kind(model) == ScanKind::kRotationRate; }

ScanChoiceResult make_scan(const SensorModel& model, const ScanChoice& choice) {
  switch (scan_kind(model)) {
    case ScanKind::kRotationRate: {
      auto r = make_rpm_scan(model, choice.rpm != 0 ? choice.rpm : model.spin.default_rpm);
      return {r.pattern, r.error, "rpm"};
    }
    case ScanKind::kLidarMode: {
      int columns = model.ouster.default_columns, fps = model.ouster.default_fps;
      if (!choice.mode.empty()) {
        const std::string& m = choice.mode;
        const auto x = m.find('x');
        const char* end = m.data() + m.size();
        if (x == std::string::npos ||
            std::from_chars(m.data(), m.data() + x, columns).ptr != m.data() + x ||
            std::from_chars(m.data() + x + 1, end, fps).ptr != end) {
          columns = fps = 0;  // refused below with the modes the model has
        }
      }
      auto r = make_ouster_scan(model, columns, fps);
      return {r.pattern, r.error, "mode"};
    }
    case ScanKind::kScanTable: {
      const auto table = scan_table_named(choice.scan_pattern, model.channels);
      if (!table.table) return {std::nullopt, table.error, "scan_pattern"};
      auto r = make_table_scan(model, table.table);
      return {r.pattern, r.error, "scan_pattern"};
    }
  }
  return {std::nullopt, "unknown kind of scan", "rpm"};
}

}  // namespace lidaremu::core
