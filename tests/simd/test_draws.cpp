// The vector kernel's draws and elementwise functions: the same Philox words as the scalar
// generator, the samplers' distributions against their closed forms, exp, asin and atan2 against
// libm's, and the same bits on every instruction set this build dispatches to and this CPU runs
// (PHYSICS.md section 10: a draw is a function of its key only).
#include <sleef.h>

#include <algorithm>
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lidaremu/core/counter_rng.hpp"
#include "lidaremu/core/simd.hpp"
#include "target_guard.hpp"

using namespace lidaremu::core;
using simd_test::TargetGuard;

namespace {

constexpr DrawKey kKey{0x0123456789ABCDEFull, 3, 77, 0, 5};
constexpr std::uint32_t kFirstBeam = 0xFFFFFF00u;  // the beam number wraps inside the run

std::vector<float> normals_of(std::size_t n, std::uint32_t draw = 2) {
  std::vector<float> z(n);
  simd::normals(kKey, kFirstBeam, draw, z);
  return z;
}

std::vector<std::uint32_t> poissons_of(float mean, std::size_t n) {
  const std::vector<float> means(n, mean);
  std::vector<std::uint32_t> k(n);
  simd::poissons(kKey, 0, 9, means, k);
  return k;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

template <typename T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return {v.begin(), v.end()};
}

// Kolmogorov-Smirnov distance of a sample from the standard normal CDF.
double ks_distance_from_normal(std::vector<double> z) {
  std::sort(z.begin(), z.end());
  double d = 0;
  const auto n = static_cast<double>(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) {
    const double cdf = 0.5 * std::erfc(-z[i] / std::numbers::sqrt2);
    d = std::max({d, cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf});
  }
  return d;
}

}  // namespace

TEST_CASE("The vector kernel runs on the instruction sets the build dispatches to", "[simd]") {
  const auto targets = simd::available_targets();
  REQUIRE_FALSE(targets.empty());
  CHECK(simd::current_target() == targets.front());
  const TargetGuard guard;
  for (const auto& t : targets) {
    simd::use_target(t);
    CHECK(simd::current_target() == t);
  }
  simd::use_target("best");
  CHECK(simd::current_target() == targets.front());
  try {
    simd::use_target("neon-on-x86");
    FAIL("an unknown target was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("neon-on-x86") && Catch::Contains(targets.back()));
  }
}

TEST_CASE("Vector draws use the scalar generator's Philox words", "[simd]") {
  constexpr std::size_t kBeams = 301;  // not a whole number of vectors on any target
  std::vector<float> u(kBeams);
  simd::uniforms(kKey, kFirstBeam, 7, u);
  for (std::size_t i = 0; i < kBeams; ++i) {
    DrawKey k = kKey;
    k.beam = kFirstBeam + static_cast<std::uint32_t>(i);
    const auto w = CounterRng(k).words(7);
    INFO("beam " << k.beam);
    REQUIRE(u[i] == static_cast<float>(((w[0] >> 9) + 0.5) * 0x1p-23));
  }
  // Box-Muller from the same words, in double: the float kernel is within 2e-6 of it.
  const auto z = normals_of(kBeams);
  for (std::size_t i = 0; i < kBeams; ++i) {
    DrawKey k = kKey;
    k.beam = kFirstBeam + static_cast<std::uint32_t>(i);
    const auto w = CounterRng(k).words(2);
    const double u1 = ((w[0] >> 9) + 0.5) * 0x1p-23;
    const double u2 = ((w[1] >> 9) + 0.5) * 0x1p-23;
    const double expected = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    REQUIRE(z[i] == Approx(expected).margin(2e-6).epsilon(2e-6));
  }
  // A run's draws do not depend on where the run starts or ends.
  std::vector<float> middle(17);
  simd::normals(kKey, kFirstBeam + 100, 2, middle);
  CHECK(std::equal(middle.begin(), middle.end(), z.begin() + 100));
  // Scattered draws are the same numbers: draw 2 of every third beam, among other draws.
  std::vector<std::uint32_t> beams, draws;
  for (std::uint32_t i = 0; i < kBeams; i += 3) {
    beams.insert(beams.end(), {kFirstBeam + i, kFirstBeam + i});
    draws.insert(draws.end(), {2u, 5u});
  }
  std::vector<float> scattered(beams.size());
  simd::normals_at(kKey, beams, draws, scattered);
  for (std::size_t j = 0; j < beams.size(); j += 2) {
    REQUIRE(scattered[j] == z[(beams[j] - kFirstBeam)]);
  }
}

TEST_CASE("Vector normals are standard normal", "[simd]") {
  const auto z = as_doubles(normals_of(400000));
  CHECK(mean_of(z) == Approx(0).margin(0.006));  // 4 sigma of the mean of 400k
  CHECK(variance_of(z) == Approx(1).margin(0.01));
  // KS: the 0.1 % critical distance for 400k draws is 1.95 / sqrt(n) = 0.0031.
  CHECK(ks_distance_from_normal(z) < 0.0031);
  const double beyond_3 = static_cast<double>(std::count_if(
                              z.begin(), z.end(), [](double x) { return std::fabs(x) > 3; })) /
                          static_cast<double>(z.size());
  CHECK(beyond_3 == Approx(0.0026998).margin(0.0004));
}

TEST_CASE("Vector Poisson counts have the Poisson mean, variance and shape", "[simd]") {
  for (const float mu : {0.05f, 0.7f, 3.0f, 12.5f, 31.5f, 32.5f, 180.0f, 5000.0f}) {
    INFO("mean " << mu);
    const auto k = as_doubles(poissons_of(mu, 200000));
    const double se = std::sqrt(mu / 200000.0);
    CHECK(mean_of(k) == Approx(mu).margin(5 * se));
    CHECK(variance_of(k) == Approx(mu).epsilon(0.03));
  }
  // Chi-square goodness of fit at mean 4 over 0..12+: 12 degrees of freedom, 0.1 % critical 32.9.
  const auto k = poissons_of(4.0f, 200000);
  double chi2 = 0;
  double tail_p = 1;
  for (int j = 0; j <= 12; ++j) {
    const double p = j < 12 ? std::exp(-4.0 + j * std::log(4.0) - std::lgamma(j + 1.0)) : tail_p;
    tail_p -= p;
    const auto seen = static_cast<double>(std::count_if(k.begin(), k.end(), [&](std::uint32_t x) {
      return j < 12 ? x == static_cast<std::uint32_t>(j) : x >= 12u;
    }));
    const double expected = p * static_cast<double>(k.size());
    chi2 += (seen - expected) * (seen - expected) / expected;
  }
  CHECK(chi2 < 32.9);
}

TEST_CASE("Vector Poisson counts take hostile means without looping or overflowing", "[simd]") {
  const std::vector<float> means{std::numeric_limits<float>::quiet_NaN(),
                                 -1.0f,
                                 0.0f,
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::infinity(),
                                 1e30f,
                                 std::numeric_limits<float>::denorm_min(),
                                 31.999f};
  std::vector<std::uint32_t> k(means.size());
  simd::poissons(kKey, 0, 0, means, k);
  CHECK(k[0] == 0);
  CHECK(k[1] == 0);
  CHECK(k[2] == 0);
  CHECK(k[3] == 0);
  // Capped at a mean of 1e9 (the count's own ceiling): within 5 sigma of it.
  CHECK(k[4] >= 999840000u);
  CHECK(k[4] <= 1000000000u);
  CHECK(k[5] >= 999840000u);
  CHECK(k[5] <= 1000000000u);
  CHECK(k[6] <= 1u);
  CHECK(k[7] < 128u);
}

TEST_CASE("A Poisson count depends on its own lane only, whatever the others' means", "[simd]") {
  // A vector whose means are all under the inversion limit skips the normal approximation; one
  // large mean beside them must not change their counts (nor theirs its count).
  constexpr std::size_t kBeams = 67;
  std::vector<float> small(kBeams);
  for (std::size_t i = 0; i < kBeams; ++i) small[i] = 0.05f * static_cast<float>(i % 200);
  std::vector<float> mixed = small;
  mixed[17] = 40.0f;
  mixed[48] = 3e9f;
  std::vector<std::uint32_t> k_small(kBeams), k_mixed(kBeams);
  const TargetGuard guard;
  for (const auto& t : simd::available_targets()) {
    simd::use_target(t);
    INFO("target " << t);
    simd::poissons(kKey, kFirstBeam, 4, small, k_small);
    simd::poissons(kKey, kFirstBeam, 4, mixed, k_mixed);
    for (std::size_t i = 0; i < kBeams; ++i) {
      if (i == 17 || i == 48) continue;
      INFO("beam " << i << ", mean " << small[i]);
      REQUIRE(k_small[i] == k_mixed[i]);
    }
    CHECK(k_mixed[17] > 10u);           // N(40, 40): beyond 10 by 4.7 sigma
    CHECK(k_mixed[48] > 999'000'000u);  // capped at 1e9, less its draw
  }
}

TEST_CASE("The root ratio's asin is the scalar form's, lane by lane", "[simd]") {
  // The report's asin(sqrt(T / A)) for a detected echo (A > T), 0 otherwise: equal powers, a
  // threshold above the power, a zero power and NaNs included.
  std::vector<float> threshold, power;
  for (int i = 0; i < 300; ++i) {
    threshold.push_back(1e-9f * static_cast<float>(1 + i % 17));
    power.push_back(1e-9f * static_cast<float>(i) * 0.37f);
  }
  for (const auto& [t, a] :
       std::vector<std::pair<float, float>>{{1.0f, 1.0f},
                                            {2.0f, 1.0f},
                                            {1.0f, 0.0f},
                                            {0.0f, 0.0f},
                                            {0.0f, 5.0f},
                                            {std::numeric_limits<float>::quiet_NaN(), 1.0f},
                                            {1.0f, std::numeric_limits<float>::quiet_NaN()}}) {
    threshold.push_back(t);
    power.push_back(a);
  }
  std::vector<float> expected(threshold.size());
  for (std::size_t i = 0; i < threshold.size(); ++i) {
    expected[i] = power[i] > threshold[i] ? std::sqrt(threshold[i] / power[i]) : 0.0f;
  }
  simd::asin_each(expected);
  const TargetGuard guard;
  for (const auto& t : simd::available_targets()) {
    simd::use_target(t);
    INFO("target " << t);
    std::vector<float> got(threshold.size());
    simd::asin_root_ratio(threshold, power, got);
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("T " << threshold[i] << ", A " << power[i]);
      REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(expected[i]));
    }
  }
}

TEST_CASE("Elementwise exp and asin are within 1 ulp of libm's, tails included", "[simd]") {
  std::vector<float> x, e, a;
  for (int i = -3000; i <= 3000; ++i) x.push_back(static_cast<float>(i) * 0.029f);  // -87..87
  e = x;
  simd::exp_each(e);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = std::exp(static_cast<double>(x[i]));
    const auto rounded = static_cast<float>(expected);
    const double ulp = std::nextafter(rounded, INFINITY) - rounded;
    INFO("exp(" << x[i] << ")");
    REQUIRE(std::fabs(e[i] - expected) <= 1.5 * ulp);
  }
  for (int i = 0; i <= 1001; ++i)
    a.push_back(static_cast<float>(i) / 1001.0f);  // 0..1, 1002 values
  const auto args = a;
  simd::asin_each(a);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("asin(" << args[i] << ")");
    REQUIRE(a[i] == Approx(std::asin(static_cast<double>(args[i]))).epsilon(2e-7).margin(1e-9));
  }
}

TEST_CASE("Elementwise atan2 is within 1 ulp of libm's in every quadrant and on the axes",
          "[simd]") {
  std::vector<double> y, x;
  for (int i = 0; i < 720; ++i) {  // every quarter degree round the circle, at three radii
    const double a = i * 0.25 * std::numbers::pi / 180.0;
    for (const double r : {1e-3, 1.0, 3e4}) {
      y.push_back(r * std::sin(a));
      x.push_back(r * std::cos(a));
    }
  }
  for (const double v : {0.0, -0.0, 1.0, -1.0}) {  // the axes and the signed zeros
    for (const double w : {0.0, -0.0, 1.0, -1.0}) {
      y.push_back(v);
      x.push_back(w);
    }
  }
  std::vector<double> out(y.size());
  simd::atan2_each(y, x, out);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double expected = std::atan2(y[i], x[i]);
    INFO("atan2(" << y[i] << ", " << x[i] << ") = " << out[i] << ", libm " << expected);
    REQUIRE(std::fabs(out[i] - expected) <=
            2 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::fabs(expected)));
    REQUIRE(std::signbit(out[i]) == std::signbit(expected));
  }
}

TEST_CASE("Vector draws are the same bits on every instruction set", "[simd][determinism]") {
  constexpr std::size_t kBeams = 4099;
  std::vector<float> means(kBeams);
  for (std::size_t i = 0; i < kBeams; ++i) means[i] = 0.01f * static_cast<float>(i % 6000);
  const auto draw_all = [&] {
    std::vector<float> u(kBeams), z(kBeams), scattered(kBeams);
    std::vector<std::uint32_t> k(kBeams), draws(kBeams);
    simd::uniforms(kKey, kFirstBeam, 1, u);
    simd::normals(kKey, kFirstBeam, 1, z);
    simd::poissons(kKey, kFirstBeam, 1, means, k);
    for (std::size_t i = 0; i < kBeams; ++i) draws[i] = static_cast<std::uint32_t>(i % 13);
    simd::normals_at(kKey, k, draws, scattered);  // the counts as beam numbers: any will do
    std::vector<float> e(z), a(u);
    simd::exp_each(e);
    simd::asin_each(a);
    std::vector<double> y(kBeams), x(kBeams), angle(kBeams);
    for (std::size_t i = 0; i < kBeams; ++i) {
      y[i] = z[i];
      x[i] = static_cast<double>(u[i]) - 0.5;
    }
    simd::atan2_each(y, x, angle);
    return std::make_tuple(u, z, k, scattered, e, a, angle);
  };
  const TargetGuard guard;
  const auto targets = simd::available_targets();
  simd::use_target(targets.back());
  const auto reference = draw_all();
  for (const auto& t : targets) {
    simd::use_target(t);
    INFO("target " << t << " against " << targets.back());
    CHECK(draw_all() == reference);
  }
}
