// The vector kernel's per-stage arithmetic, continued (test_kernels.cpp has the rest): rain's
// expected drops per beam and the threshold detector in lanes are the scalar expressions' results
// to the bit, on every instruction set this build dispatches to and this CPU runs.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/simd.hpp"
#include "target_guard.hpp"

using namespace lidaremu::core;
using simd_test::on_every_target;

namespace {

// Runs the kernel through `run(n)` for the whole input and for short runs (a tail, one vector or
// less, several vectors and a tail), counting the outputs that differ from the reference.
template <typename Run, typename Wrong>
void check_every_length(std::size_t count, Run&& run, Wrong&& wrong_in) {
  on_every_target([&](const std::string& t) {
    for (const std::size_t n : {count, std::size_t{1}, std::size_t{7}, std::size_t{37}}) {
      run(n);
      INFO("target " << t << ", " << n << " at once");
      CHECK(wrong_in(n) == 0);
    }
  });
}

}  // namespace

TEST_CASE("Rain's expected drops in lanes are the cone's and the table's on every instruction set",
          "[simd][determinism][rain]") {
  // PHYSICS.md 4b at 10 mm/h: N_total = N_0 / Lambda = 8000 / (4.1 x 10^-0.21) drops per m^3.
  const double drops_per_m3 = 8000.0 / (4.1 * std::pow(10.0, -0.21));
  REQUIRE(drops_per_m3 == Approx(3.2e3).epsilon(0.02));
  // A cumulated table as the rain stage builds one: 300 steps of 0.5 m from 0.3 m, saturating.
  constexpr std::size_t kSteps = 300;
  constexpr double kStart = 0.3, kStep = 0.5;
  std::array<double, kSteps + 1> cumulative{};
  for (std::size_t i = 1; i <= kSteps; ++i) {
    cumulative[i] = cumulative[i - 1] + 0.8 * std::exp(-0.05 * static_cast<double>(i));
  }
  // The reference, as s4b_rain.cpp writes it: every drop in the cone, the detectable ones from
  // the table between its steps (0 before it, its last value beyond), the latter capped.
  const auto reference = [&](const physics::BeamCone& cone, double reach) {
    const double all = drops_per_m3 * cone.volume_m3(0.0, reach);
    double within = 0;
    const double x = (reach - kStart) / kStep;
    if (x >= kSteps) {
      within = cumulative.back();
    } else if (x > 0) {
      const auto i = static_cast<std::size_t>(x);
      within = cumulative[i] + (x - static_cast<double>(i)) * (cumulative[i + 1] - cumulative[i]);
    }
    const double seen = std::min(within, all);
    return std::pair{static_cast<float>(seen), static_cast<float>(all - seen)};
  };
  std::mt19937 gen(41);
  std::uniform_real_distribution<float> metres(0.0f, 200.0f);
  std::vector<double> reach;
  reach.reserve(3009);
  for (int i = 0; i < 3000; ++i) reach.push_back(metres(gen));
  // The edges: the sensor itself, before the table, its first step, a step exactly, its end and
  // beyond it, a reach so short that every drop in it could be seen (the cap).
  reach.insert(reach.end(),
               {0.0, 0.1, kStart, kStart + kStep, kStart + 10 * kStep, kStart + kSteps * kStep,
                std::nextafter(kStart + kSteps * kStep, 0.0), 1000.0, 0.31});
  // An OS1-like cone (exit 5 mm, 1.5 mrad half angle), and no divergence: a cylinder.
  for (const physics::BeamCone cone :
       {physics::BeamCone(0.005, 1.5e-3), physics::BeamCone(0.01, 0)}) {
    if (cone.tan_half_angle == 0) {
      // The cylinder by hand: pi (1 cm)^2 x 20 m x N drops.
      CHECK(drops_per_m3 * cone.volume_m3(0.0, 20.0) ==
            Approx(std::numbers::pi * 1e-4 * 20.0 * drops_per_m3));
    }
    std::vector<std::pair<float, float>> expected;
    std::size_t capped = 0;
    for (const double r : reach) {
      expected.push_back(reference(cone, r));
      capped += expected.back().second == 0 && expected.back().first > 0 ? 1 : 0;
    }
    CHECK(capped >= 1);  // the cap is exercised
    const simd::RainDrops drops{.drops_per_m3 = drops_per_m3,
                                .exit_radius_m = cone.exit_radius_m,
                                .tan_half_angle = cone.tan_half_angle,
                                .cumulative = cumulative.data(),
                                .steps = kSteps,
                                .start_m = kStart,
                                .step_m = kStep};
    std::vector<float> detectable(reach.size()), rest(reach.size());
    check_every_length(
        reach.size(),
        [&](std::size_t n) {
          std::fill(detectable.begin(), detectable.end(), -1.0f);
          simd::rain_drop_means(drops, std::span(reach.data(), n), std::span(detectable.data(), n),
                                std::span(rest.data(), n));
        },
        [&](std::size_t n) {
          std::size_t wrong = 0;
          for (std::size_t i = 0; i < n; ++i) {
            if (detectable[i] != expected[i].first || rest[i] != expected[i].second) {
              if (wrong++ == 0) {
                UNSCOPED_INFO("reach " << reach[i] << " m: " << detectable[i] << " + " << rest[i]
                                       << " against " << expected[i].first << " + "
                                       << expected[i].second);
              }
            }
          }
          return wrong;
        });
  }
}

TEST_CASE("The threshold detector in lanes is the scalar expressions' on every instruction set",
          "[simd][determinism][detection]") {
  physics::Receiver receiver;  // knee 1.5 nW
  const double dark = 2.0e-9;  // W, the detector's own noise sigma
  const double k = 4.0;        // threshold in sigmas
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> decades(-11.0f, -6.0f);
  std::normal_distribution<float> normal;
  constexpr std::size_t kCount = 4000;
  std::vector<float> power(kCount), ambient(kCount), z(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    power[i] = std::pow(10.0f, decades(gen));
    ambient[i] = i % 5 == 0 ? 0.0f : std::pow(10.0f, decades(gen));
    z[i] = normal(gen);
  }
  // The edges: a negative ambient (no light: the factor is 1), a NaN ambient (it stays NaN, and
  // nothing is detected against it), and a return exactly at its threshold (not detected) and a
  // float above it (detected): dark 0.5 and no ambient make sigma 0.5 and the threshold 2.
  ambient[1] = -1e-9f;
  ambient[2] = std::numeric_limits<float>::quiet_NaN();
  struct Reference {
    float power, noise, threshold;
    bool detected;
  };
  const auto reference = [&](float p, float amb, float draw, double dark_w) {
    const double sigma = dark_w * receiver.noise_factor(amb);
    const double out = p + sigma * draw;
    return Reference{static_cast<float>(out), static_cast<float>(sigma),
                     static_cast<float>(k * sigma), out > k * sigma};
  };
  for (const double dark_w : {dark, 0.5}) {
    std::vector<float> p = power, amb = ambient, draws = z;
    if (dark_w == 0.5) {
      p = {2.0f, std::nextafter(2.0f, 3.0f), 1.0f};
      amb = {0.0f, 0.0f, 0.0f};
      draws = {0.0f, 0.0f, 2.5f};
    }
    std::vector<Reference> expected;
    std::size_t detected = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      expected.push_back(reference(p[i], amb[i], draws[i], dark_w));
      detected += expected.back().detected ? 1 : 0;
    }
    CHECK(detected > 0);
    CHECK(detected < p.size());
    if (dark_w == 0.5) {
      CHECK(expected[0].threshold == 2.0f);
      CHECK_FALSE(expected[0].detected);
      CHECK(expected[1].detected);
      CHECK(expected[2].detected);  // 1 + 0.5 x 2.5 = 2.25
    }
    std::vector<float> got_power(p.size()), noise(p.size()), threshold(p.size());
    std::vector<std::int32_t> got_detected(p.size());
    const std::size_t count = p.size();
    check_every_length(
        count,
        [&](std::size_t n) {
          got_power = p;
          simd::detect_against_noise({.power_w = got_power.data(),
                                      .ambient_w = amb.data(),
                                      .z = draws.data(),
                                      .noise_w = noise.data(),
                                      .threshold_w = threshold.data(),
                                      .detected = got_detected.data()},
                                     std::min(n, count), {dark_w, receiver.knee_w, k});
        },
        [&](std::size_t n) {
          std::size_t wrong = 0;
          for (std::size_t i = 0; i < std::min(n, count); ++i) {
            const Reference& e = expected[i];
            const bool same_nan = std::isnan(e.noise) && std::isnan(noise[i]) &&
                                  std::isnan(got_power[i]) && std::isnan(threshold[i]);
            const bool same = same_nan || (got_power[i] == e.power && noise[i] == e.noise &&
                                           threshold[i] == e.threshold);
            if (!same || (got_detected[i] != 0) != e.detected) {
              if (wrong++ == 0) {
                UNSCOPED_INFO("return " << i << ": power " << got_power[i] << " noise " << noise[i]
                                        << " threshold " << threshold[i] << " detected "
                                        << got_detected[i] << " against " << e.power << ", "
                                        << e.noise << ", " << e.threshold << ", " << e.detected);
              }
            }
          }
          return wrong;
        });
  }
}
