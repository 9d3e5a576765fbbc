#pragma once
// The built-in demo scene, ray-cast analytically in the sensor frame (x forward, y left, z up,
// sensor at the origin): an asphalt road with painted stripes, concrete walls, a car of metal,
// glass and rubber, a retroreflective sign on a pole, a lamp pole and vegetation.
#include <Eigen/Geometry>
#include <cstdint>
#include <optional>
#include <vector>

#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::clients {

// Material ids of seed 000 used by the scene.
namespace material {
inline constexpr std::uint16_t kRetroreflector = 1, kOpaqueMetal = 2, kGlass = 4, kRubber = 5,
                               kAsphalt = 6, kStripes = 7, kConcrete = 8, kGreenVegetation = 11,
                               kNonGreenVegetation = 12;
}

struct SceneHit {
  Eigen::Vector3d point;
  Eigen::Vector3d normal;
  std::uint16_t material = 0;
  std::uint32_t object_id = 0;
};

class DemoScene {
 public:
  explicit DemoScene(double sensor_height_m = 1.8);
  // The bench's worst case: every beam returns. A sphere of `radius_m` around the sensor, of one
  // material, its inside facing the sensor; no ground, nothing else.
  static DemoScene enclosing_sphere(double radius_m = 20.0,
                                    std::uint16_t material_id = material::kConcrete);
  [[nodiscard]] std::optional<SceneHit> cast(const Eigen::Vector3d& origin,
                                             const Eigen::Vector3d& direction,
                                             double max_range_m) const;
  // 7-float rows for every beam of one frame, in scan order; misses have material 0. With
  // several rays per beam (beam divergence, PHYSICS.md 5) ray 0 is the centre and the others lie
  // on a ring at `divergence_rad` around it; object ids are per row. `frame`: the frame number
  // (a table scan's beams point elsewhere in every frame).
  void render(const core::BeamGeometry& geometry, std::vector<float>& rows,
              std::vector<std::uint32_t>* object_ids = nullptr, int rays_per_beam = 1,
              double divergence_rad = 0.001, std::uint32_t frame = 0) const;

 private:
  struct Box {
    Eigen::Vector3d lo, hi;
    std::uint16_t material;
    std::uint32_t object_id;
  };
  struct Cylinder {  // vertical
    Eigen::Vector2d centre;
    double radius, z_lo, z_hi;
    std::uint16_t material;
    std::uint32_t object_id;
  };
  struct Sphere {
    Eigen::Vector3d centre;
    double radius;
    std::uint16_t material;
    std::uint32_t object_id;
  };
  double ground_z_;
  bool has_ground_ = true;
  std::vector<Box> boxes_;
  std::vector<Cylinder> cylinders_;
  std::vector<Sphere> spheres_;
};

}  // namespace lidaremu::clients
