#include "lidaremu/protocol/engine_frame.hpp"

namespace lidaremu::protocol {

Eigen::Isometry3d EngineConventions::pose(const Eigen::Vector3d& position,
                                          const Eigen::Quaterniond& orientation) const {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  // A rotation seen through an axis change (even a mirror) stays a rotation: A R A^T.
  t.linear() = axes * orientation.normalized().toRotationMatrix() * axes.transpose();
  t.translation() = point(position);
  return t;
}

std::optional<EngineConventions> engine_conventions(std::string_view name) {
  EngineConventions c;
  c.name = std::string(name);
  if (name == "ros") return c;
  if (name == "unreal") {
    c.metres_per_unit = 0.01;
    c.axes << 1, 0, 0, 0, -1, 0, 0, 0, 1;  // y right -> y left
    return c;
  }
  if (name == "unity") {
    c.axes << 0, 0, 1,  // forward is Unity z
        -1, 0, 0,       // left is Unity -x
        0, 1, 0;        // up is Unity y
    return c;
  }
  if (name == "godot") {
    // Godot: right-handed, y up, a node looks along its -z (Transform.basis.z points back).
    c.axes << 0, 0, -1,  // forward is Godot -z
        -1, 0, 0,        // left is Godot -x
        0, 1, 0;         // up is Godot y
    return c;
  }
  return std::nullopt;
}

}  // namespace lidaremu::protocol
