// Sensor models are data taken from real units; these tests hold the tables to their sources.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <regex>
#include <sstream>
#include <tuple>

#include "daemon_process.hpp"
#include "lidaremu/core/sensor_model.hpp"

using namespace lidaremu::core;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("Velodyne angle tables equal the ros-drivers calibration files", "[sensor]") {
  for (const auto& [name, file, lasers] :
       {std::tuple{"vlp16", "velodyne/VLP16db.yaml", 16},
        std::tuple{"puck-hires", "velodyne/VLP16_hires_db.yaml", 16},
        std::tuple{"hdl32e", "velodyne/32db.yaml", 32},
        std::tuple{"vlp32c", "velodyne/VeloView-VLP-32C.yaml", 32}}) {
    INFO(name);
    const SensorModel* m = find_sensor_model(name);
    REQUIRE(m);
    const std::string yaml = slurp(lidaremu::test::data_path(file));
    const std::regex entry(
        R"(laser_id: (\d+), rot_correction: ([-0-9.e]+),\s*vert_correction: ([-0-9.e]+))");
    int seen = 0;
    for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), entry);
         it != std::sregex_iterator(); ++it) {
      const int laser = std::stoi((*it)[1]);
      INFO("laser " << laser);
      // The registry holds degrees to 3 decimals where the file has radians of them.
      CHECK(m->elevation_deg.at(laser) ==
            Approx(std::stod((*it)[3]) * 180 / std::numbers::pi).margin(1e-6));
      CHECK(m->azimuth_offset_deg.at(laser) ==
            Approx(std::stod((*it)[2]) * 180 / std::numbers::pi).margin(1e-6));
      ++seen;
    }
    CHECK(seen == lasers);
    CHECK(m->channels == lasers);
  }
}

TEST_CASE("OS1-64 beam tables equal a real OS-1-64's metadata", "[sensor]") {
  const SensorModel* m = find_sensor_model("os1-64");
  REQUIRE(m);
  const auto j = nlohmann::json::parse(
      slurp(lidaremu::test::data_path("ouster/OS-1-64_sensor_config_reduced.json")));
  REQUIRE(j["beam_altitude_angles"].size() == 64);
  for (int i = 0; i < 64; ++i) {
    CHECK(m->elevation_deg[i] == j["beam_altitude_angles"][i].get<double>());
    CHECK(m->azimuth_offset_deg[i] == j["beam_azimuth_angles"][i].get<double>());
  }
}

TEST_CASE("Scan patterns: VLP-16 timing and rpm limits, Ouster modes", "[sensor]") {
  const SensorModel& vlp = *find_sensor_model("vlp16");
  const auto p = make_velodyne_scan(vlp, 600);
  REQUIRE(p.pattern);
  CHECK(p.pattern->columns_per_frame == 1808);  // 0.1 s / 55.296 us
  CHECK(p.pattern->rpm == Approx(600).epsilon(0.001));
  CHECK(make_velodyne_scan(vlp, 300).pattern);
  CHECK(make_velodyne_scan(vlp, 1200).pattern);
  CHECK_FALSE(make_velodyne_scan(vlp, 299).pattern);
  CHECK(make_velodyne_scan(vlp, 1201).error.find("300..1200") != std::string::npos);
  const SensorModel& os = *find_sensor_model("os1-64");
  const auto o = make_ouster_scan(os, 1024, 10);
  REQUIRE(o.pattern);
  CHECK(o.pattern->column_period_s == Approx(1.0 / 10240));
  CHECK_FALSE(make_ouster_scan(os, 2048, 20).pattern);
  CHECK_FALSE(make_ouster_scan(os, 1000, 10).pattern);
}

TEST_CASE("Beam geometry: locate inverts ray, and the reported range puts the point back",
          "[sensor]") {
  for (const char* name : {"vlp16", "os1-64"}) {
    const SensorModel& model = *find_sensor_model(name);
    const auto pattern = model.family == SensorFamily::kVelodyne
                             ? *make_velodyne_scan(model, 600).pattern
                             : *make_ouster_scan(model, 1024, 10).pattern;
    const BeamGeometry g(pattern);
    for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(pattern.columns_per_frame); c += 37) {
      for (std::uint16_t ch = 0; ch < model.channels; ch += 5) {
        INFO(name << " column " << c << " channel " << ch);
        const auto ray = g.ray(c, ch);
        CHECK(ray.direction.norm() == Approx(1.0));
        const Eigen::Vector3d hit = ray.origin + 23.4 * ray.direction;
        const auto idx = g.locate(hit);
        CHECK(idx.column == c);
        CHECK(idx.channel == ch);
        // Velodyne: range from the origin. Ouster: distance from the beam origin plus n.
        const double expected = model.family == SensorFamily::kVelodyne
                                    ? 23.4
                                    : 23.4 + model.ouster.lidar_origin_to_beam_origin_mm * 1e-3;
        CHECK(g.reported_range(hit, c) == Approx(expected).margin(1e-9));
      }
    }
  }
}
