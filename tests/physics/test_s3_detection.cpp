// PHYSICS.md 3: the detection stages (threshold with ambient light, capability).
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("3: capability model of seed 002 (OS0-128: d_max 50 m at R_L,max 0.8)",
          "[physics][detection]") {
  CHECK(physics::capability_detects(0.8, 49.9, 50, 0.8));
  CHECK_FALSE(physics::capability_detects(0.8, 50.1, 50, 0.8));
  // A 10 % target: R_L(d) <= 0.1 up to d = 6.25 m.
  CHECK(physics::capability_detects(0.1, 6.2, 50, 0.8));
  CHECK_FALSE(physics::capability_detects(0.1, 6.3, 50, 0.8));
  Bench bench("os1-64");
  auto s = bench.settings();
  use_stage(s.stages, "detection.capability");
  bench.target_facing_every_beam(48.0, kEightyPercent);
  CHECK(detected_share(bench.run(s)) == 1.0);
  bench.target_facing_every_beam(51.0, kEightyPercent);
  CHECK(detected_share(bench.run(s)) == 0.0);
  bench.target_facing_every_beam(6.0, kTenPercent);
  CHECK(detected_share(bench.run(s)) == 1.0);
  bench.target_facing_every_beam(6.6, kTenPercent);
  CHECK(detected_share(bench.run(s)) == 0.0);
}

TEST_CASE("3: ambient sunlight raises the noise floor", "[physics][detection]") {
  const double ambient = physics::ambient_power_w(1000, 1.0, 0.1, 1e-6);
  CHECK(ambient == Approx(1000 * 0.1 / std::numbers::pi * 1e-6));
  CHECK(physics::ambient_power_w(1000, -0.5, 0.1, 1e-6) == 0.0);  // the sun behind the surface
  // Shot noise: 2 h nu P B / QE.
  const double h_nu = 6.62607015e-34 * physics::kSpeedOfLight / 905e-9;
  CHECK(physics::ambient_noise_variance_w2(ambient, 905, 1e9, 0.8) ==
        Approx(2 * h_nu * ambient * 1e9 / 0.8));
  Bench bench("vlp16");
  bench.target_facing_every_beam(100.0, kTenPercent);
  auto s = bench.settings();
  s.params.sun_elevation_deg = 0;  // the sun behind the sensor, lighting the target head-on
  s.params.receiver_etendue_m2_sr = 1e-6;
  const double dark = detected_share(bench.run(s));
  bench.hits().weather.sun_irradiance_w_per_m2 = 1000;
  const double sunny = detected_share(bench.run(s));
  INFO("dark " << dark << ", sunny " << sunny);
  CHECK(sunny < dark - 0.03);  // 20 standard errors
}
