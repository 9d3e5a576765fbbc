// PHYSICS.md 0 and 4a: the fog volume's backscatter (Hahner et al., LiDAR_fog_sim, ICCV 2021;
// beta = 0.046 / V after Rasshofer et al. 2011), against the formula integrated independently.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

namespace {

// The soft target's return by the book, on a fine grid: P(R) = K beta integral over the pulse of
// sin^2(pi t / (2 tau_H)) xi(R') T^2(R') / R'^2, R' = R - c t / 2, with dR' = c dt / 2.
double fog_by_the_book(const PhysicsParams& p, double k, double extinction, double range) {
  const double beta = 0.046 / p.weather.visibility_m;
  const double tau_h = p.pulse_half_width_ns * 1e-9;
  constexpr int kSteps = 4000;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double t = (i + 0.5) * 2 * tau_h / kSteps;
    const double r = range - physics::kSpeedOfLight * t / 2;
    if (r <= 0.05) break;
    const double pulse = std::pow(std::sin(std::numbers::pi * t / (2 * tau_h)), 2);
    sum += pulse * physics::crossover(p.optics, r) * std::exp(-2 * extinction * r) / (r * r) *
           (physics::kSpeedOfLight / 2) * (2 * tau_h / kSteps);
  }
  return k * beta * sum;
}

}  // namespace

TEST_CASE("4a: the fog's return, integrated over the pulse, and its clutter against visibility",
          "[physics][fog]") {
  CHECK(physics::fog_backscatter_per_m_sr(50) == Approx(0.046 / 50));
  Bench bench("vlp16");
  auto s = bench.settings();
  const MaterialTable materials = test_materials();
  const Pipeline pipeline(bench.pattern(), materials, s);
  const double k = pipeline.system_constant();
  const auto crossover = [&](double r) { return physics::crossover(s.params.optics, r); };
  // Far from the sensor the fog is a hard target of beta c tau_H / 2 at the pulse's centroid,
  // c tau_H / 2 behind the leading edge.
  {
    const double alpha = 1e-3;
    const double far = physics::fog_return_w(k, 1e-3, alpha, 60, 5e-9, crossover, 0.05);
    const double half_pulse = physics::kSpeedOfLight * 5e-9 / 2;
    const double centroid = 60 - half_pulse;
    CHECK(far ==
          Approx(k * 1e-3 * half_pulse * std::exp(-2 * alpha * centroid) / (centroid * centroid))
              .epsilon(0.005));
  }
  // Beams that hit nothing, in fog of falling visibility: the share reporting the fog follows
  // the detection probability of the formula's peak, Phi((P_peak - k sigma) / sigma).
  double previous = -1;
  for (const double visibility : {1000.0, 100.0, 50.0, 30.0, 20.0}) {
    bench.hits().clear(1);
    bench.hits().columns_received = bench.hits().shape.columns;
    bench.hits().weather.visibility_m = visibility;
    auto p = s.params;
    p.weather.visibility_m = visibility;
    const double alpha = physics::extinction_from_visibility(visibility, p.wavelength_nm);
    double peak = 0, peak_range = 0;
    for (int i = 5; i < 6000; ++i) {  // 0.05 .. 60 m in 1 cm steps
      const double r = i * 0.01;
      const double w = fog_by_the_book(p, k, alpha, r);
      if (w > peak) peak = w, peak_range = r;
    }
    const double sigma = p.noise_power_w();
    const double expected =
        0.5 * std::erfc(-(peak / sigma - p.threshold_sigmas()) / std::sqrt(2.0));
    const auto out = bench.run(s);
    std::size_t fog = 0;
    double range_sum = 0;
    for (std::size_t b = 0; b < bench.beams(); ++b) {
      if (out.range_m[b] > 0 && out.kind[b] == static_cast<std::uint8_t>(ReturnKind::kFog)) {
        ++fog, range_sum += out.range_m[b];
      }
    }
    const double share = double(fog) / double(bench.beams());
    INFO("visibility " << visibility << " m: fog on " << share << " of the beams (formula "
                       << expected << "), peak " << peak / sigma << " sigma at " << peak_range
                       << " m");
    CHECK(std::fabs(share - expected) <
          4 * std::sqrt(expected * (1 - expected) / double(bench.beams())) + 1e-4);
    if (fog > 0) CHECK(range_sum / double(fog) == Approx(peak_range).margin(0.3));
    CHECK(share >= previous);
    previous = share;
  }
  CHECK(previous > 0.05);  // 20 m visibility: near-sensor fog points on many beams
}
