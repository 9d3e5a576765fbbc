#pragma once
// The physics stage tests' bench: a frame of synthetic hits for one sensor model, the project's
// material table plus Lambertian calibration targets, and the pipeline to run them through. Each
// test file under tests/physics/ checks one stage against the numbers of PHYSICS.md and the seeds.
#include <Eigen/Geometry>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/core/pipeline.hpp"

namespace lidaremu::test {

using namespace lidaremu::core;

inline constexpr std::uint16_t kConcrete = 8;    // Gamma 0.30
inline constexpr std::uint16_t kLucidMetal = 3;  // beta 0.98, mirror-like
inline constexpr std::uint16_t kRetro = 1;
inline constexpr std::uint16_t kTenPercent = 103;  // "test": Gamma 0.10
inline constexpr std::uint16_t kEightyPercent = 200;
inline constexpr std::uint16_t kFortyPercent = 201;
inline constexpr std::uint16_t kThirtyPercent = 202;
inline constexpr std::uint16_t kFivePointTwoPercent = 203;  // 30 % x cos(80 deg)

inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The project's material table plus two Lambertian calibration targets.
inline MaterialTable test_materials() {
  return MaterialTable::from_toml_text(file_text(materials_path()) + R"(
[[material]]
id = 200
name = "80 % Lambertian"
alpha = 0.8
reflectivity = 0.8
[[material]]
id = 201
name = "40 % Lambertian"
alpha = 0.4
reflectivity = 0.4
[[material]]
id = 202
name = "30 % Lambertian"
alpha = 0.3
reflectivity = 0.3
[[material]]
id = 203
name = "5.2 % Lambertian"
alpha = 0.0521
reflectivity = 0.0521
)",
                                       "test materials");
}

// A frame of synthetic hits for one sensor, and the pipeline to run it through.
class Bench {
 public:
  explicit Bench(const char* model, HitLayout layout = {})
      : pattern_(pattern_for(model)), geometry_(pattern_), materials_(test_materials()) {
    hits_.reshape({static_cast<std::uint32_t>(pattern_.columns_per_frame),
                   static_cast<std::uint16_t>(pattern_.model->channels)},
                  layout);
    hits_.clear(7);
    hits_.columns_received = hits_.shape.columns;
  }

  [[nodiscard]] PipelineSettings settings(PhysicsMode mode = PhysicsMode::kDefault) const {
    PipelineSettings s;
    s.stages = stage_chain(mode);
    s.params = default_physics_params(*pattern_.model);
    s.seed = 42;
    return s;
  }

  void set(std::size_t beam, int ray, int segment, const Eigen::Vector3d& p,
           const Eigen::Vector3d& n, std::uint16_t material, float angle_deg = 0,
           std::uint32_t object = 0) {
    const std::size_t i = hits_.hit(beam, ray, segment);
    hits_.x[i] = static_cast<float>(p.x());
    hits_.y[i] = static_cast<float>(p.y());
    hits_.z[i] = static_cast<float>(p.z());
    hits_.nx[i] = static_cast<float>(n.x());
    hits_.ny[i] = static_cast<float>(n.y());
    hits_.nz[i] = static_cast<float>(n.z());
    hits_.material[i] = material;
    hits_.angle_deg[i] = angle_deg;
    hits_.object_id[i] = object;
  }

  [[nodiscard]] Eigen::Vector3d direction(std::size_t beam) const {
    return geometry_
        .ray(static_cast<std::uint32_t>(beam / hits_.shape.channels),
             static_cast<std::uint16_t>(beam % hits_.shape.channels))
        .direction;
  }

  // Every beam (centre ray) meets a target facing it at `distance`.
  void target_facing_every_beam(double distance, std::uint16_t material) {
    for (std::size_t b = 0; b < beams(); ++b) {
      const Eigen::Vector3d d = direction(b);
      set(b, 0, 0, d * distance, -d, material);
    }
  }

  // Every beam (centre ray) meets a target at `distance` whose normal is tilted `tilt_rad` from
  // the beam, about the vertical.
  void target_tilted_every_beam(double distance, std::uint16_t material, double tilt_rad) {
    for (std::size_t b = 0; b < beams(); ++b) {
      const Eigen::Vector3d d = direction(b);
      const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
      set(b, 0, 0, d * distance, -d * std::cos(tilt_rad) + side * std::sin(tilt_rad), material);
    }
  }

  FrameReturns run(const PipelineSettings& s) {
    Pipeline pipeline(pattern_, materials_, s);
    FrameReturns out;
    pipeline.process(hits_, out);
    return out;
  }

  [[nodiscard]] std::size_t beams() const { return hits_.shape.beams(); }
  FrameHits& hits() { return hits_; }
  [[nodiscard]] const ScanPattern& pattern() const { return pattern_; }

 private:
  static ScanPattern pattern_for(const char* name) {
    const SensorModel& m = *find_sensor_model(name);
    return rpm_driven(m) ? *make_rpm_scan(m, 600).pattern : *make_ouster_scan(m, 1024, 10).pattern;
  }

  ScanPattern pattern_;
  BeamGeometry geometry_;
  MaterialTable materials_;
  FrameHits hits_;
};

// The reflectivity readings of the beams' first echoes that were detected.
inline std::vector<int> readings(const FrameReturns& out) {
  std::vector<int> r;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) {
    if (out.range_m[b] > 0) r.push_back(out.reflectivity[b]);
  }
  return r;
}
inline double median(std::vector<int> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

inline double detected_share(const FrameReturns& out) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) n += out.range_m[b] > 0;
  return double(n) / double(out.shape.beams());
}

}  // namespace lidaremu::test
