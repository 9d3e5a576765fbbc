// Flags and config files: defaults as documented, every problem reported with its key path.
#include <algorithm>
#include <catch2/catch.hpp>

#include "lidaremu/daemon/config/settings.hpp"

using namespace lidaremu::daemon;

TEST_CASE("Flag defaults follow the sensor family", "[settings]") {
  SensorFlags f;
  auto s = sensor_from_flags(f);
  CHECK(s.model->name == "vlp16");
  CHECK(s.hits.to_string() == "udp://127.0.0.1:9870");
  CHECK(s.out.port == 2368);
  CHECK(s.telemetry.port == 8308);
  CHECK(s.pattern.columns_per_frame == 1808);
  f.model = "os1-64";
  f.out = "udp://127.0.0.5:7777";
  s = sensor_from_flags(f);
  CHECK(s.out.port == 7777);
  CHECK(s.telemetry.host == "127.0.0.5");
  CHECK(s.telemetry.port == 7503);
  CHECK(s.pattern.columns_per_frame == 1024);
  CHECK(s.identity.init_id != 0);
  CHECK(s.identity.init_id < (1u << 24));
}

TEST_CASE("The pacing margin: one frame period of the current pattern unless set", "[settings]") {
  // The audit: an Ouster switched from 1024x10 to 1024x20 through its API kept a 100 ms margin,
  // two of its new periods, and real-time admission then refused every frame.
  SensorFlags f;
  f.model = "os1-64";
  auto s = sensor_from_flags(f);
  CHECK(s.pacing_margin() == Approx(0.1));
  SensorFlags fast = f;
  fast.mode = "1024x20";
  const auto twenty_hz = sensor_from_flags(fast).pattern;
  s.pattern = twenty_hz;  // as the API switches it
  CHECK(s.pacing_margin() == Approx(0.05));
  f.pacing_margin_ms = 30;
  s = sensor_from_flags(f);
  s.pattern = twenty_hz;
  CHECK(s.pacing_margin() == Approx(0.03));
}

TEST_CASE("Bad flags: every problem at once, with what is accepted", "[settings][hostile]") {
  SensorFlags f;
  f.rpm = 2000;
  f.hits = "tcp://nowhere";
  f.pace = "fast";
  f.physics = "magic";
  f.engine = "blender";
  try {
    sensor_from_flags(f);
    FAIL("accepted bad flags");
  } catch (const SettingsError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("5 problem(s)"));
    CHECK_THAT(msg, Catch::Contains("--rpm: rpm 2000 is not one of 300..1200"));
    CHECK_THAT(msg, Catch::Contains("--hits = 'tcp://nowhere': expected udp://HOST:PORT"));
    CHECK_THAT(msg, Catch::Contains("--pace = 'fast': expected realtime|afap"));
    CHECK_THAT(msg, Catch::Contains("--physics = 'magic': expected ideal|default"));
    CHECK_THAT(msg, Catch::Contains("--engine = 'blender': expected ros|unreal|unity"));
  }
  SensorFlags ouster;
  ouster.model = "os1-64";
  ouster.mode = "2048x20";
  CHECK_THROWS_WITH(sensor_from_flags(ouster),
                    Catch::Contains("--mode: lidar mode 2048x20 is not one of"));
  SensorFlags velodyne_metadata;
  velodyne_metadata.metadata_out = "/tmp/x.json";
  CHECK_THROWS_WITH(sensor_from_flags(velodyne_metadata), Catch::Contains("Ouster only"));
}

TEST_CASE("Endpoints", "[settings]") {
  CHECK(parse_endpoint("udp://127.0.0.1:0")->port == 0);
  CHECK(parse_endpoint("udp://10.1.2.3:65535")->host == "10.1.2.3");
  CHECK_FALSE(parse_endpoint("udp://127.0.0.1:65536"));
  CHECK_FALSE(parse_endpoint("udp://127.0.0.1:12x"));
  CHECK_FALSE(parse_endpoint("127.0.0.1:9870"));
  CHECK_FALSE(parse_endpoint("udp://:9870"));
}

TEST_CASE("A config file with two sensors", "[settings][config]") {
  const auto d = load_config_text(R"(
[daemon]
threads = 2
log_level = "warn"

[[sensor]]
name = "roof"
model = "os1-64"
mode = "512x20"
hits = "udp://127.0.0.1:9871"
out = "udp://127.0.0.1:7502"
seed = 7
physics_params = { range_noise_sigma_m = 0.02 }
weather = { visibility_m = 500.0 }

[[sensor]]
model = "vlp16"
rpm = 1200
sensor_id = 1
hits = "udp://127.0.0.1:9872"
pace = "afap"
)",
                                  "car.toml");
  REQUIRE(d.sensors.size() == 2);
  CHECK(d.threads == 2);
  CHECK(d.sensors[0].name == "roof");
  CHECK(d.sensors[0].pattern.columns_per_frame == 512);
  CHECK(d.sensors[0].pipeline.params.weather.visibility_m == 500.0);
  CHECK(d.sensors[0].pipeline.seed == 7);
  CHECK(d.sensors[1].pattern.columns_per_frame == 904);
  CHECK(d.sensors[1].pace == Pace::kAfap);
}

TEST_CASE("Config files: unknown keys refused, all problems named with file and key",
          "[settings][config][hostile]") {
  try {
    load_config_text(R"(
[daemon]
colour = "blue"
[[sensor]]
model = "vlp16"
rmp = 600
hits = "udp://127.0.0.1:9870"
physics_params = { peak_power_w = -1.0, bogus = 1 }
[[sensor]]
model = "vlp16"
hits = "udp://127.0.0.1:9870"
seed = "seven"
)",
                     "car.toml");
    FAIL("accepted a bad config");
  } catch (const SettingsError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::StartsWith("car.toml: 6 problem(s)"));
    CHECK_THAT(msg, Catch::Contains("daemon.colour: unknown key"));
    CHECK_THAT(msg, Catch::Contains("sensor[0].rmp: unknown key (accepted:"));
    CHECK_THAT(msg, Catch::Contains("sensor[0].physics_params.peak_power_w"));
    CHECK_THAT(msg, Catch::Contains("sensor[0].physics_params.bogus: unknown key"));
    CHECK_THAT(msg, Catch::Contains("sensor[1].seed: wrong type"));
    CHECK_THAT(
        msg, Catch::Contains("sensor[1].hits: udp://127.0.0.1:9870 is already used by sensor[0]"));
  }
  CHECK_THROWS_WITH(load_config_text("[daemon\n", "x.toml"),
                    Catch::Contains("x.toml:1: not valid TOML"));
  CHECK_THROWS_WITH(load_config_text("", "x.toml"), Catch::Contains("at least one [[sensor]]"));
  CHECK_THROWS_WITH(load_config_file("/nonexistent.toml"),
                    Catch::Contains("cannot open: No such file"));
}

TEST_CASE("Physics stages, parameters and weather from config; model defaults underneath",
          "[settings][config][physics]") {
  const auto d = load_config_text(R"(
[[sensor]]
model = "vlp16"
rays_per_beam = 5
segments_per_path = 3
return_mode = "dual"
physics_stages = ["geometry", "geometry.raster_correction", "paths.multibounce", "surface.ipsp", "atmosphere.clear_air", "atmosphere.rain", "detection.capability", "echoes", "range.noise", "report"]
physics_params = { bloom_skirt_level = 1e-4, rain_drop_reflectance = 0.03 }
weather = { rain_mm_per_h = 12.5, visibility_m = 2000.0, sun_irradiance_w_per_m2 = 30.0 }
)",
                                  "physics.toml");
  const auto& s = d.sensors.at(0);
  CHECK(s.layout.rays_per_beam == 5);
  CHECK(s.layout.segments_per_path == 3);
  const std::vector<std::string> chain{"geometry",
                                       "geometry.raster_correction",
                                       "paths.multibounce",
                                       "surface.ipsp",
                                       "atmosphere.clear_air",
                                       "atmosphere.rain",
                                       "detection.capability",
                                       "echoes",
                                       "range.noise",
                                       "report"};
  CHECK(s.pipeline.stages == chain);
  CHECK(s.pipeline.return_mode == lidaremu::core::ReturnMode::kDual);
  CHECK(s.pipeline.params.bloom_skirt_level == 1e-4);
  CHECK(s.pipeline.params.rain_drop_reflectance == 0.03);
  CHECK(s.pipeline.params.weather.rain_mm_per_h == 12.5);
  CHECK(s.pipeline.params.weather.visibility_m == 2000.0);
  CHECK(s.pipeline.params.weather.sun_irradiance_w_per_m2 == 30.0);
  // Untouched keys keep the model's datasheet figures (VLP-16: 100 m at 10 %).
  CHECK(s.pipeline.params.datasheet_range_m == 100.0);
  CHECK(s.pipeline.params.datasheet_reflectivity == 0.10);

  try {
    load_config_text(R"(
[[sensor]]
model = "vlp16"
rays_per_beam = 40
surface = "mirror"
weather = { rain_mm_per_h = -3.0 }
)",
                     "bad.toml");
    FAIL("accepted a bad physics config");
  } catch (const SettingsError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("sensor[0].rays_per_beam = 40: expected 1..12"));
    CHECK_THAT(msg, Catch::Contains("sensor[0].surface = 'mirror': expected brdf|ipsp"));
    CHECK_THAT(msg, Catch::Contains("sensor[0].weather.rain_mm_per_h"));
  }
  // What the packets cannot carry is refused, naming what they can.
  CHECK_THROWS_WITH(
      load_config_text("[[sensor]]\nmodel = \"os1-64\"\nreturn_mode = \"dual\"\n", "ouster.toml"),
      Catch::Contains("sensor[0].return_mode = 'dual': expected strongest (this model's return "
                      "modes; the rng19-dual profile reports the two strongest)"));
  CHECK_THROWS_WITH(
      load_config_text("[[sensor]]\nmodel = \"vlp16\"\nreturn_mode = \"triple\"\n", "vlp.toml"),
      Catch::Contains("expected strongest|last|dual"));
  SensorFlags f;
  f.return_mode = "all";
  f.rain_mm_per_h = 1e9;
  CHECK_THROWS_WITH(sensor_from_flags(f),
                    Catch::Contains("--return-mode = 'all'") && Catch::Contains("--rain"));
}

TEST_CASE("The physics chain: presets, substitutions, a list by name, every bad list named",
          "[settings][physics]") {
  using lidaremu::core::PhysicsMode;
  using lidaremu::core::stage_chain;
  SensorFlags f;
  CHECK(sensor_from_flags(f).pipeline.stages == stage_chain(PhysicsMode::kDefault));
  f.physics = "ideal";
  CHECK(sensor_from_flags(f).pipeline.stages == stage_chain(PhysicsMode::kIdeal));
  f.physics = "default";
  f.surface = "ipsp";
  f.detection = "capability";
  auto chain = sensor_from_flags(f).pipeline.stages;
  CHECK(std::count(chain.begin(), chain.end(), "surface.ipsp") == 1);
  CHECK(std::count(chain.begin(), chain.end(), "surface.brdf") == 0);
  CHECK(std::count(chain.begin(), chain.end(), "detection.capability") == 1);
  CHECK(std::count(chain.begin(), chain.end(), "detection.threshold") == 0);
  CHECK(chain.size() == stage_chain(PhysicsMode::kDefault).size());

  SensorFlags listed;
  listed.physics_stages = {"geometry", "surface.brdf", "detection.ideal", "echoes", "report"};
  CHECK(sensor_from_flags(listed).pipeline.stages == listed.physics_stages);
  listed.surface = "ipsp";
  CHECK_THROWS_WITH(sensor_from_flags(listed),
                    Catch::Contains("--surface and --physics-stages both choose"));

  const auto refused = [](const std::string& list) {
    try {
      load_config_text("[[sensor]]\nmodel = \"vlp16\"\nphysics_stages = " + list + "\n",
                       "chain.toml");
    } catch (const SettingsError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(R"(["geometry", "surface.brdf", "fog", "echoes", "report"])"),
             Catch::Contains("chain.toml") &&
                 Catch::Contains("sensor[0].physics_stages: unknown physics stage 'fog'") &&
                 Catch::Contains("known: geometry,"));
  CHECK_THAT(refused(R"(["geometry", "detection.ideal", "surface.brdf", "echoes", "report"])"),
             Catch::Contains("'surface.brdf' must come before 'detection.ideal'"));
  CHECK_THAT(refused(R"(["geometry", "surface.brdf", "surface.ipsp", "detection.ideal", "echoes",
                         "report"])"),
             Catch::Contains("'surface.brdf' and 'surface.ipsp' are both surface models"));
  CHECK_THAT(refused(R"(["geometry", "geometry", "surface.brdf", "detection.ideal", "echoes",
                         "report"])"),
             Catch::Contains("'geometry' is listed twice"));
  CHECK_THAT(refused(R"(["geometry", "detection.threshold", "echoes", "report"])"),
             Catch::Contains("'detection.threshold' needs received power (a surface stage)"));
  CHECK_THAT(refused(R"(["geometry", "surface.brdf", "detection.ideal", "echoes"])"),
             Catch::Contains("must end with 'report'"));
  CHECK_THAT(refused(R"({ blooming = false })"), Catch::Contains("must be a list of stage names"));
  CHECK_THAT(refused(R"([1, 2])"), Catch::Contains("must be a list of stage names"));
  CHECK_THAT(refused("[]"), Catch::Contains("lists no stage"));

  // The detector, receiver and weather parameters are range-checked, each named.
  try {
    load_config_text(R"([[sensor]]
model = "vlp16"
physics_params = { false_alarm_rate = 0.5, rx_fov_rad = 1.0, datasheet_detection_probability = 1.0, rain_drop_reflectance = 2.0, threshold_sigmas = 25.0, bloom_core_sigma_h_deg = 0.0 }
)",
                     "params.toml");
    FAIL("accepted bad physics parameters");
  } catch (const SettingsError& e) {
    const std::string msg = e.what();
    for (const char* key :
         {"false_alarm_rate", "rx_fov_rad", "datasheet_detection_probability",
          "rain_drop_reflectance", "threshold_sigmas", "bloom_core_sigma_h_deg"}) {
      INFO(key);
      CHECK_THAT(msg, Catch::Contains(std::string("sensor[0].physics_params.") + key));
    }
  }
}

TEST_CASE("Host names in addresses resolve at load; one that does not is a named error",
          "[settings]") {
  SensorFlags f;
  f.out = "udp://localhost:7777";
  f.hits = "udp://localhost:0";
  auto s = sensor_from_flags(f);
  CHECK(s.out.host == "127.0.0.1");
  CHECK(s.out.port == 7777);
  CHECK(s.hits.host == "127.0.0.1");
  CHECK(s.telemetry.host == "127.0.0.1");     // the default follows --out
  f.out = "udp://no-such-host.invalid:2368";  // RFC 6761: never resolves
  CHECK_THROWS_WITH(sensor_from_flags(f),
                    Catch::Contains("--out = 'udp://no-such-host.invalid:2368': expected a host "
                                    "that resolves to an IPv4 address"));
  // The daemon's own endpoints (--http, --foxglove) take names too.
  const auto http = parse_http_address("localhost:9880");
  REQUIRE(http);
  CHECK(http->first == "127.0.0.1");
  CHECK(http->second == 9880);
  CHECK_FALSE(parse_http_address("no-such-host.invalid:9880"));
  CHECK_THROWS_WITH(load_config_text("[daemon]\nfoxglove = \"no-such-host.invalid:1\"\n"
                                     "[[sensor]]\nmodel = \"vlp16\"\n",
                                     "d.toml"),
                    Catch::Contains("a host name that resolves"));
  CHECK_NOTHROW(
      load_config_text("[daemon]\nhttp = \"localhost:0\"\nfoxglove = "
                       "\"localhost:0\"\n[[sensor]]\nmodel = \"vlp16\"\n",
                       "d.toml"));
}

TEST_CASE("Daemon keys and sensor names that would hurt are refused, each named",
          "[settings][hostile]") {
  // The audit: log_level = "bogus" silenced the log, stats_interval_s = 1e-9 was a log storm,
  // --duration 1e16 overflowed a cast, a sensor named "../x" escaped the export directory.
  const auto refused = [](const std::string& text) {
    try {
      load_config_text(text, "d.toml");
    } catch (const SettingsError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string sensor = "[[sensor]]\nmodel = \"vlp16\"\n";
  CHECK_THAT(refused("[daemon]\nlog_level = \"bogus\"\n" + sensor),
             Catch::Contains("daemon.log_level = 'bogus': expected trace|debug|info"));
  CHECK_THAT(refused("[daemon]\nstats_interval_s = 1e-9\n" + sensor),
             Catch::Contains("daemon.stats_interval_s") && Catch::Contains("0.1 .. 86400"));
  CHECK_THAT(refused("[daemon]\nduration_s = 1e16\n" + sensor),
             Catch::Contains("daemon.duration_s") && Catch::Contains("0..320000000 s"));
  CHECK(refused("[daemon]\nlog_level = \"warn\"\nstats_interval_s = 5.0\nduration_s = 60.0\n" +
                sensor) == "accepted");
  for (const char* name : {"../x", ".hidden", "a b", "quote\\\""}) {
    INFO(name);
    CHECK_THAT(refused(sensor + "name = \"" + name + "\"\n"),
               Catch::Contains("sensor[0].name") && Catch::Contains("letters, digits"));
  }
  CHECK(refused(sensor + "name = \"front-left_1.v2\"\n") == "accepted");
  CHECK_THAT(
      refused("[daemon]\nhttp_allowed_origins = [\"evil.example\", \"http://a/b\"]\n" + sensor),
      Catch::Contains("2 problem(s)") && Catch::Contains("http://HOST[:PORT]"));
  CHECK_THAT(refused("[daemon]\nhttp_allowed_hosts = [\"a b\", \"host:80\"]\n" + sensor),
             Catch::Contains("2 problem(s)") && Catch::Contains("without a port"));
  CHECK_THAT(refused("[daemon]\nhttp_allowed_hosts = \"x\"\n" + sensor),
             Catch::Contains("must be an array of strings"));
  CHECK(refused("[daemon]\nhttp_allowed_hosts = [\"lidaremu\"]\nhttp_allowed_origins = "
                "[\"https://dash.example:8443\"]\n" +
                sensor) == "accepted");
  CHECK_FALSE(valid_sensor_name(std::string(65, 'a')));
  DaemonSettings d;
  d.duration_s = 1e16;
  d.stats_interval_s = 1e-9;
  const auto flags = check_daemon_settings(d, "--");
  REQUIRE(flags.size() == 2);
  CHECK_THAT(flags[0], Catch::StartsWith("--duration = "));
  CHECK_THAT(flags[1], Catch::StartsWith("--stats-interval = "));
}

TEST_CASE("Output settings: Ouster profile, window, timestamps; sensor address; model limits",
          "[settings]") {
  SensorFlags f;
  f.model = "os0-128";
  f.mode = "2048x10";
  f.profile = "rng19-dual";
  f.azimuth_window = "270000,90000";
  f.timestamp_mode = "ptp";
  auto s = sensor_from_flags(f);
  CHECK(s.pattern.columns_per_frame == 2048);
  CHECK(s.ouster.profile == lidaremu::core::OusterProfile::kRng19Dual);
  CHECK(s.pipeline.return_mode == lidaremu::core::ReturnMode::kTwoStrongest);
  CHECK(s.ouster.azimuth_window_start_mdeg == 270000);
  CHECK(s.ouster.azimuth_window_end_mdeg == 90000);
  CHECK(s.ouster.timestamp_mode == lidaremu::core::OusterTimestampMode::kPtp);
  // Its own loopback address by default, 127.0.0.2 + sensor id; none for a remote output.
  CHECK(s.sensor_ip == "127.0.0.2");
  f.sensor_id = 300;
  CHECK(sensor_from_flags(f).sensor_ip == "127.0.1.46");
  f.out = "udp://192.168.1.77:7502";
  CHECK(sensor_from_flags(f).sensor_ip.empty());
  CHECK(default_sensor_ip(0) == "127.0.0.2");

  SensorFlags bad;
  bad.model = "os1-32";
  bad.profile = "rng42";
  bad.azimuth_window = "10,400000";
  bad.timestamp_mode = "sundial";
  bad.sensor_ip = "127.0.0.999";
  CHECK_THROWS_WITH(
      sensor_from_flags(bad),
      Catch::Contains("--profile = 'rng42': expected legacy|rng19|rng19-dual|rng15") &&
          Catch::Contains("--azimuth-window = '10,400000'") &&
          Catch::Contains("--timestamp-mode = 'sundial'") &&
          Catch::Contains("--sensor-ip = '127.0.0.999'"));
  SensorFlags hdl64e;
  hdl64e.model = "hdl64e";
  hdl64e.return_mode = "dual";
  CHECK_THROWS_WITH(sensor_from_flags(hdl64e),
                    Catch::Contains("expected strongest|last (this model's return modes)"));
  hdl64e.return_mode = "strongest";
  hdl64e.profile = "rng19";
  CHECK_THROWS_WITH(sensor_from_flags(hdl64e), Catch::Contains("Ouster only"));
  // The SDK's firetime file: Hesai models that have one; the others refused with the reason.
  SensorFlags firetimes;
  firetimes.model = "pandar-xt32";
  firetimes.firetimes_out = "/tmp/xt32-firetimes.csv";
  CHECK(sensor_from_flags(firetimes).firetimes_out == "/tmp/xt32-firetimes.csv");
  firetimes.model = "pandar-at128";
  CHECK_THROWS_WITH(sensor_from_flags(firetimes),
                    Catch::Contains("--firetimes-out = '/tmp/xt32-firetimes.csv': expected none "
                                    "for pandar-at128: the AT128's beams leave where its mirror"));
  firetimes.model = "pandar-ot128";
  CHECK_THROWS_WITH(sensor_from_flags(firetimes), Catch::Contains("differs between SDK releases"));
  firetimes.model = "vlp16";
  CHECK_THROWS_WITH(sensor_from_flags(firetimes), Catch::Contains("--firetimes-out"));
  CHECK(load_config_text("[[sensor]]\nmodel = \"os2-64\"\nprofile = \"rng15\"\n"
                         "azimuth_window = [0, 180000]\ntimestamp_mode = \"ptp\"\n"
                         "sensor_ip = \"127.0.0.9\"\napi_port = 8080\n",
                         "t.toml")
            .sensors[0]
            .ouster.azimuth_window_end_mdeg == 180000);
}

TEST_CASE("Live view and export keys: read, and every bad value named",
          "[settings][config][view]") {
  const auto d = load_config_text(R"(
[daemon]
foxglove = "127.0.0.1:0"
export_dir = "/tmp/exports"
export_formats = "pcd,bin"
export_every = 5
export_frames = 3
[[sensor]]
model = "vlp16"
)",
                                  "view.toml");
  CHECK(d.foxglove == "127.0.0.1:0");
  CHECK(d.foxglove_explicit);
  CHECK(d.export_dir == "/tmp/exports");
  CHECK(parse_export_formats(d.export_formats) ==
        std::vector<lidaremu::core::CloudFormat>{lidaremu::core::CloudFormat::kPcd,
                                                 lidaremu::core::CloudFormat::kKittiBin});
  CHECK(d.export_every == 5);
  CHECK(d.export_frames == 3);
  try {
    load_config_text(R"(
[daemon]
foxglove = "localhost"
export_formats = "pcd,las"
export_every = 0
export_frames = 1000000
[[sensor]]
model = "vlp16"
)",
                     "bad.toml");
    FAIL("accepted bad live-view keys");
  } catch (const SettingsError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg,
               Catch::Contains("daemon.foxglove = 'localhost': expected HOST:PORT (an IPv4 address "
                               "or a host name that resolves) or \"off\""));
    CHECK_THAT(msg, Catch::Contains("daemon.export_formats = 'pcd,las'"));
    CHECK_THAT(msg, Catch::Contains("daemon.export_every = 0: expected 1..1000000"));
    CHECK_THAT(msg, Catch::Contains("daemon.export_frames = 1000000: expected 1..100000"));
  }
  CHECK_FALSE(parse_export_formats(""));
  CHECK_FALSE(parse_export_formats("pcd,"));
  CHECK(parse_export_formats("ply,ply")->size() == 1);
}
