// PHYSICS.md 6: multi-bounce paths.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("6: a mirror shows the wall it reflects as a ghost at half the optical path",
          "[physics][multibounce]") {
  Bench bench("vlp16", {1, 3});
  const std::size_t beam = 8 * 16 + 7;  // a beam near the horizon
  const Eigen::Vector3d d = bench.direction(beam);
  // Metal 10 m ahead, tilted 30 degrees: the ray turns 60 degrees and meets a wall 5 m on.
  const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
  const double tilt = std::numbers::pi / 6;
  const Eigen::Vector3d n = -d * std::cos(tilt) + side * std::sin(tilt);
  const Eigen::Vector3d p1 = d * 10;
  const Eigen::Vector3d reflected = d - 2 * d.dot(n) * n;
  const Eigen::Vector3d p2 = p1 + reflected * 5;
  const auto angle = static_cast<float>(std::acos(p2.normalized().dot(d)) * 180 / std::numbers::pi);
  bench.set(beam, 0, 0, p1, n, kLucidMetal, 0, 1);
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, angle, 2);

  // The return comes back along the mirror: R = (10 + 5 + 5 + 10) / 2 = 15 m.
  auto ideal = bench.settings(PhysicsMode::kIdeal);
  ideal.return_mode = ReturnMode::kDual;
  auto out = bench.run(ideal);
  CHECK(out.range_m[beam] == Approx(15.0).margin(0.002));
  CHECK(out.object_id[beam] == 2);
  CHECK(out.kind[beam] == static_cast<std::uint8_t>(ReturnKind::kGhost));
  CHECK(out.range_m[out.slot(beam, 1)] == 0);  // one point per path
  // Within the receiver's angular resolution it enters directly: R = (L1 + L2 + |p2|) / 2.
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, 0.0f, 2);
  out = bench.run(ideal);
  CHECK(out.range_m[beam] == Approx((10 + 5 + p2.norm()) / 2).margin(0.002));
  // With the realistic chain the ghost beats the threshold (0.98^2 of a 30 % wall at 15 m).
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, angle, 2);
  out = bench.run(bench.settings());
  CHECK(out.range_m[beam] == Approx(15.0).margin(0.1));
  // Without the stage, the metal's own faint diffuse return at 10 m is all there is (faint: its
  // range noise is dR / sqrt(2 SNR) = 5 cm, so within 4 sigma).
  auto no_paths = bench.settings();
  drop_stage(no_paths.stages, "paths.multibounce");
  CHECK(bench.run(no_paths).range_m[beam] == Approx(10.0).margin(0.2));
}

TEST_CASE("6: glass passes part of the beam: the object behind it is a second echo",
          "[physics][multibounce][glass]") {
  // A pane 10 m ahead (material 4: Fresnel 0.040, transmittance 0.92), the path carrying
  // straight on to a 30 % wall at 15 m.
  Bench bench("vlp16", {1, 2});
  const std::size_t beam = 8 * 16 + 7;
  const Eigen::Vector3d d = bench.direction(beam);
  const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
  constexpr std::uint16_t kGlass = 4;
  const auto place = [&](double tilt_deg) {
    const double t = tilt_deg * std::numbers::pi / 180;
    bench.set(beam, 0, 0, d * 10, -d * std::cos(t) + side * std::sin(t), kGlass, 0, 1);
    bench.set(beam, 0, 1, d * 15, -d, kThirtyPercent, 0, 2);
  };
  auto dual = bench.settings();
  dual.return_mode = ReturnMode::kDual;
  const auto echoes = [&](const FrameReturns& out) {
    std::vector<std::pair<float, int>> e;  // range, reflectivity
    for (int k = 0; k < 2; ++k) {
      const std::size_t slot = out.slot(beam, k);
      if (out.range_m[slot] > 0) e.emplace_back(out.range_m[slot], out.reflectivity[slot]);
    }
    std::sort(e.begin(), e.end());
    return e;
  };
  // Head-on, the glass flashes (its Fresnel reflection comes straight back) and the wall is
  // seen behind it: two echoes.
  place(0);
  auto out = bench.run(dual);
  auto e = echoes(out);
  REQUIRE(e.size() == 2);
  CHECK(e[0].first == Approx(10).margin(0.1));
  CHECK(e[0].second > 100);
  CHECK(e[1].first == Approx(15).margin(0.1));
  // Through the pane twice: 0.92^2 of the wall's 30 % (the sensor does not know the glass).
  CHECK(e[1].second == Approx(30 * 0.92 * 0.92).margin(2.5));
  CHECK(out.object_id[out.slot(beam, 0)] + out.object_id[out.slot(beam, 1)] == 3);
  // Tilted 20 degrees, the pane returns nothing: only the wall, at its own range.
  place(20);
  e = echoes(bench.run(dual));
  REQUIRE(e.size() == 1);
  CHECK(e[0].first == Approx(15).margin(0.1));
  // A pane that is not transmissive is a mirror to seed 000's rule: the old ghost.
  MaterialTable opaque = MaterialTable::from_toml_text(
      "[[material]]\nid = 4\nname = \"opaque glass\"\nbeta = 0.01\nsigma_deg = 2.0\n"
      "[[material]]\nid = 202\nname = \"30 %\"\nalpha = 0.3\nreflectivity = 0.3\n",
      "opaque");
  Pipeline pipeline(bench.pattern(), opaque, dual);
  pipeline.process(bench.hits(), out);
  CHECK(out.kind[out.slot(beam, 0)] != static_cast<std::uint8_t>(ReturnKind::kTarget));
}
