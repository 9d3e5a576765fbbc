// PHYSICS.md 4b: rain (seed 004).
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("4b: seed 004's extinction table to 3 significant digits, power law outside",
          "[physics][rain]") {
  CHECK(physics::rain_extinction_per_m(5.0) == Approx(0.00132).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(12.5) == Approx(0.00244).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(25.0) == Approx(0.00387).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(100.0) == Approx(0.00991).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(0.0) == 0.0);
  // The fitted exponent is close to the classic 0.67.
  CHECK(physics::rain_extinction_exponent() == Approx(0.67).margin(0.04));
  // Continuous at the table's ends, rising everywhere.
  CHECK(physics::rain_extinction_per_m(100.0001) == Approx(0.00991).epsilon(1e-4));
  CHECK(physics::rain_extinction_per_m(4.9999) == Approx(0.00132).epsilon(1e-4));
  double previous = 0;
  for (int step = 0; step < 25; ++step) {
    const double r = 0.5 * std::pow(1.3, step);  // 0.5 to 270 mm/h
    CHECK(physics::rain_extinction_per_m(r) > previous);
    previous = physics::rain_extinction_per_m(r);
  }
}

TEST_CASE("4b: Marshall-Palmer drops, beam volume and the Poisson count", "[physics][rain]") {
  // Lambda = 4.1 R^-0.21 per mm (the seed's 41 is per cm); N_total = N_0 / Lambda.
  CHECK(physics::marshall_palmer_slope_per_mm(10) == Approx(4.1 * std::pow(10, -0.21)));
  CHECK(physics::rain_drop_density_per_m3(10) == Approx(3164).margin(1));
  CHECK(physics::rain_drop_density_per_m3(0) == 0.0);
  // V_beam = pi r^2 distance without divergence (seed 004, eq. 3.5); a cone with it.
  CHECK(physics::beam_volume_m3(0.01, 0, 0, 50) == Approx(std::numbers::pi * 1e-4 * 50));
  const double w1 = 0.01 + 50 * std::tan(0.002);
  CHECK(physics::beam_volume_m3(0.01, 0.002, 0, 50) ==
        Approx(std::numbers::pi / 3 * 50 * (1e-4 + 0.01 * w1 + w1 * w1)));
  // The sampled counts have mean mu within its standard error, for small and large mu.
  for (const double mu : {0.3, 4.5, 29.0, 31.0, 250.0}) {
    INFO("mu " << mu);
    constexpr int kBeams = 40000;
    double sum = 0, sum2 = 0;
    for (int b = 0; b < kBeams; ++b) {
      std::uint32_t draw = 0;
      const double n = CounterRng({5, 1, 2, static_cast<std::uint32_t>(b), 3}).poisson(mu, draw);
      sum += n;
      sum2 += n * n;
    }
    const double mean = sum / kBeams;
    const double variance = sum2 / kBeams - mean * mean;
    CHECK(std::fabs(mean - mu) < 4 * std::sqrt(mu / kBeams));
    CHECK(variance == Approx(mu).epsilon(0.05));
  }
}

TEST_CASE("4b: rain drops returns with rate and range, adds false positives, nothing at 0",
          "[physics][rain]") {
  Bench bench("vlp16");
  auto s = bench.settings();
  const auto share_at = [&](double range, double rain) {
    bench.target_facing_every_beam(range, kTenPercent);
    bench.hits().weather.rain_mm_per_h = rain;
    return detected_share(bench.run(s));
  };
  // At 0 mm/h the rain stage changes nothing, byte for byte.
  bench.target_facing_every_beam(60, kTenPercent);
  bench.hits().weather.rain_mm_per_h = 0;
  const auto with_stage = bench.run(s);
  auto without = s;
  drop_stage(without.stages, "atmosphere.rain");
  const auto without_stage = bench.run(without);
  CHECK(with_stage.range_m == without_stage.range_m);
  CHECK(with_stage.reflectivity == without_stage.reflectivity);
  // Dropped returns grow with the rain rate (at 80 m, where the dry target is detected nearly
  // always)...
  const double r0 = share_at(80, 0), r5 = share_at(80, 5), r10 = share_at(80, 10),
               r25 = share_at(80, 25);
  INFO("80 m: " << r0 << " " << r5 << " " << r10 << " " << r25);
  CHECK(r0 > 0.99);
  CHECK(r0 > r5);
  CHECK(r5 > r10);
  CHECK(r10 > r25);
  // ...and with range.
  CHECK(share_at(40, 50) > share_at(60, 50));
  CHECK(share_at(60, 50) > share_at(80, 50));
  // Clutter: beams that hit nothing (sky) report rain drops, more as the rain grows, rarely at
  // moderate rain (PHYSICS.md 0): drops are weak targets, water's Fresnel 2 % per pi sr times
  // their share of the beam, and the receiver sees the near field only partly.
  Pipeline pipeline(bench.pattern(), test_materials(), s);
  const auto clutter_at = [&](double rain) {
    std::size_t n = 0;
    FrameReturns out;
    constexpr int kFrames = 10;
    for (int f = 1; f <= kFrames; ++f) {
      bench.hits().clear(static_cast<std::uint32_t>(f));
      bench.hits().columns_received = bench.hits().shape.columns;
      bench.hits().weather.rain_mm_per_h = rain;
      pipeline.process(bench.hits(), out);
      for (std::size_t b = 0; b < bench.beams(); ++b) {
        n += out.range_m[b] > 0 && out.kind[b] == static_cast<std::uint8_t>(ReturnKind::kRainDrop);
      }
    }
    return double(n) / double(bench.beams() * kFrames);
  };
  const double fp0 = clutter_at(0), fp25 = clutter_at(25), fp100 = clutter_at(100);
  INFO("sky beams reporting a drop: " << fp0 << " " << fp25 << " " << fp100);
  CHECK(fp0 == 0.0);
  CHECK(fp100 > fp25);
  CHECK(fp25 < 1e-3);  // moderate rain: rare
  CHECK(fp100 < 1e-2);
}

TEST_CASE("4b: rain range jitter is a random walk over the drops crossed (variance in N)",
          "[physics][rain]") {
  // Without noise or threshold, the range spread of a target in rain is the jitter alone:
  // Var = delta^2 E[N] for sigma = delta sqrt(N) (it would be delta^2 (mu^2 + mu) if it grew as N).
  Bench bench("vlp16");
  auto s = bench.settings(PhysicsMode::kIdeal);
  use_stage(s.stages, "atmosphere.rain");
  bench.target_facing_every_beam(50, kThirtyPercent);
  bench.hits().weather.rain_mm_per_h = 25;
  const auto out = bench.run(s);
  double sum = 0, sum2 = 0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    if (out.range_m[b] <= 0 || out.kind[b] != static_cast<std::uint8_t>(ReturnKind::kTarget)) {
      continue;
    }
    const double e = out.range_m[b] - 50.0;
    sum += e, sum2 += e * e, ++n;
  }
  const double variance = sum2 / double(n) - (sum / double(n)) * (sum / double(n));
  const auto& p = s.params;
  const double mu = physics::rain_drop_density_per_m3(25) *
                    physics::beam_volume_m3(p.beam_exit_radius_m, p.beam_divergence_rad, 0, 50);
  const double delta = p.rain_range_jitter_m_per_drop;
  INFO("mu " << mu << " drops, variance " << variance << " m^2");
  CHECK(variance == Approx(delta * delta * mu + 0.002 * 0.002 / 12).epsilon(0.1));
}
