// PHYSICS.md 2b: range equation, BRDF, crossover, datasheet calibration, calibrated reflectivity.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("2b: Lambertian, specular and retroreflective BRDFs", "[physics][brdf]") {
  // Gamma(theta) = Gamma(0) cos(theta), beta_0 = Gamma / pi (seeds 002, 003).
  CHECK(physics::lambertian_brdf(0.5, 0.5) == Approx(0.25 / std::numbers::pi));
  CHECK(physics::lambertian_brdf(0.5, -0.2) == 0.0);
  // Retroreflector peak about three orders of magnitude above the diffuse maximum 1/pi.
  const Material retro{1, "retro", 0, 0, 1, 1, 0.0, 500, 0.5, 40};
  const double peak = physics::material_brdf(retro, 1.0, 0.0);
  CHECK(peak == Approx(500));
  CHECK(std::log10(peak / (1 / std::numbers::pi)) == Approx(3.2).margin(0.1));
  // It falls steeply with the observation angle and gently with the entrance angle.
  CHECK(physics::material_brdf(retro, 1.0, physics::deg_to_rad(1.0)) < peak / 40);
  CHECK(physics::material_brdf(retro, std::cos(physics::deg_to_rad(20)), 0.0) > peak * 0.7);
  // A specular lobe is seen at 2 theta from the mirror direction: head-on it flashes, at 10
  // degrees (30 off the mirror, six lobe widths) a 5-degree lobe is gone.
  const Material metal{2, "metal", 0.0, 0.85, 0, 5.0, 0.0};
  CHECK(physics::material_brdf(metal, 1.0, 0) ==
        Approx(0.85 / (2 * std::numbers::pi * std::pow(physics::deg_to_rad(5), 2))));
  CHECK(physics::material_brdf(metal, std::cos(physics::deg_to_rad(15)), 0) < 1e-6);
}

TEST_CASE("2b: crossover function of bistatic optics (seed 003)", "[physics][brdf]") {
  physics::BistaticOptics coaxial;
  CHECK(physics::crossover(coaxial, 0.1) == 1.0);  // seed 003: constant for coaxial optics
  // With a full-overlap range, the geometric form factor (R / R_full)^2 below it.
  coaxial.full_overlap_m = 20;
  CHECK(physics::crossover(coaxial, 5) == Approx(0.0625));
  CHECK(physics::crossover(coaxial, 20) == 1.0);
  CHECK(physics::crossover(coaxial, 200) == 1.0);
  physics::BistaticOptics o{.baseline_m = 0.05,
                            .tx_aperture_radius_m = 0.005,
                            .rx_aperture_radius_m = 0.01,
                            .tx_opening_rad = 0.003,
                            .rx_opening_rad = 0.02};
  const double r1 = physics::crossover_start_m(o);
  const double r2 = physics::crossover_full_m(o);
  // R_1 = (d - rho_T - rho_R) / (tan(g_T/2) + tan(g_R/2)), R_2 likewise, by hand:
  CHECK(r1 == Approx(0.035 / (std::tan(0.0015) + std::tan(0.01))));
  CHECK(r2 == Approx(0.045 / (std::tan(0.01) - std::tan(0.0015))));
  CHECK(physics::crossover(o, r1 * 0.99) == 0.0);
  CHECK(physics::crossover(o, r2 * 1.01) == 1.0);
  // Continuous at both ends and rising in between.
  CHECK(physics::crossover(o, r1 * 1.0001) < 1e-3);
  CHECK(physics::crossover(o, r2 * 0.9999) > 0.999);
  double previous = 0;
  for (int i = 1; i < 100; ++i) {
    const double x = physics::crossover(o, r1 + (r2 - r1) * i / 100.0);
    CHECK(x >= previous);
    previous = x;
  }
}

TEST_CASE("2b: datasheet calibration reproduces the datasheet range by construction",
          "[physics][brdf][datasheet]") {
  const PhysicsParams p;
  const double k = physics::system_constant_from_datasheet(p.threshold_w(), 100, 0.10, 1, 1);
  CHECK(physics::received_power(k, physics::lambertian_brdf(0.10, 1), 100, 1, 1) ==
        Approx(p.threshold_w()));
  // A 40 % target reaches twice as far (before extinction).
  CHECK(physics::lambertian_reach_m(k, 0.40, p.threshold_w()) == Approx(200));

  SECTION("VLP-16: a 10 % target at the datasheet's 100 m is detected half the time") {
    Bench bench("vlp16");
    bench.target_facing_every_beam(100.0, kTenPercent);
    const double share = detected_share(bench.run(bench.settings()));
    const double standard_error = std::sqrt(0.25 / double(bench.beams()));
    INFO("share " << share);
    CHECK(std::fabs(share - 0.5) < 4 * standard_error);
  }
  SECTION("OS1-64: 80 % at 120 m is at the threshold; a 40 % target reaches twice a 10 % one") {
    Bench bench("os1-64");
    bench.target_facing_every_beam(120.0, kEightyPercent);
    const double standard_error = std::sqrt(0.25 / double(bench.beams()));
    const double at_datasheet = detected_share(bench.run(bench.settings()));
    INFO("80 % at 120 m: " << at_datasheet);
    CHECK(std::fabs(at_datasheet - 0.5) < 4 * standard_error);
    // Without extinction the reach follows sqrt(Gamma): 10 % reaches 120 sqrt(1/8) = 42.4 m
    // divided by the clear-air transmission folded into the calibration (a 1 % effect).
    auto no_air = bench.settings();
    drop_stage(no_air.stages, "atmosphere.clear_air");
    const MaterialTable materials = test_materials();
    const Pipeline pipeline(bench.pattern(), materials, no_air);
    const double reach_10 =
        physics::lambertian_reach_m(pipeline.system_constant(), 0.10, no_air.params.threshold_w());
    const double reach_40 =
        physics::lambertian_reach_m(pipeline.system_constant(), 0.40, no_air.params.threshold_w());
    CHECK(reach_10 == Approx(42.43).epsilon(0.015));
    CHECK(reach_40 == Approx(2 * reach_10));
    bench.target_facing_every_beam(reach_10, kTenPercent);
    CHECK(std::fabs(detected_share(bench.run(no_air)) - 0.5) < 4 * standard_error);
    bench.target_facing_every_beam(reach_40, kFortyPercent);
    CHECK(std::fabs(detected_share(bench.run(no_air)) - 0.5) < 4 * standard_error);
    // Closer than the reach, nearly always (Phi(3.1)); far beyond it, nearly never (Phi(-2.7)).
    bench.target_facing_every_beam(0.7 * reach_10, kTenPercent);
    CHECK(detected_share(bench.run(no_air)) > 0.99);
    bench.target_facing_every_beam(3 * reach_10, kTenPercent);
    CHECK(detected_share(bench.run(no_air)) < 0.01);
  }
}

TEST_CASE("Calibrated reflectivity: a diffuse target's percent, above 100 for retroreflectors",
          "[physics][report]") {
  Bench bench("vlp16");
  for (const double range : {5.0, 20.0, 60.0}) {
    INFO("range " << range);
    bench.target_facing_every_beam(range, kThirtyPercent);
    const auto out = bench.run(bench.settings());
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t b = 0; b < bench.beams(); ++b) {
      if (out.range_m[b] > 0) sum += out.reflectivity[b], ++n;
    }
    REQUIRE(n > bench.beams() * 0.99);
    CHECK(sum / double(n) == Approx(30).margin(0.6));
  }
  // Tilted 60 degrees, Gamma(theta) = 0.30 cos(60) = 15 %.
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    const Eigen::Vector3d d = bench.direction(b);
    const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
    const double t = std::numbers::pi / 3;
    bench.set(b, 0, 0, d * 10, -d * std::cos(t) + side * std::sin(t), kThirtyPercent);
  }
  const auto tilted = bench.run(bench.settings());
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    if (tilted.range_m[b] > 0) sum += tilted.reflectivity[b], ++n;
  }
  CHECK(sum / double(n) == Approx(15).margin(0.6));
  bench.target_facing_every_beam(30, kRetro);
  const auto retro = bench.run(bench.settings());
  CHECK(retro.reflectivity[100] > 200);
}
