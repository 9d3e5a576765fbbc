#pragma once
// Every setting the daemon takes, once: a declarative row per setting with its flag, its TOML key,
// its type, unit, range or choices, default, the families it applies to, what may change it at
// run time and its help. The command line (settings_cli.cpp), the config file (config_file.cpp),
// the generic checks below, `lidaremud --help` and the reference in docs/flags.md and
// docs/config.md (settings_reference.cpp) are all produced from these rows.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/physics_params.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon {

// [daemon] settings apply to the whole daemon; [[sensor]] settings to one emulated unit.
enum class SettingScope : std::uint8_t { kDaemon, kSensor };

// What may change a setting once the daemon runs (a bit set).
enum SettingChange : std::uint8_t {
  kAtStart = 0,       // read once at start ([daemon]: SIGHUP does not apply it)
  kOnReload = 1,      // SIGHUP rebuilds the sensors from the file
  kByControlApi = 2,  // PUT /api/v1/sensors/NAME/weather
  kBySensorApi = 4,   // the emulated unit's own API (Ouster HTTP/TCP 7501, Hesai PTC)
};

// The families a setting means something for: those its predicate accepts (none: every family),
// asked of each family's interface (core/family.hpp), so that a new family takes a setting by
// what it is (its kind of scan, its files) rather than by a list that names it.
struct FamilySet {
  bool (*applies)(const core::Family&) = nullptr;
  [[nodiscard]] bool contains(core::SensorFamily f) const {
    return applies == nullptr || applies(core::family_of(f));
  }
  [[nodiscard]] bool all() const { return applies == nullptr; }
};

// Where a setting's value is kept while settings are read: a field of the raw sensor values, of
// the daemon's settings, or a physics parameter override.
using SettingTarget =
    std::variant<std::string SensorFlags::*, int SensorFlags::*, double SensorFlags::*,
                 std::uint64_t SensorFlags::*, std::vector<std::string> SensorFlags::*,
                 std::string DaemonSettings::*, int DaemonSettings::*, double DaemonSettings::*,
                 std::filesystem::path DaemonSettings::*,
                 std::vector<std::string> DaemonSettings::*, PhysicsParamField>;

struct SettingRange {
  double lo = 0;
  double hi = 0;
};

// The columns stand in the order a row reads (designated initializers follow it), not the order
// that packs tightest: a hundred rows, built once.
struct SettingRow {            // NOLINT(clang-analyzer-optin.performance.Padding)
  std::string_view key{};      // the TOML key in [daemon] or [[sensor]]; a dot enters a table
  std::string_view flag{};     // "--rain"; empty: the config file only
  std::string_view alias{};    // a second spelling of the flag
  std::string_view metavar{};  // what the value looks like on the command line
  SettingScope scope = SettingScope::kSensor;
  SettingTarget target{};
  std::string_view unit{};              // of a number
  std::optional<SettingRange> range{};  // a number's accepted values
  std::optional<double> unset{};        // a number that means "not given" (the family's default)
  std::string_view choices{};           // "a|b|c": the only texts accepted
  std::string (*listed)() = nullptr;    // what is accepted, when data elsewhere lists it
  bool pair = false;                    // TOML [A, B] of integers; "A,B" on the command line
  FamilySet families{};                 // meaningless (and refused) elsewhere
  std::uint8_t change = kOnReload;      // SettingChange bits
  std::string_view default_text{};      // the default as users read it ("" = the field's own)
  // A default that differs by family: each family's, after default_text (core/family.hpp).
  std::string (*family_default)(const core::Family&) = nullptr;
  std::string_view help{};     // one line: --help
  std::string_view doc{};      // the reference's text (empty: the help line)
  std::string_view example{};  // a value the daemon accepts (docs, tests)
  // Set when the setting is given (http, foxglove: an explicit address that fails to bind is
  // fatal).
  bool DaemonSettings::*given = nullptr;
};

// Every row: the [daemon] settings, then the [[sensor]] ones, then the physics parameters.
[[nodiscard]] std::span<const SettingRow> settings_schema();
// The [daemon] rows alone (settings_rows_daemon.cpp), part of the above.
[[nodiscard]] std::span<const SettingRow> daemon_rows();
// The physics_params rows alone (settings_rows_physics.cpp), part of the above.
[[nodiscard]] std::span<const SettingRow> physics_param_rows();
[[nodiscard]] const SettingRow* setting_by_key(SettingScope scope, std::string_view key);

// The form of a row's value: what a flag's text is read as and the reference calls it.
enum class SettingKind : std::uint8_t { kText, kWholeNumber, kNumber, kTexts, kPair };
[[nodiscard]] SettingKind setting_kind(const SettingRow& row);

// The values settings are read into: a sensor's raw values and the daemon's settings.
struct SettingValues {
  SensorFlags* sensor = nullptr;
  DaemonSettings* daemon = nullptr;
};

// A value as read, before its row's checks: text, an integer, a real or a list of texts.
using SettingValue = std::variant<std::string, std::int64_t, double, std::vector<std::string>>;

// Stores a value into its row's field, converting its type; the reason when the type is wrong
// ("expected a number"). Range and choices are checked later, on the whole set of values.
[[nodiscard]] std::optional<std::string> store_setting(const SettingRow& row,
                                                       const SettingValue& value,
                                                       const SettingValues& into);
// A command-line text converted for its row (numbers parsed, lists split at commas).
[[nodiscard]] std::optional<std::string> store_setting_text(const SettingRow& row,
                                                            const std::string& text,
                                                            const SettingValues& into);

// The value a row holds, as text (numbers shortest, lists comma-separated); empty when unset.
[[nodiscard]] std::string setting_text(const SettingRow& row, const SettingValues& from);
// The row's default as users read it: its default_text, or the default field's value.
[[nodiscard]] std::string setting_default_text(const SettingRow& row);
// What a row accepts: "0..500 mm/h", "realtime|afap", or "" when only its code can tell.
[[nodiscard]] std::string setting_accepted(const SettingRow& row);
// How a problem names a row: "--rain" on the command line, "sensor[0].weather.rain_mm_per_h" in
// a file (`at` is "--" or the table's path with its dot).
[[nodiscard]] std::string setting_path(const SettingRow& row, const std::string& at);

// The checks every row states (range, choices, the families it applies to), on one sensor's
// values for a model of `family`, and on the daemon's settings; one problem per line.
void check_sensor_values(const SensorFlags& f, core::SensorFamily family, const std::string& at,
                         std::vector<std::string>& problems);
void check_daemon_values(const DaemonSettings& d, const std::string& at,
                         std::vector<std::string>& problems);

// "Ouster", "Hesai and RoboSense", "Velodyne, Hesai and RoboSense".
[[nodiscard]] std::string family_list(FamilySet families);
// The five families' names in the registry's order, as a sentence ("Velodyne, Ouster, ...").
[[nodiscard]] std::string all_family_names();

// The reference pages' generated parts (docs/flags.md's table, docs/config.md's example file and
// tables); a test compares them with the committed pages.
[[nodiscard]] std::string flags_reference_markdown();
[[nodiscard]] std::string config_reference_markdown();

}  // namespace lidaremu::daemon
