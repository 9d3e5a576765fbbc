// PHYSICS.md 7: blooming (seed 001).
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

namespace {

struct SignScene {
  std::size_t geometric = 0;  // beams that hit the sign
  double max_azimuth_deg = 0;
};

// A sign 20 m ahead (|azimuth| < 2 deg, |elevation| < 4 deg) in front of a concrete wall at 40 m.
SignScene place_sign(Bench& bench, std::uint16_t sign_material) {
  SignScene scene;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    const Eigen::Vector3d d = bench.direction(b);
    if (d.x() < 0.5) continue;
    const double az = std::atan2(d.y(), d.x()) * 180 / std::numbers::pi;
    const double el = std::asin(d.z()) * 180 / std::numbers::pi;
    const bool on_sign = std::fabs(az) < 2 && std::fabs(el) < 4;
    const double plane = on_sign ? 20.0 : 40.0;
    bench.set(b, 0, 0, d * (plane / d.x()), -Eigen::Vector3d::UnitX(),
              on_sign ? sign_material : kConcrete);
    if (on_sign)
      scene.geometric++, scene.max_azimuth_deg = std::max(scene.max_azimuth_deg, std::fabs(az));
  }
  return scene;
}

SignScene near_returns(Bench& bench, const FrameReturns& out) {
  SignScene seen;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    // The sign and its bloom (not the noise's own rare false alarms, anywhere in the gate).
    if (out.range_m[b] > 0 && out.range_m[b] < 25 &&
        out.kind[b] != static_cast<std::uint8_t>(ReturnKind::kNoise)) {
      const Eigen::Vector3d d = bench.direction(b);
      ++seen.geometric;
      seen.max_azimuth_deg = std::max(seen.max_azimuth_deg,
                                      std::fabs(std::atan2(d.y(), d.x()) * 180 / std::numbers::pi));
      CHECK(out.range_m[b] == Approx(20.0 / d.x()).margin(0.3));  // at the sign's range
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("7: a retroreflective sign blooms wider than it is; a diffuse one does not",
          "[physics][blooming]") {
  Bench bench("vlp16");
  const auto retro = place_sign(bench, kRetro);
  const auto bloomed = near_returns(bench, bench.run(bench.settings()));
  INFO("retro sign: " << retro.geometric << " beams, seen on " << bloomed.geometric
                      << ", half-width " << retro.max_azimuth_deg << " -> "
                      << bloomed.max_azimuth_deg << " deg");
  CHECK(bloomed.geometric > retro.geometric * 1.3);
  CHECK(bloomed.max_azimuth_deg > retro.max_azimuth_deg + 0.5);
  CHECK(bloomed.max_azimuth_deg < retro.max_azimuth_deg + 3.5);  // "up to several degrees"
  auto off = bench.settings();
  drop_stage(off.stages, "blooming");
  CHECK(near_returns(bench, bench.run(off)).geometric == retro.geometric);

  const auto diffuse = place_sign(bench, kConcrete);
  const auto seen = near_returns(bench, bench.run(bench.settings()));
  CHECK(seen.geometric == diffuse.geometric);
  CHECK(seen.max_azimuth_deg == Approx(diffuse.max_azimuth_deg));
}

TEST_CASE("7: blooming in the beams' true angles: Ouster's azimuth offsets, elliptic cores",
          "[physics][blooming]") {
  // An OS1-64's beams of one column point up to +-3 deg apart in azimuth (beam_azimuth_angles).
  // The kernel spreads light by the angle between two beams, so the sign widens as on the
  // VLP-16 (the audit saw a 2 deg sign bloom to 8 deg when columns stood in for angles).
  Bench bench("os1-64");
  const double spread = *std::max_element(bench.pattern().model->azimuth_offset_deg.begin(),
                                          bench.pattern().model->azimuth_offset_deg.end()) -
                        *std::min_element(bench.pattern().model->azimuth_offset_deg.begin(),
                                          bench.pattern().model->azimuth_offset_deg.end());
  CHECK(spread > 5.0);
  const auto retro = place_sign(bench, kRetro);
  const auto bloomed = near_returns(bench, bench.run(bench.settings()));
  INFO("OS1-64 retro sign: half-width " << retro.max_azimuth_deg << " -> "
                                        << bloomed.max_azimuth_deg << " deg, " << retro.geometric
                                        << " -> " << bloomed.geometric << " beams");
  CHECK(bloomed.geometric > retro.geometric);
  CHECK(bloomed.max_azimuth_deg > retro.max_azimuth_deg + 0.2);
  CHECK(bloomed.max_azimuth_deg < retro.max_azimuth_deg + 3.5);

  // The VLP-16's beam is twice as wide as tall (3.0 x 1.5 mrad): so is the kernel's core.
  const auto p = bench.settings().params;
  CHECK(p.bloom_core_sigma_h_deg == Approx(p.bloom_core_sigma_v_deg));
  Bench vlp("vlp16");
  const auto q = vlp.settings().params;
  CHECK(q.bloom_core_sigma_h_deg == Approx(2 * q.bloom_core_sigma_v_deg));
  CHECK(std::sqrt(q.bloom_core_sigma_h_deg * q.bloom_core_sigma_v_deg) ==
        Approx(0.00106 * 180 / std::numbers::pi / 2));
}
