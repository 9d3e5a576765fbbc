// Sensor models are data taken from real units; these tests hold the tables to their sources.
#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <regex>
#include <sstream>
#include <tuple>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/core/simd.hpp"

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
        std::tuple{"vlp32c", "velodyne/VeloView-VLP-32C.yaml", 32},
        std::tuple{"vls128", "velodyne/VLS128.yaml", 128}}) {
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

TEST_CASE("Every Hesai model's angles equal its calibration file, and it writes that file back",
          "[sensor][hesai]") {
  for (const auto& [name, file] : {std::pair{"pandar-xt32", "hesai/PandarXT32.csv"},
                                   std::pair{"pandar-xt16", "hesai/PandarXT16.csv"},
                                   std::pair{"pandar-xt32m", "hesai/PandarXT32M.csv"},
                                   std::pair{"pandar-qt128", "hesai/PandarQT128.csv"},
                                   std::pair{"pandar-qt64", "hesai/PandarQT64.csv"},
                                   std::pair{"pandar-40p", "hesai/Pandar40P.csv"},
                                   std::pair{"pandar-64", "hesai/Pandar64.csv"}}) {
    INFO(name);
    const SensorModel* m = find_sensor_model(name);
    REQUIRE(m);
    REQUIRE(m->hesai.format != nullptr);
    CHECK(m->hesai.format->name == name);
    CHECK(m->hesai.format->lasers == m->channels);
    const auto calibration = hesai::parse_calibration_csv(slurp(lidaremu::test::data_path(file)));
    CHECK(m->elevation_deg == calibration.elevation_deg);
    CHECK(m->azimuth_offset_deg == calibration.azimuth_offset_deg);
    // What the unit answers to a calibration request (PTC 0x05, --calibration-out) reads back
    // as the same angles.
    const auto written = hesai::parse_calibration_csv(hesai::calibration_csv(*m));
    CHECK(written.elevation_deg == calibration.elevation_deg);
    CHECK(written.azimuth_offset_deg == calibration.azimuth_offset_deg);
  }
}

TEST_CASE("Every Ouster model's beam tables equal a real unit's metadata", "[sensor]") {
  struct Source {
    const char* model;
    const char* file;
    int row_step;  // OS0-64 and OS2-64: every second row of the 128-channel unit
    const char* prod_line;
  };
  int ouster_models = 0;
  for (const SensorModel* m : all_sensor_models())
    ouster_models += m->family == SensorFamily::kOuster;
  CHECK(ouster_models == 9);
  for (const Source& src : {Source{"os0-32", "OS-0-32-U1_v2.2.0_1024x10.json", 1, "OS-0-32"},
                            Source{"os0-64", "OS-0-128-U1_v2.3.0_1024x10.json", 2, "OS-0-64"},
                            Source{"os0-128", "OS-0-128-U1_v2.3.0_1024x10.json", 1, "OS-0-128"},
                            Source{"os1-32", "OS-1-32-G_v2.1.1_1024x10.json", 1, "OS-1-32"},
                            Source{"os1-64", "OS-1-64_sensor_config_reduced.json", 1, "OS-1-64"},
                            Source{"os1-128", "OS-1-128_v2.3.0_1024x10.json", 1, "OS-1-128"},
                            Source{"os2-32", "OS-2-32-U0_v2.0.0_1024x10.json", 1, "OS-2-32"},
                            Source{"os2-64", "OS-2-128-U1_v2.3.0_1024x10.json", 2, "OS-2-64"},
                            Source{"os2-128", "OS-2-128-U1_v2.3.0_1024x10.json", 1, "OS-2-128"}}) {
    INFO(src.model);
    const SensorModel* m = find_sensor_model(src.model);
    REQUIRE(m);
    CHECK(m->ouster.prod_line == src.prod_line);
    const auto j =
        nlohmann::json::parse(slurp(lidaremu::test::data_path(std::string("ouster/") + src.file)));
    const auto& beams = j.contains("beam_intrinsics") ? j["beam_intrinsics"] : j;
    const auto& altitude = beams["beam_altitude_angles"];
    const auto& azimuth = beams["beam_azimuth_angles"];
    REQUIRE(m->channels * src.row_step == static_cast<int>(altitude.size()));
    for (int i = 0; i < m->channels; ++i) {
      CHECK(m->elevation_deg[i] ==
            altitude[static_cast<std::size_t>(i) * src.row_step].get<double>());
      CHECK(m->azimuth_offset_deg[i] ==
            azimuth[static_cast<std::size_t>(i) * src.row_step].get<double>());
    }
    if (beams.contains("lidar_origin_to_beam_origin_mm")) {
      CHECK(m->ouster.lidar_origin_to_beam_origin_mm ==
            beams["lidar_origin_to_beam_origin_mm"].get<double>());
      const auto& lidar = j.contains("lidar_intrinsics") ? j["lidar_intrinsics"] : j;
      const auto& l2s = lidar["lidar_to_sensor_transform"];
      for (int k = 0; k < 16; ++k) CHECK(m->ouster.lidar_to_sensor[k] == l2s[k].get<double>());
    }
  }
}

TEST_CASE("Scan patterns: VLP-16 timing and rpm limits, Ouster modes", "[sensor]") {
  const SensorModel& vlp = *find_sensor_model("vlp16");
  const auto p = make_rpm_scan(vlp, 600);
  REQUIRE(p.pattern);
  CHECK(p.pattern->columns_per_frame == 1808);  // 0.1 s / 55.296 us
  CHECK(p.pattern->rpm == Approx(600).epsilon(0.001));
  CHECK(make_rpm_scan(vlp, 300).pattern);
  CHECK(make_rpm_scan(vlp, 1200).pattern);
  CHECK_FALSE(make_rpm_scan(vlp, 299).pattern);
  CHECK(make_rpm_scan(vlp, 1201).error.find("300..1200") != std::string::npos);
  const SensorModel& os = *find_sensor_model("os1-64");
  const auto o = make_ouster_scan(os, 1024, 10);
  REQUIRE(o.pattern);
  CHECK(o.pattern->column_period_s == Approx(1.0 / 10240));
  CHECK_FALSE(make_ouster_scan(os, 2048, 20).pattern);
  CHECK_FALSE(make_ouster_scan(os, 1000, 10).pattern);
}

TEST_CASE("Beam geometry: locate inverts ray, and the reported range puts the point back",
          "[sensor]") {
  for (const SensorModel* model : all_sensor_models()) {
    // A table scan's beams are found by the batch's numbering, never located (test_livox_scan
    // puts its points back on their hits).
    if (model->family == SensorFamily::kLivox) continue;
    // Nor a mirror scan's (the AT128's three facets sweep the same directions; raw rows are
    // refused for it): test_hesai_at128 puts its decoded points on their hits.
    if (model->hesai.mirror != nullptr) continue;
    const std::string name(model->name);
    const auto pattern = rpm_driven(*model)
                             ? *make_rpm_scan(*model, model->spin.default_rpm).pattern
                             : *make_ouster_scan(*model, 1024, 10).pattern;
    const BeamGeometry g(pattern);
    // Near and far: the HDL-64E's lasers leave from offsets of ~0.2 m, a channel's spacing at 20 m.
    for (const double range : {1.5, 23.4, 100.0}) {
      std::size_t wrong = 0;
      for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(pattern.columns_per_frame);
           c += 37) {
        for (std::uint16_t ch = 0; ch < model->channels; ch += 5) {
          const auto ray = g.ray(c, ch);
          CHECK(ray.direction.norm() == Approx(1.0));
          const Eigen::Vector3d hit = ray.origin + range * ray.direction;
          const auto idx = g.locate(hit);
          wrong += idx.column != c || idx.channel != ch;
          if (name != "vlp16" && name != "os1-64" && name != "pandar-xt32") continue;
          // Velodyne, Hesai: range from the origin. Ouster: distance from the beam origin plus n.
          const double expected = rpm_driven(*model)
                                      ? range
                                      : range + model->ouster.lidar_origin_to_beam_origin_mm * 1e-3;
          CHECK(g.reported_range(hit, c, ch) == Approx(expected).margin(1e-9));
        }
      }
      INFO(name << " at " << range << " m");
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("Beam geometry: many hits found at once are the beams found one by one, on every ISA",
          "[sensor][simd]") {
  // Raw rows are found a datagram at a time (locate_many, angles in SIMD lanes); whatever the
  // batch and the instruction set, each hit's beam must be the one locate gives alone, and the
  // true one. Every beam of an OS1-128 2048x10 and an HDL-64E, ranges mixed in one batch.
  for (const char* name : {"os1-128", "hdl64e"}) {
    const SensorModel& model = *find_sensor_model(name);
    const auto pattern = rpm_driven(model) ? *make_rpm_scan(model, 600).pattern
                                           : *make_ouster_scan(model, 2048, 10).pattern;
    const BeamGeometry g(pattern);
    std::vector<Eigen::Vector3d> hits;
    std::vector<BeamIndex> truth;
    const double ranges[] = {1.5, 7.0, 23.4, 100.0};
    for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(pattern.columns_per_frame); ++c) {
      for (std::uint16_t ch = 0; ch < model.channels; ++ch) {
        const auto ray = g.ray(c, ch);
        hits.push_back(ray.origin + ranges[(c + ch) % 4] * ray.direction);
        truth.push_back({c, ch});
      }
    }
    const std::string first_target = simd::current_target();
    for (const auto& target : simd::available_targets()) {
      simd::use_target(target);
      std::vector<BeamIndex> found(hits.size());
      g.locate_many(hits, found);
      std::size_t wrong = 0, unlike_alone = 0;
      for (std::size_t i = 0; i < hits.size(); ++i) {
        wrong += found[i].column != truth[i].column || found[i].channel != truth[i].channel;
        if (i % 97 == 0) {
          const auto alone = g.locate(hits[i]);
          unlike_alone += alone.column != found[i].column || alone.channel != found[i].channel;
        }
      }
      INFO(name << " on " << target);
      CHECK(wrong == 0);
      CHECK(unlike_alone == 0);
    }
    simd::use_target(first_target);
  }
}

TEST_CASE("Beam geometry: the beam origins' reach bounds every beam's origin, and is reached",
          "[sensor]") {
  // The early end of locate's refinements rests on it: no beam leaves farther from the origin
  // its hits are located from (an Ouster's lidar origin, the sensor's otherwise).
  std::size_t off_axis_models = 0;
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family == SensorFamily::kLivox || model->hesai.mirror != nullptr) continue;
    const std::string name(model->name);
    const auto pattern = rpm_driven(*model)
                             ? *make_rpm_scan(*model, model->spin.default_rpm).pattern
                             : *make_ouster_scan(*model, 1024, 10).pattern;
    const BeamGeometry g(pattern);
    const auto& m = model->ouster.lidar_to_sensor;
    const Eigen::Vector3d centre = model->family == SensorFamily::kOuster
                                       ? Eigen::Vector3d(Eigen::Vector3d(m[3], m[7], m[11]) * 1e-3)
                                       : Eigen::Vector3d::Zero();
    double farthest = 0;
    for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(pattern.columns_per_frame); ++c) {
      for (std::uint16_t ch = 0; ch < model->channels; ++ch) {
        farthest = std::max(farthest, (g.ray(c, ch).origin - centre).norm());
      }
    }
    INFO(name << ": farthest origin " << farthest << " m, reach " << g.beam_origin_reach_m());
    CHECK(farthest <= g.beam_origin_reach_m() * (1 + 1e-12));
    CHECK(farthest >= g.beam_origin_reach_m() * (1 - 1e-12));
    off_axis_models += farthest > 0 ? 1 : 0;
  }
  CHECK(off_axis_models >= 10);  // every Ouster, RoboSense and corrected Velodyne
}

TEST_CASE("Beam geometry: refinements ended early find the beams every refinement finds",
          "[sensor]") {
  // A hit ends its refinements early when no beam origin could move it across a boundary
  // (BeamGeometry::Refinement). The hits that test it: sweeps across the boundaries between
  // neighbouring beams (columns and channels; every 53rd column, every 3rd channel), close in,
  // where an origin's offset turns a hit by more than a beam's spacing, and far; and points
  // anywhere around the sensor.
  std::size_t models = 0;
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family == SensorFamily::kLivox || model->hesai.mirror != nullptr) continue;
    const auto pattern = rpm_driven(*model)
                             ? *make_rpm_scan(*model, model->spin.default_rpm).pattern
                             : *make_ouster_scan(*model, 2048, 10).pattern;
    const BeamGeometry g(pattern);
    if (g.beam_origin_reach_m() == 0) continue;  // one refinement: nothing to end early
    ++models;
    const auto columns = static_cast<std::uint32_t>(pattern.columns_per_frame);
    std::vector<Eigen::Vector3d> hits;
    const auto sweep = [&](const BeamRay& a, const BeamRay& b, double range) {
      constexpr int kSteps = 48;
      for (int k = 0; k <= kSteps; ++k) {
        const double t = static_cast<double>(k) / kSteps;
        const Eigen::Vector3d origin = a.origin * (1 - t) + b.origin * t;
        hits.push_back(origin + range * (a.direction * (1 - t) + b.direction * t).normalized());
      }
    };
    for (std::uint32_t c = 0; c < columns; c += 53) {
      for (std::uint16_t ch = 0; ch + 1 < model->channels; ch += 3) {
        for (const double range : {0.4, 1.5, 6.0, 30.0, 150.0}) {
          sweep(g.ray(c, ch), g.ray((c + 1) % columns, ch), range);
          sweep(g.ray(c, ch), g.ray(c, static_cast<std::uint16_t>(ch + 1)), range);
        }
      }
    }
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> coordinate(-60.0, 60.0);
    for (int i = 0; i < 20000; ++i) {
      const double scale = i % 4 == 0 ? 0.02 : 1.0;  // a quarter within 1.2 m
      hits.emplace_back(coordinate(gen) * scale, coordinate(gen) * scale,
                        coordinate(gen) * scale * 0.3);
    }
    std::vector<BeamIndex> early(hits.size()), every(hits.size());
    g.locate_many(hits, early);
    g.locate_many(hits, every, BeamGeometry::Refinement::kEveryRefinement);
    std::size_t unlike = 0;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      if ((early[i].column != every[i].column || early[i].channel != every[i].channel) &&
          unlike++ == 0) {
        UNSCOPED_INFO(model->name << ": hit " << hits[i].transpose() << " m: column "
                                  << early[i].column << " channel " << early[i].channel
                                  << " ended early, column " << every[i].column << " channel "
                                  << every[i].channel << " refined to the end");
      }
    }
    INFO(model->name << ", " << hits.size() << " hits");
    CHECK(unlike == 0);
  }
  CHECK(models >= 10);
}

TEST_CASE("Beam geometry: range offsets in lanes are the reported ranges one by one, on every ISA",
          "[sensor][simd]") {
  // The geometry stage takes an Ouster's range convention a run of a column's hits at a time
  // (simd::ouster_range_offsets); each must be the float of reported_range minus the distance,
  // to the bit. The OS1-128's own transform (a half turn about z) multiplies by 0 and 1, which
  // hides the order of the sums: a copy of it turned by an oblique rotation and shifted too.
  SensorModel tilted = *find_sensor_model("os1-128");
  const Eigen::Matrix3d turn =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(0.3, -0.5, 0.8).normalized()).toRotationMatrix();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) tilted.ouster.lidar_to_sensor[r * 4 + c] = turn(r, c);
  }
  tilted.ouster.lidar_to_sensor[3] = 12.5;
  tilted.ouster.lidar_to_sensor[7] = -3.25;
  tilted.ouster.lidar_to_sensor[11] = 36.18;
  const std::array<const SensorModel*, 2> models{find_sensor_model("os1-128"), &tilted};
  for (const SensorModel* model : models) {
    const auto pattern = *make_ouster_scan(*model, 1024, 10).pattern;
    const BeamGeometry g(pattern);
    const std::string first_target = simd::current_target();
    for (const auto& target : simd::available_targets()) {
      simd::use_target(target);
      std::size_t wrong = 0;
      for (std::uint32_t column = 0; column < 1024; column += 61) {
        // A column's hits at ranges from 0.8 to 150 m, odd points (off the beam) among them.
        std::vector<float> x, y, z;
        std::vector<double> distance;
        for (std::uint16_t ch = 0; ch < model->channels; ++ch) {
          const auto ray = g.ray(column, ch);
          const Eigen::Vector3d p = ray.origin + (0.8 + 1.17 * ch) * ray.direction +
                                    Eigen::Vector3d(0, 0, 0.01 * (ch % 7));
          x.push_back(static_cast<float>(p.x()));
          y.push_back(static_cast<float>(p.y()));
          z.push_back(static_cast<float>(p.z()));
          distance.push_back(Eigen::Vector3d(x.back(), y.back(), z.back()).norm());
        }
        const std::vector<std::uint8_t> wanted(x.size(), 1);
        std::vector<float> offsets(x.size());
        g.range_offsets(column, 0, {x.data(), y.data(), z.data(), x.data(), y.data(), z.data()},
                        distance.data(), wanted.data(), x.size(), offsets.data());
        for (std::uint16_t ch = 0; ch < model->channels; ++ch) {
          const Eigen::Vector3d p(x[ch], y[ch], z[ch]);
          wrong +=
              offsets[ch] != static_cast<float>(g.reported_range(p, column, ch) - distance[ch]);
        }
      }
      INFO(model->name << (model == &tilted ? " tilted" : "") << " on " << target);
      CHECK(wrong == 0);
    }
    simd::use_target(first_target);
  }
}

TEST_CASE("Beam geometry: a hit goes to the channel of nearer elevation, either side of midway",
          "[sensor]") {
  // The channel comes from a table (O(1)); the oracle is the definition: nearest elevation. A
  // VLP-16's lasers are 2 degrees apart and share one origin: hits 0.01 degrees either side of
  // each midpoint, and beyond the outermost lasers.
  const SensorModel& model = *find_sensor_model("vlp16");
  const BeamGeometry g(*make_rpm_scan(model, 600).pattern);
  std::vector<double> elevations(model.elevation_deg.begin(),
                                 model.elevation_deg.begin() + model.channels);
  std::sort(elevations.begin(), elevations.end());
  const auto channel_at = [&](double elevation_deg) {
    const double e = elevation_deg * std::numbers::pi / 180.0;
    return g.locate(Eigen::Vector3d(10 * std::cos(e), 0, 10 * std::sin(e))).channel;
  };
  const auto channel_of = [&](double elevation_deg) {
    for (int ch = 0; ch < model.channels; ++ch) {
      if (model.elevation_deg[ch] == elevation_deg) return ch;
    }
    return -1;
  };
  for (std::size_t i = 1; i < elevations.size(); ++i) {
    const double midway = (elevations[i - 1] + elevations[i]) / 2;
    INFO("between " << elevations[i - 1] << " and " << elevations[i] << " degrees");
    CHECK(channel_at(midway - 0.01) == channel_of(elevations[i - 1]));
    CHECK(channel_at(midway + 0.01) == channel_of(elevations[i]));
  }
  CHECK(channel_at(elevations.front() - 20) == channel_of(elevations.front()));
  CHECK(channel_at(elevations.back() + 40) == channel_of(elevations.back()));
  CHECK(channel_at(89.9) == channel_of(elevations.back()));
}

TEST_CASE("HDL-64E corrections equal ros-drivers' 64e_s3-xiesc.yaml", "[sensor]") {
  const SensorModel* m = find_sensor_model("hdl64e");
  REQUIRE(m);
  REQUIRE(m->laser_corrections.size() == 64);
  const std::string yaml = slurp(lidaremu::test::data_path("velodyne/64e_s3-xiesc.yaml"));
  // Block style: one "- key: value" block per laser.
  const std::regex field(R"((\w+): ([-0-9.e]+))");
  int seen = 0;
  for (std::size_t at = yaml.find("\n- "); at != std::string::npos;) {
    const std::size_t next = yaml.find("\n- ", at + 3);
    const std::string block =
        yaml.substr(at, next == std::string::npos ? std::string::npos : next - at);
    std::map<std::string, double> f;
    for (auto it = std::sregex_iterator(block.begin(), block.end(), field);
         it != std::sregex_iterator(); ++it) {
      f[(*it)[1]] = std::stod((*it)[2]);
    }
    const auto laser = static_cast<std::size_t>(f.at("laser_id"));
    INFO("laser " << laser);
    const auto& c = m->laser_corrections.at(laser);
    const double deg = 180 / std::numbers::pi;
    CHECK(c.elevation_deg == Approx(f.at("vert_correction") * deg).margin(1e-6));
    CHECK(m->elevation_deg[laser] == c.elevation_deg);
    CHECK(c.rot_correction_deg == Approx(f.at("rot_correction") * deg).margin(1e-6));
    CHECK(m->azimuth_offset_deg[laser] == c.rot_correction_deg);
    CHECK(c.dist_correction_m == f.at("dist_correction"));
    CHECK(c.dist_correction_x_m == f.at("dist_correction_x"));
    CHECK(c.dist_correction_y_m == f.at("dist_correction_y"));
    CHECK(c.vert_offset_m == f.at("vert_offset_correction"));
    CHECK(c.horiz_offset_m == f.at("horiz_offset_correction"));
    ++seen;
    at = next;
  }
  CHECK(seen == 64);
}
