// Config files as a user hands them over: ones that would crash or hang the loader refused with
// the reason, every example in config/ and the reference's example in docs/config.md loading.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "lidaremu/core/materials.hpp"
#include "lidaremu/daemon/config/settings.hpp"

using namespace lidaremu::daemon;

namespace {

std::string load_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

std::string repeated(const std::string& piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("Config files that would crash or hang the loader are refused with the reason",
          "[settings][config][hostile]") {
  // The audit: a header dotted 40,000 times (80 KB) overflowed the stack inside toml++, at start
  // and on SIGHUP; /dev/zero exhausted memory; a FIFO blocked start-up for ever.
  const std::string sensor = "[[sensor]]\nmodel = \"vlp16\"\n";
  const auto text_error = [&](const std::string& text) {
    return load_error([&] { load_config_text(text, "deep.toml"); });
  };
  const std::string deep_header = "[" + repeated("a.", 39999) + "a]\n";
  CHECK_THAT(text_error(deep_header),
             Catch::StartsWith("deep.toml:1: nested") && Catch::Contains("at most 32"));
  CHECK_THAT(text_error(sensor + repeated("a.", 35000) + "a = 1\n"),
             Catch::StartsWith("deep.toml:3: nested"));
  CHECK_THAT(text_error("x = " + repeated("[", 35000) + repeated("]", 35000) + "\n"),
             Catch::Contains("nested"));
  CHECK_THAT(text_error("x = " + repeated("{a=", 35000) + "1" + repeated("}", 35000) + "\n"),
             Catch::Contains("nested"));
  CHECK_THAT(text_error(sensor + "y = [\n" + repeated("[", 31) + repeated("]", 31) + "]\n"),
             Catch::StartsWith("deep.toml:4: nested 33"));
  // What only looks deep is read as TOML reads it: strings, multi-line strings, comments.
  const std::string harmless = "# " + repeated("[a.", 100) + "\n[daemon]\nhttp_token = \"" +
                               repeated("[.{\\\"", 100) + "\"\nlog_level = '''\n" +
                               repeated("[.", 100) + "\n'''\n" + sensor;
  CHECK_THAT(text_error(harmless),
             Catch::Contains("1 problem(s)") && Catch::Contains("daemon.log_level = '"));
  // Depth 32 is within the limit and toml++ reads it (the loader then names the unknown key).
  CHECK_THAT(text_error(sensor + "[x." + repeated("a.", 30) + "b]\n"),
             Catch::Contains("x: unknown key"));

  const auto file_error = [](const std::filesystem::path& file) {
    return load_error([&] { load_config_file(file); });
  };
  CHECK_THAT(file_error("/dev/zero"),
             Catch::StartsWith("/dev/zero: not a regular file") && Catch::Contains("TOML file"));
  CHECK_THAT(file_error("/tmp"), Catch::Contains("not a regular file"));
  CHECK_THAT(file_error("/nonexistent/x.toml"),
             Catch::Contains("cannot open") && Catch::Contains("No such file"));
  const auto dir = std::filesystem::temp_directory_path() / "lidaremu-hostile-config";
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "fifo.toml";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(file_error(fifo), Catch::Contains("not a regular file"));  // returns: no writer
  const auto huge = dir / "huge.toml";
  {
    std::ofstream out(huge);
    out << sensor << "# " << std::string(std::size_t{2} << 20, 'x') << "\n";
  }
  CHECK_THAT(file_error(huge), Catch::Contains("larger than 1048576 bytes"));
  // The material table is read the same way.
  CHECK_THAT(load_error([] { lidaremu::core::MaterialTable::load("/dev/zero"); }),
             Catch::Contains("not a regular file") && Catch::Contains("--materials"));
  CHECK_THAT(
      load_error([&] { lidaremu::core::MaterialTable::from_toml_text(deep_header, "m.toml"); }),
      Catch::StartsWith("m.toml:1: nested"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Every example config in config/ loads", "[settings][config]") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(LIDAREMU_TEST_CONFIG_DIR)) {
    if (entry.path().extension() != ".toml" || entry.path().filename() == "materials.toml")
      continue;
    INFO(entry.path());
    CHECK_NOTHROW(load_config_file(entry.path()));
    ++loaded;
  }
  CHECK(loaded >= 1);
}

TEST_CASE("The config reference's example loads: the documentation is the loader's",
          "[settings][docs]") {
  std::ifstream in(std::string(LIDAREMU_TEST_CONFIG_DIR) + "/../docs/config.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto section = readme.find("# The config file");
  REQUIRE(section != std::string::npos);
  const auto begin = readme.find("```toml\n", section);
  const auto end = readme.find("```\n", begin + 8);
  REQUIRE(begin != std::string::npos);
  const std::string example = readme.substr(begin + 8, end - begin - 8);
  DaemonSettings d;
  REQUIRE_NOTHROW(d = load_config_text(example, "docs/config.md"));
  CHECK(d.sensors.size() == 1);
  // Every key the example shows is one the loader knows (an unknown one would have thrown),
  // and it shows every sensor key the loader knows.
  for (const char* key : {"name",
                          "model",
                          "mode",
                          "sensor_id",
                          "hits",
                          "hits_format",
                          "out",
                          "telemetry",
                          "pace",
                          "clock",
                          "seed",
                          "physics",
                          "engine",
                          "idle_timeout_ms",
                          "pacing_margin_ms",
                          "metadata_out",
                          "rays_per_beam",
                          "segments_per_path",
                          "return_mode",
                          "profile",
                          "azimuth_window",
                          "timestamp_mode",
                          "sensor_ip",
                          "api_port",
                          "allow",
                          "surface",
                          "detection",
                          "physics_stages",
                          "physics_params",
                          "weather"}) {
    INFO(key);
    // Keys that are alternatives to others (physics_stages to physics, surface and detection)
    // are shown commented out.
    CHECK((example.find(std::string("\n") + key + " = ") != std::string::npos ||
           example.find(std::string("\n# ") + key + " = ") != std::string::npos));
  }
}

TEST_CASE("A sensor's table read twice is the same sensor; any key changed is another",
          "[config][reload]") {
  // What a SIGHUP compares: a sensor whose settings are equal runs on untouched (sensor_set.hpp).
  const std::string table = "/tmp/lidaremu-reload-compare-" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream csv(table);
    csv << "Time/s,Azimuth/deg,Zenith/deg\n";
    for (int i = 0; i < 20000; ++i) csv << i * 1e-5 << ',' << i * 5.0 << ',' << 60 + i % 8 << '\n';
  }
  const std::string base =
      "[[sensor]]\nname = \"a\"\nmodel = \"os1-64\"\nmode = \"512x10\"\nseed = 3\n"
      "physics_params = { range_noise_sigma_m = 0.02 }\n"
      "[[sensor]]\nname = \"b\"\nmodel = \"livox-mid360\"\nscan_pattern = \"" +
      table +
      "\"\nsensor_id = 1\nhits = \"udp://127.0.0.1:9871\"\nweather = { rain_mm_per_h = 2.0 }\n";
  const auto sensors = [](const std::string& text) {
    return load_config_text(text, "reload.toml").sensors;
  };
  const auto first = sensors(base);
  const auto again = sensors(base);
  REQUIRE(first.size() == 2);
  // Each load reads the scan table into one of its own: compared by what it holds.
  CHECK(first[1].pattern.table != again[1].pattern.table);
  CHECK(first[0] == again[0]);
  CHECK(first[1] == again[1]);
  const auto changed = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    return sensors(text);
  };
  CHECK_FALSE(changed("seed = 3", "seed = 4")[0] == first[0]);
  CHECK_FALSE(changed("0.02", "0.03")[0] == first[0]);
  CHECK_FALSE(changed("512x10", "1024x10")[0] == first[0]);
  CHECK_FALSE(changed("rain_mm_per_h = 2.0", "rain_mm_per_h = 3.0")[1] == first[1]);
  CHECK_FALSE(changed("name = \"a\"", "name = \"c\"")[0] == first[0]);
  // The other sensor of a file with one changed is still the same.
  CHECK(changed("seed = 3", "seed = 4")[1] == first[1]);
  // The table's file rewritten with other directions: another sensor.
  {
    std::ofstream csv(table);
    csv << "Time/s,Azimuth/deg,Zenith/deg\n";
    for (int i = 0; i < 20000; ++i) csv << i * 1e-5 << ',' << i * 5.0 << ',' << 70 + i % 8 << '\n';
  }
  CHECK_FALSE(sensors(base)[1] == first[1]);
  std::filesystem::remove(table);
}
