#include "lidaremu/clients/demo_scene.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace lidaremu::clients {

DemoScene::DemoScene(double sensor_height_m) : ground_z_(-sensor_height_m) {
  const double g = ground_z_;
  using V = Eigen::Vector3d;
  // Walls along both sides of the road and one across it far ahead.
  boxes_.push_back({V(-60, 12, g), V(60, 12.4, g + 4), material::kConcrete, 1});
  boxes_.push_back({V(-60, -12.4, g), V(60, -12, g + 4), material::kConcrete, 2});
  boxes_.push_back({V(45, -12, g), V(45.5, 12, g + 6), material::kConcrete, 3});
  // A car ahead on the right: metal body, glass cabin, rubber wheels.
  boxes_.push_back({V(6, -4.4, g + 0.3), V(10.5, -2.6, g + 1.1), material::kOpaqueMetal, 10});
  boxes_.push_back({V(7.2, -4.3, g + 1.1), V(9.6, -2.7, g + 1.55), material::kGlass, 10});
  for (double x : {6.8, 9.7}) {
    for (double y : {-4.45, -2.85}) {
      boxes_.push_back({V(x - 0.33, y, g), V(x + 0.33, y + 0.3, g + 0.66), material::kRubber, 10});
    }
  }
  // A retroreflective sign facing the sensor, on a metal pole.
  boxes_.push_back({V(15, 3, g + 1.9), V(15.05, 4.2, g + 3.1), material::kRetroreflector, 20});
  cylinders_.push_back({{15.1, 3.6}, 0.05, g, g + 1.9, material::kOpaqueMetal, 21});
  // A lamp pole on the left.
  cylinders_.push_back({{20, 8}, 0.12, g, g + 7, material::kOpaqueMetal, 22});
  // Vegetation: a tree crown and a hedge.
  spheres_.push_back({V(-8, 7, g + 3.5), 2.0, material::kGreenVegetation, 30});
  cylinders_.push_back({{-8, 7}, 0.2, g, g + 2, material::kNonGreenVegetation, 31});
  boxes_.push_back({V(-20, -10, g), V(-12, -8.5, g + 1.2), material::kGreenVegetation, 32});
}

DemoScene DemoScene::enclosing_sphere(double radius_m, std::uint16_t material_id) {
  DemoScene scene;
  scene.has_ground_ = false;
  scene.boxes_.clear();
  scene.cylinders_.clear();
  scene.spheres_ = {{Eigen::Vector3d::Zero(), radius_m, material_id, 1}};
  return scene;
}

std::optional<SceneHit> DemoScene::cast(const Eigen::Vector3d& o, const Eigen::Vector3d& d,
                                        double max_range_m) const {
  double best = max_range_m;
  std::optional<SceneHit> hit;
  auto take = [&](double t, const Eigen::Vector3d& normal, std::uint16_t material,
                  std::uint32_t id) {
    if (t > 1e-6 && t < best) {
      best = t;
      hit = SceneHit{o + t * d, normal, material, id};
    }
  };
  if (has_ground_ && d.z() < 0) {
    const double t = (ground_z_ - o.z()) / d.z();
    const Eigen::Vector3d p = o + t * d;
    // Dashed lane lines 1.75 m either side of the centre, solid edge lines at 5.5 m.
    const bool dash = std::fmod(std::fabs(p.x()), 6.0) < 3.0;
    const bool stripe = (dash && std::fabs(std::fabs(p.y()) - 1.75) < 0.075) ||
                        std::fabs(std::fabs(p.y()) - 5.5) < 0.1;
    take(t, Eigen::Vector3d::UnitZ(), stripe ? material::kStripes : material::kAsphalt, 0);
  }
  for (const Box& b : boxes_) {
    double t_near = -std::numeric_limits<double>::infinity(), t_far = best;
    int axis = -1;
    double sign = 0;
    bool miss = false;
    for (int a = 0; a < 3 && !miss; ++a) {
      if (std::fabs(d[a]) < 1e-12) {
        miss = o[a] < b.lo[a] || o[a] > b.hi[a];
        continue;
      }
      double t1 = (b.lo[a] - o[a]) / d[a], t2 = (b.hi[a] - o[a]) / d[a];
      double s = -1;
      if (t1 > t2) {
        std::swap(t1, t2);
        s = 1;
      }
      if (t1 > t_near) {
        t_near = t1;
        axis = a;
        sign = s;
      }
      t_far = std::min(t_far, t2);
      miss = t_near > t_far;
    }
    if (!miss && axis >= 0) {
      Eigen::Vector3d n = Eigen::Vector3d::Zero();
      n[axis] = sign;
      take(t_near, n, b.material, b.object_id);
    }
  }
  for (const Cylinder& c : cylinders_) {
    const Eigen::Vector2d oc = o.head<2>() - c.centre;
    const Eigen::Vector2d dh = d.head<2>();
    const double a = dh.squaredNorm(), bq = oc.dot(dh), cq = oc.squaredNorm() - c.radius * c.radius;
    const double disc = bq * bq - a * cq;
    if (a < 1e-12 || disc < 0) continue;
    const double t = (-bq - std::sqrt(disc)) / a;
    const Eigen::Vector3d p = o + t * d;
    if (p.z() < c.z_lo || p.z() > c.z_hi) continue;
    const Eigen::Vector2d radial = (p.head<2>() - c.centre) / c.radius;
    take(t, Eigen::Vector3d(radial.x(), radial.y(), 0), c.material, c.object_id);
  }
  for (const Sphere& s : spheres_) {
    const Eigen::Vector3d oc = o - s.centre;
    const double bq = oc.dot(d), cq = oc.squaredNorm() - s.radius * s.radius;
    const double disc = bq * bq - cq;
    if (disc < 0) continue;
    const double near = -bq - std::sqrt(disc);
    if (near > 1e-6) {
      take(near, (o + near * d - s.centre) / s.radius, s.material, s.object_id);
    } else {  // from inside: the far wall, its normal facing back in
      const double far = -bq + std::sqrt(disc);
      take(far, (s.centre - (o + far * d)) / s.radius, s.material, s.object_id);
    }
  }
  return hit;
}

void DemoScene::render(const core::BeamGeometry& geometry, std::vector<float>& rows,
                       std::vector<std::uint32_t>* object_ids, int rays_per_beam,
                       double divergence_rad, std::uint32_t frame) const {
  const auto& pattern = geometry.pattern();
  const int channels = pattern.model->channels;
  const double max_range = pattern.model->max_range_m * 0.95;
  const std::size_t count = std::size_t(pattern.columns_per_frame) * channels * rays_per_beam;
  rows.assign(count * 7, 0.0f);
  if (object_ids) object_ids->assign(count, 0);
  const double ring = std::tan(divergence_rad);
  std::size_t i = 0;
  for (int c = 0; c < pattern.columns_per_frame; ++c) {
    for (int ch = 0; ch < channels; ++ch) {
      const auto beam = geometry.ray_in_frame(frame, static_cast<std::uint32_t>(c),
                                              static_cast<std::uint16_t>(ch));
      const Eigen::Vector3d u = beam.direction.unitOrthogonal();
      const Eigen::Vector3d v = beam.direction.cross(u);
      for (int r = 0; r < rays_per_beam; ++r, ++i) {
        Eigen::Vector3d direction = beam.direction;
        if (r > 0) {
          const double phi = 2.0 * std::numbers::pi * (r - 1) / (rays_per_beam - 1);
          direction = (direction + ring * (std::cos(phi) * u + std::sin(phi) * v)).normalized();
        }
        float* row = &rows[i * 7];
        if (const auto hit = cast(beam.origin, direction, max_range)) {
          for (int k = 0; k < 3; ++k) {
            row[k] = static_cast<float>(hit->point[k]);
            row[3 + k] = static_cast<float>(hit->normal[k]);
          }
          row[6] = hit->material;
          if (object_ids) (*object_ids)[i] = hit->object_id;
        } else {
          // The seed's convention for "nothing within range".
          row[0] = row[1] = row[2] = row[3] = 1.0f;
        }
      }
    }
  }
}

}  // namespace lidaremu::clients
