// The settings schema: every row reaches the daemon from its flag and from its key, a flag given
// with --config is never silently ignored, and the reference pages are the schema's.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "daemon_process.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/config/settings_schema.hpp"

using namespace lidaremu;
using daemon::SettingRow;
using daemon::SettingScope;

namespace {

struct Run {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// The real daemon with these arguments (each quoted), to its exit.
Run run_daemon(const std::vector<std::string>& args) {
  std::string command = test::daemon_path();
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>&1";
  Run run;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("lidaremu-schema-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

// A model of a family the row applies to.
std::string model_for(const SettingRow& row) {
  for (const auto* model : core::all_sensor_models()) {
    if (row.families.contains(model->family)) return std::string(model->name);
  }
  FAIL("no model for " << row.key);
  return {};
}

// The row's example as a TOML value.
std::string toml_value(const SettingRow& row) {
  const std::string example(row.example);
  if (daemon::setting_kind(row) == daemon::SettingKind::kPair) return "[" + example + "]";
  if (daemon::setting_kind(row) == daemon::SettingKind::kTexts) {
    std::string items;
    std::size_t from = 0;
    while (from <= example.size()) {
      const auto comma = std::min(example.find(',', from), example.size());
      items += (items.empty() ? "\"" : ", \"") + example.substr(from, comma - from) + "\"";
      from = comma + 1;
    }
    return "[" + items + "]";
  }
  return daemon::setting_kind(row) == daemon::SettingKind::kText ? "\"" + example + "\"" : example;
}

// A config that the rows' examples do not disturb: no ports the machine may hold.
const std::string kQuietDaemon =
    "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\nduration_s = 60.0\n";

}  // namespace

TEST_CASE("Every row is well formed: a flag or a key once, an example the loader takes",
          "[settings][schema]") {
  std::set<std::string> flags, keys;
  for (const auto& row : daemon::settings_schema()) {
    INFO(row.key);
    CHECK_FALSE(row.key.empty());
    CHECK_FALSE(row.help.empty());
    CHECK_FALSE(row.example.empty());
    CHECK(keys.insert((row.scope == SettingScope::kDaemon ? "daemon." : "") + std::string(row.key))
              .second);
    if (!row.flag.empty()) {
      CHECK(row.flag.starts_with("--"));
      CHECK(flags.insert(std::string(row.flag)).second);
    }
    if (!row.alias.empty()) CHECK(flags.insert(std::string(row.alias)).second);
    // Its example reads back as written, from the command line's text.
    daemon::SensorFlags f;
    daemon::DaemonSettings d;
    REQUIRE(store_setting_text(row, std::string(row.example), {&f, &d}) == std::nullopt);
    const std::string back = setting_text(row, {&f, &d});
    const bool number = row.range.has_value() || row.unset.has_value() || row.key == "seed";
    if (number) {
      CHECK(std::stod(back) == std::stod(std::string(row.example)));
    } else {
      CHECK(back == row.example);
    }
  }
  CHECK(flags.size() > 50);
}

TEST_CASE("Every setting's example, from its key in a file, is what the daemon runs with",
          "[settings][schema]") {
  for (const auto& row : daemon::settings_schema()) {
    INFO(row.key << " = " << toml_value(row));
    std::string text;
    if (row.scope == SettingScope::kDaemon) {
      text = "[daemon]\n" + std::string(row.key) + " = " + toml_value(row) +
             "\n[[sensor]]\nmodel = \"vlp16\"\n";
    } else {
      text = "[[sensor]]\n";
      if (row.key != "model") text += "model = \"" + model_for(row) + "\"\n";
      if (row.key != "scan_pattern" && model_for(row) == "livox-mid360")
        text += "scan_pattern = \"test-pattern\"\n";
      text += std::string(row.key) + " = " + toml_value(row) + "\n";
    }
    const auto settings = daemon::load_config_text(text, "row.toml");
    REQUIRE(settings.sensors.size() == 1);
  }
}

TEST_CASE("A setting on a family it means nothing for is refused, from a flag and from a file",
          "[settings][schema]") {
  int restricted = 0;
  for (const auto& row : daemon::settings_schema()) {
    if (row.families.all() || row.scope != SettingScope::kSensor) continue;
    ++restricted;
    INFO(row.key);
    const core::SensorModel* elsewhere = nullptr;
    for (const auto* model : core::all_sensor_models()) {
      if (!row.families.contains(model->family)) elsewhere = model;
    }
    REQUIRE(elsewhere != nullptr);
    const std::string expected =
        "expected nothing for a " + std::string(core::family_name(elsewhere->family)) + " model";
    daemon::SensorFlags f;
    f.model = elsewhere->name;
    if (elsewhere->family == core::SensorFamily::kLivox) f.scan_pattern = "test-pattern";
    REQUIRE(store_setting_text(row, std::string(row.example), {&f, nullptr}) == std::nullopt);
    // The example may be the default (rpm 600): a value of its own kind that differs.
    if (setting_text(row, {&f, nullptr}) == daemon::setting_default_text(row)) continue;
    CHECK_THROWS_WITH(daemon::sensor_from_flags(f),
                      Catch::Contains(std::string(row.flag)) && Catch::Contains(expected));
  }
  CHECK(restricted >= 8);
}

TEST_CASE("A sensor flag with --config is refused, naming the flag, the file and the key",
          "[settings][schema][process]") {
  const auto config = temp_file("sensor.toml", kQuietDaemon + "[[sensor]]\nmodel = \"vlp16\"\n");
  int checked = 0;
  for (const auto& row : daemon::settings_schema()) {
    if (row.flag.empty() || row.scope != SettingScope::kSensor) continue;
    INFO(row.flag);
    const auto run = run_daemon(
        {"--config", config.string(), std::string(row.flag), std::string(row.example), "--check"});
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.output, Catch::Contains(std::string(row.flag) + " and --config cannot be "
                                                                   "combined") &&
                               Catch::Contains(config.string()) &&
                               Catch::Contains("set " + std::string(row.key)));
    ++checked;
  }
  CHECK(checked > 30);
  // The case that went unnoticed: --rain beside a file started and ignored the rain.
  const auto rain = run_daemon({"--config", config.string(), "--rain", "50"});
  CHECK(rain.exit_code == 2);
  CHECK_THAT(rain.output, Catch::Contains("set weather.rain_mm_per_h"));
  std::filesystem::remove(config);
}

TEST_CASE("A daemon flag with --config overrides the file's value and says so at start",
          "[settings][schema][process]") {
  const auto config = temp_file("daemon.toml", kQuietDaemon +
                                                   "[[sensor]]\nmodel = \"vlp16\"\n"
                                                   "hits = \"udp://127.0.0.1:0\"\n");
  int checked = 0;
  for (const auto& row : daemon::settings_schema()) {
    if (row.flag.empty() || row.scope != SettingScope::kDaemon) continue;
    INFO(row.flag);
    const std::string value =
        row.key == "materials" ? test::materials_path() : std::string(row.example);
    const auto run =
        run_daemon({"--config", config.string(), std::string(row.flag), value, "--check"});
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.output,
               Catch::Contains(std::string(row.flag) + " " + value + " overrides daemon." +
                               std::string(row.key) + " of " + config.string()));
    ++checked;
  }
  CHECK(checked > 15);
  // And the daemon runs with it: the file says 60 s, the flag 0.3 s.
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_daemon({"--config", config.string(), "--duration", "0.3"});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.output, Catch::Contains("--duration 0.3 overrides daemon.duration_s of " +
                                         config.string() + " (60)"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  std::filesystem::remove(config);
}

TEST_CASE("--help names the five families and every flag", "[settings][schema][process]") {
  const auto run = run_daemon({"--help"});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.output, Catch::Contains("Velodyne, Ouster, Hesai, RoboSense and Livox"));
  for (const auto& row : daemon::settings_schema()) {
    if (!row.flag.empty()) CHECK_THAT(run.output, Catch::Contains(std::string(row.flag)));
  }
}

TEST_CASE("docs/flags.md and docs/config.md hold the schema's reference as it is",
          "[settings][schema][docs]") {
  // The committed page's generated part must be what the schema produces now: after a change to
  // the rows, `bash scripts/update_reference.sh` writes it.
  const auto generated_part = [](const std::string& page) {
    const std::string text = test::slurp(std::string(LIDAREMU_TEST_DOCS_DIR) + "/" + page);
    const std::string begin = "<!-- generated by `lidaremud --reference";
    const std::string end = "<!-- end of the generated reference -->";
    const auto from = text.find(begin);
    const auto to = text.find(end);
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    const auto body = text.find('\n', from) + 1;
    return text.substr(body, to - body);
  };
  CHECK(generated_part("flags.md") == daemon::flags_reference_markdown());
  CHECK(generated_part("config.md") == daemon::config_reference_markdown());
}
