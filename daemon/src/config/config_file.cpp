// The TOML config file: its [daemon] table and every [[sensor]], each key read through its row of
// the settings schema, every problem collected with its key path.
#include <toml++/toml.h>

#include <string>

#include "lidaremu/core/config_text.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/config/settings_schema.hpp"
#include "settings_build.hpp"

namespace lidaremu::daemon {
namespace {

// A TOML value as the schema reads values; nothing for a type no setting takes.
std::optional<SettingValue> value_of(const SettingRow& row, const toml::node& node) {
  if (auto text = node.value_exact<std::string>()) return SettingValue{*text};
  if (auto i = node.value_exact<std::int64_t>()) return SettingValue{*i};
  if (auto d = node.value_exact<double>()) return SettingValue{*d};
  const auto* array = node.as_array();
  if (array == nullptr) return std::nullopt;
  if (row.pair) {
    if (array->size() != 2 || !(*array)[0].value_exact<std::int64_t>() ||
        !(*array)[1].value_exact<std::int64_t>()) {
      return std::nullopt;
    }
    return SettingValue{std::to_string(*(*array)[0].value_exact<std::int64_t>()) + "," +
                        std::to_string(*(*array)[1].value_exact<std::int64_t>())};
  }
  std::vector<std::string> items;
  for (const auto& item : *array) {
    auto text = item.value_exact<std::string>();
    if (!text) return std::nullopt;
    items.push_back(*text);
  }
  return SettingValue{std::move(items)};
}

// `physics_stages = ["geometry", ...]`: the chain, stage by stage (names checked when the
// sensor is built); its messages say what earlier versions took instead.
void read_stage_list(const toml::node& n, const std::string& path, SensorFlags& f,
                     Problems& problems) {
  const auto* a = n.as_array();
  if (!a) {
    problems.push_back(path +
                       ": must be a list of stage names, e.g. [\"geometry\", \"surface.brdf\", "
                       "\"detection.threshold\", \"echoes\", \"report\"] (the table of "
                       "switches of earlier versions is gone)");
    return;
  }
  for (const auto& item : *a) {
    if (auto v = item.value<std::string>()) {
      f.physics_stages.push_back(*v);
    } else {
      problems.push_back(path + ": must be a list of stage names (strings)");
      return;
    }
  }
  if (f.physics_stages.empty()) problems.push_back(path + ": lists no stage");
}

// The keys a table of `scope` accepts under `prefix` ("" or "weather."), for a message.
std::string accepted_keys(SettingScope scope, const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& row : settings_schema()) {
    if (row.scope != scope || row.key.substr(0, prefix.size()) != prefix) continue;
    std::string key(row.key.substr(prefix.size()));
    key = key.substr(0, key.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  std::string text;
  for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
}

// Reads every key of a [daemon] or [[sensor]] table (or one of their inner tables) through its
// row; `at` is the table's path ("daemon.", "sensor[0].", "sensor[0].weather.").
void read_table(const toml::table& table, SettingScope scope, const std::string& prefix,
                const std::string& at, const SettingValues& into, Problems& problems) {
  for (const auto& [name, node] : table) {
    const std::string key = prefix + std::string(name.str());
    const std::string path = at + std::string(name.str());
    if (scope == SettingScope::kSensor && key == "physics_stages") {
      read_stage_list(node, path, *into.sensor, problems);
      continue;
    }
    const SettingRow* row = setting_by_key(scope, key);
    if (row == nullptr) {
      const auto inner = accepted_keys(scope, key + ".");
      if (!inner.empty()) {
        if (const auto* t = node.as_table()) {
          read_table(*t, scope, key + ".", path + ".", into, problems);
        } else {
          problems.push_back(path + ": must be a table");
        }
        continue;
      }
      problems.push_back(path + ": unknown key (accepted: " + accepted_keys(scope, prefix) + ")");
      continue;
    }
    const auto value = value_of(*row, node);
    if (!value) {
      problems.push_back(
          path + (row->pair ? ": must be [START, END] in millidegrees"
                            : ": wrong type (expected " +
                                  std::string(row->metavar.empty() ? "a value of this setting"
                                                                   : row->metavar) +
                                  ")"));
      continue;
    }
    if (auto error = store_setting(*row, *value, into)) problems.push_back(path + ": " + *error);
  }
}

}  // namespace

DaemonSettings load_config_file(const std::filesystem::path& file) {
  const core::ConfigText read = core::read_config_file(file);
  if (read.error) throw SettingsError(*read.error);
  return load_config_text(read.text, file.string());
}

DaemonSettings load_config_text(const std::string& text, const std::string& source_name) {
  if (auto deep = core::find_too_deep_toml(text)) {
    throw SettingsError(source_name + ":" + *deep);
  }
  toml::table doc;
  try {
    doc = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw SettingsError(source_name + ":" + std::to_string(e.source().begin.line) +
                        ": not valid TOML: " + std::string(e.description()));
  }
  Problems problems;
  DaemonSettings d;
  for (const auto& [key, node] : doc) {
    const std::string k(key.str());
    if (k == "daemon") {
      const toml::table* t = node.as_table();
      if (!t) {
        problems.push_back("daemon: must be a table");
        continue;
      }
      read_table(*t, SettingScope::kDaemon, "", "daemon.", {nullptr, &d}, problems);
      for (auto& p : check_daemon_settings(d, "daemon.")) problems.push_back(std::move(p));
    } else if (k != "sensor") {
      problems.push_back(k + ": unknown key (accepted: [daemon], [[sensor]])");
    }
  }
  const toml::array* sensors = doc["sensor"].as_array();
  if (!sensors || sensors->empty())
    problems.push_back("sensor: at least one [[sensor]] is required");
  for (std::size_t i = 0; sensors && i < sensors->size(); ++i) {
    const std::string at = "sensor[" + std::to_string(i) + "].";
    const toml::table* t = (*sensors)[i].as_table();
    if (!t) {
      problems.push_back(at + ": must be a table");
      continue;
    }
    SensorFlags f;
    SensorSettings s;
    read_table(*t, SettingScope::kSensor, "", at, {&f, nullptr}, problems);
    build_sensor(f, at, s, problems);
    if (!valid_sensor_name(s.name)) {
      problems.push_back(
          at + "name = '" + s.name +
          "': expected 1-64 letters, digits, '-', '_' or '.', not starting with '.'");
    }
    d.sensors.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < d.sensors.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& a = d.sensors[i];
      const auto& b = d.sensors[j];
      if (a.hits.port != 0 && a.hits.host == b.hits.host && a.hits.port == b.hits.port) {
        problems.push_back("sensor[" + std::to_string(i) + "].hits: " + a.hits.to_string() +
                           " is already used by sensor[" + std::to_string(j) + "]");
      }
    }
  }
  if (!problems.empty()) raise(problems, source_name);
  return d;
}

}  // namespace lidaremu::daemon
