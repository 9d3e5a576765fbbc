#pragma once
// The physics report's synthetic frames and small helpers, shared by its sweeps.
#include <Eigen/Core>
#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::clients::report::detail {

// A frame whose beams the sweep places on chosen surfaces.
class SyntheticFrame {
 public:
  explicit SyntheticFrame(const core::ScanPattern& pattern) : geometry_(pattern) {
    hits_.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
                   static_cast<std::uint16_t>(pattern.model->channels)});
    hits_.clear(0);
    hits_.columns_received = hits_.shape.columns;
  }
  [[nodiscard]] Eigen::Vector3d direction(std::size_t beam) const {
    return geometry_
        .ray(static_cast<std::uint32_t>(beam / hits_.shape.channels),
             static_cast<std::uint16_t>(beam % hits_.shape.channels))
        .direction;
  }
  void set(std::size_t beam, const Eigen::Vector3d& p, const Eigen::Vector3d& n,
           std::uint16_t material) {
    hits_.x[beam] = static_cast<float>(p.x());
    hits_.y[beam] = static_cast<float>(p.y());
    hits_.z[beam] = static_cast<float>(p.z());
    hits_.nx[beam] = static_cast<float>(n.x());
    hits_.ny[beam] = static_cast<float>(n.y());
    hits_.nz[beam] = static_cast<float>(n.z());
    hits_.material[beam] = material;
  }
  void facing_every_beam(double distance, std::uint16_t material) {
    for (std::size_t b = 0; b < beams(); ++b) {
      const Eigen::Vector3d d = direction(b);
      set(b, d * distance, -d, material);
    }
  }
  // Every beam on a target at `distance` whose normal is tilted `tilt_rad` from the beam.
  void tilted_every_beam(double distance, std::uint16_t material, double tilt_rad) {
    for (std::size_t b = 0; b < beams(); ++b) {
      const Eigen::Vector3d d = direction(b);
      const Eigen::Vector3d side = d.unitOrthogonal();
      set(b, d * distance, -d * std::cos(tilt_rad) + side * std::sin(tilt_rad), material);
    }
  }
  // Nothing hit: every beam sees the sky.
  void empty() {
    for (std::size_t b = 0; b < beams(); ++b) hits_.material[b] = 0;
  }
  [[nodiscard]] std::size_t beams() const { return hits_.shape.beams(); }
  core::FrameHits& hits() { return hits_; }

 private:
  core::BeamGeometry geometry_;
  core::FrameHits hits_;
};

// Lambertian targets (ids 1..n) of the given reflectivities; above 1, retroreflectors whose
// peak gives that Lambertian-equivalent reflectivity.
inline core::MaterialTable targets(const std::vector<double>& reflectivities) {
  std::ostringstream toml;
  for (std::size_t i = 0; i < reflectivities.size(); ++i) {
    const double r = reflectivities[i];
    toml << "[[material]]\nid = " << i + 1 << "\nname = \"target " << r << "\"\n";
    if (r <= 1.0) {
      toml << "alpha = " << r << "\nreflectivity = " << r << "\n";
    } else {
      toml << "gamma = 1.0\nreflectivity = 0.0\nretro_peak_per_sr = "
           << std::max(1.0, r / std::numbers::pi) << "\n";
    }
  }
  return core::MaterialTable::from_toml_text(toml.str(), "report targets");
}

inline double share_detected(const core::FrameReturns& out) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) n += out.range_m[b] > 0;
  return double(n) / double(out.shape.beams());
}

inline double share_of_kind(const core::FrameReturns& out, core::ReturnKind kind) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) {
    n += out.range_m[b] > 0 && out.kind[b] == static_cast<std::uint8_t>(kind);
  }
  return double(n) / double(out.shape.beams());
}

inline std::string format_number(double v) {
  std::ostringstream s;
  s << std::setprecision(6) << v;
  return s.str();
}

// The ranges a sweep visits: step, 2 step, ... up to max (counted in whole steps).
inline std::vector<double> range_steps(double max_range_m, double step_m) {
  std::vector<double> ranges;
  const auto steps = static_cast<int>(std::floor(max_range_m / step_m + 1e-9));
  for (int step = 1; step <= steps; ++step) ranges.push_back(step * step_m);
  return ranges;
}

}  // namespace lidaremu::clients::report::detail
