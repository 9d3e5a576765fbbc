// PHYSICS.md 9: raster correction.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("9: a depth-image hit is moved onto the true beam direction", "[physics][raster]") {
  Bench bench("vlp16");
  const std::size_t beam = std::size_t{100} * 16;  // laser 0: -15 degrees
  const Eigen::Vector3d v = bench.direction(beam);
  // The pixel looks 0.2 degrees lower than the beam; the road is 1.8 m below.
  const Eigen::Vector3d axis = v.cross(Eigen::Vector3d::UnitZ()).normalized();
  const Eigen::Vector3d pixel = Eigen::AngleAxisd(-physics::deg_to_rad(0.2), axis) * v;
  const Eigen::Vector3d hit = pixel * (-1.8 / pixel.z());
  bench.set(beam, 0, 0, hit, Eigen::Vector3d::UnitZ(), kConcrete);
  const double true_range = -1.8 / v.z();
  auto s = bench.settings(PhysicsMode::kIdeal);
  CHECK(std::fabs(bench.run(s).range_m[beam] - true_range) > 0.05);  // uncorrected: off
  use_stage(s.stages, "geometry.raster_correction");
  CHECK(bench.run(s).range_m[beam] == Approx(true_range).margin(0.002));
  CHECK(physics::raster_corrected_range(0.5, 0.25, 10) == Approx(20));
}
