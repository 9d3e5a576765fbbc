#pragma once
// Engine conventions are configuration, not code: units and axes are converted once, at ingest,
// into the sensor frame the real driver reports in (x forward, y left, z up, metres).
#include <Eigen/Geometry>
#include <optional>
#include <string>
#include <string_view>

namespace lidaremu::protocol {

struct EngineConventions {
  std::string name = "ros";
  double metres_per_unit = 1.0;
  // Maps an engine vector to the right-handed x-forward z-up frame (may flip handedness).
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();

  [[nodiscard]] Eigen::Vector3d point(const Eigen::Vector3d& engine) const {
    return axes * engine * metres_per_unit;
  }
  [[nodiscard]] Eigen::Vector3d direction(const Eigen::Vector3d& engine) const {
    return axes * engine;
  }
  // The inverses: a sensor-frame vector in the engine's axes and units (axes is orthogonal).
  [[nodiscard]] Eigen::Vector3d engine_point(const Eigen::Vector3d& sensor) const {
    return axes.transpose() * sensor / metres_per_unit;
  }
  [[nodiscard]] Eigen::Vector3d engine_direction(const Eigen::Vector3d& sensor) const {
    return axes.transpose() * sensor;
  }
  // An engine pose (position, unit quaternion) as a rigid transform in the ROS convention.
  [[nodiscard]] Eigen::Isometry3d pose(const Eigen::Vector3d& position,
                                       const Eigen::Quaterniond& orientation) const;
  bool operator==(const EngineConventions& o) const {
    return name == o.name && metres_per_unit == o.metres_per_unit && axes == o.axes;
  }
};

// "ros" (identity), "unreal" (centimetres, left-handed, z up), "unity" (metres, left-handed,
// y up, z forward), "godot" (metres, right-handed, y up, -z forward). Nothing for an unknown name.
std::optional<EngineConventions> engine_conventions(std::string_view name);

}  // namespace lidaremu::protocol
