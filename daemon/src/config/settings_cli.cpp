// The command line from the settings schema: one CLI11 option per row with a flag, each value
// stored through its row as a file's value is, and the --config rule of settings_cli.hpp.
#include "lidaremu/daemon/config/settings_cli.hpp"

#include <CLI/CLI.hpp>
#include <map>
#include <ostream>

#include "lidaremu/daemon/config/settings_schema.hpp"

namespace lidaremu::daemon {
namespace {

std::string help_of(const SettingRow& row) {
  std::string help(row.help);
  if (!row.families.all()) help += " (" + family_list(row.families) + " only)";
  if (row.range || row.listed != nullptr) help += "; " + setting_accepted(row);
  std::string fallback = setting_default_text(row);
  std::erase(fallback, '`');
  // A default that takes a paragraph is the reference's to tell.
  if (fallback.size() > 160) fallback = "see docs/flags.md";
  if (!fallback.empty()) help += " (default: " + fallback + ")";
  return help;
}

// What a flag's value looks like in --help.
std::string metavar_of(const SettingRow& row) {
  if (!row.metavar.empty()) return std::string(row.metavar);
  return std::string(row.choices);
}

}  // namespace

std::optional<int> read_command_line(int argc, const char* const* argv,
                                     const std::filesystem::path& default_materials,
                                     CommandLine& out, std::ostream& out_text, std::ostream& err) {
  CLI::App app{
      "lidaremud: a LiDAR sensor emulator. Takes ray hits from a simulator over UDP and "
      "emits the packets and side channels of a real " +
      all_family_names() + " sensor (docs/models.md lists the models)."};
  std::string config;
  app.add_option("--config", config,
                 "TOML file describing the daemon and any number of sensors (docs/config.md); "
                 "[daemon] flags override it, sensor flags cannot be combined with it");
  app.add_flag("--check", out.check_only,
               "read and check the settings (with --config: the file), print them, start nothing");
  std::string reference;
  app.add_option("--reference", reference,
                 "print the generated reference of docs/flags.md or docs/config.md and exit")
      ->check(CLI::IsMember({"flags", "config"}))
      ->group("");  // for the docs' maintainers, not in --help
  std::map<const SettingRow*, std::string> texts;
  std::map<const SettingRow*, std::vector<std::string>> lists;
  std::vector<std::pair<const SettingRow*, CLI::Option*>> options;
  for (const auto& row : settings_schema()) {
    if (row.flag.empty()) continue;
    std::string names(row.flag);
    if (!row.alias.empty()) names += "," + std::string(row.alias);
    CLI::Option* option = nullptr;
    if (setting_kind(row) == SettingKind::kTexts) {
      option = app.add_option(names, lists[&row], help_of(row))->delimiter(',');
    } else {
      option = app.add_option(names, texts[&row], help_of(row));
    }
    option->type_name(metavar_of(row));
    option->group(row.scope == SettingScope::kDaemon ? "The daemon" : "One sensor");
    options.emplace_back(&row, option);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int shown = app.exit(e, out_text, err);  // prints help, or the error and a hint
    return shown == 0 ? 0 : kExitUsage;
  }
  if (!reference.empty()) {
    out_text << (reference == "flags" ? flags_reference_markdown() : config_reference_markdown());
    return 0;
  }

  // The rule for --config: sensor flags refused (each named), daemon flags override the file.
  out.config = config;
  if (!config.empty()) {
    int refused = 0;
    for (const auto& [row, option] : options) {
      if (option->count() == 0 || row->scope != SettingScope::kSensor) continue;
      err << "lidaremud: " << row->flag << " and --config cannot be combined: " << row->flag
          << " sets one sensor and " << config << " may hold many; set " << row->key
          << " in its [[sensor]] instead\n";
      ++refused;
    }
    if (refused > 0) return kExitUsage;
    try {
      out.settings = load_config_file(config);
    } catch (const SettingsError& e) {
      err << "lidaremud: " << e.what() << '\n';
      return kExitConfig;
    }
  }

  SensorFlags sensor;
  std::vector<std::string> problems;
  for (const auto& [row, option] : options) {
    if (option->count() == 0) continue;
    const SettingValues into{&sensor, &out.settings};
    const std::string before = setting_text(*row, into);
    std::optional<std::string> error;
    if (const auto list = lists.find(row); list != lists.end()) {
      error = store_setting(*row, list->second, into);
    } else {
      error = store_setting_text(*row, texts[row], into);
    }
    if (error) {
      problems.push_back(std::string(row->flag) + " " + *error);
      continue;
    }
    if (!config.empty()) {
      out.notes.push_back(std::string(row->flag) + " " + setting_text(*row, into) +
                          " overrides daemon." + std::string(row->key) + " of " + config +
                          (before.empty() ? "" : " (" + before + ")"));
    }
  }
  if (!problems.empty()) {
    for (const auto& p : problems) err << "lidaremud: " << p << '\n';
    return kExitUsage;
  }
  if (config.empty()) {
    try {
      out.settings.sensors.push_back(sensor_from_flags(sensor));
    } catch (const SettingsError& e) {
      err << "lidaremud: " << e.what() << '\n';
      return kExitConfig;
    }
  }
  if (out.settings.materials.empty()) out.settings.materials = default_materials;
  if (const auto daemon_problems = check_daemon_settings(out.settings, "--");
      !daemon_problems.empty()) {
    for (const auto& p : daemon_problems) err << "lidaremud: " << p << '\n';
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace lidaremu::daemon
