// The vector kernel's stage arithmetic: the encoders' range units, the geometry stage's hit
// arithmetic, the surface's returns and the two-way attenuation in lanes are the scalar
// expressions' results to the bit, on every instruction set this build dispatches to and this CPU
// runs (docs/performance.md says which stage uses which).
#include <sleef.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/simd.hpp"
#include "target_guard.hpp"

using namespace lidaremu::core;
using simd_test::on_every_target;

TEST_CASE("Range units in lanes are std::round's on every instruction set, halves and limits",
          "[simd][determinism]") {
  // The encoders' scalar expression: the reference, written out.
  const auto scalar = [](float range_m, double unit_m) {
    if (range_m < 0) return std::uint16_t{0};
    return static_cast<std::uint16_t>(std::min(std::round(range_m / unit_m), 65535.0));
  };
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> metres(0.0f, 300.0f);
  for (const double unit_m : {0.004, 0.005, 0.0025, 0.001, 0.002}) {
    std::vector<float> ranges;
    ranges.reserve(20000);
    for (int i = 0; i < 20000; ++i) ranges.push_back(metres(gen));
    // Exact halves (k + 0.5 units, where a float holds one), their neighbours a float apart,
    // the field's top and beyond, zero, negatives.
    for (int k = 0; k < 70000; k += 7) {
      const auto tie = static_cast<float>((k + 0.5) * unit_m);
      ranges.insert(ranges.end(), {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 1e9f)});
    }
    ranges.insert(ranges.end(),
                  {0.0f, -0.0f, -0.001f, -5.0f, 1e-30f, static_cast<float>(65535.4 * unit_m),
                   static_cast<float>(65535.5 * unit_m), 1e6f, 3e38f});
    on_every_target([&](const std::string& t) {
      std::vector<std::uint16_t> got(ranges.size());
      simd::range_units_u16(ranges, unit_m, got);
      std::size_t i = 0;
      while (i < ranges.size() && got[i] == scalar(ranges[i], unit_m)) ++i;
      const bool every_one_agrees = i == ranges.size();
      if (!every_one_agrees) {
        UNSCOPED_INFO("target " << t << ": " << ranges[i] << " m in units of " << unit_m
                                << " m gave " << got[i] << ", std::round "
                                << scalar(ranges[i], unit_m));
      }
      CHECK(every_one_agrees);
      // The wide form (Velodyne) is std::lround's, below its cap; the field keeps its low bits.
      std::vector<std::uint32_t> wide(ranges.size());
      simd::range_units_u32(ranges, unit_m, wide);
      std::size_t wide_wrong = 0;
      for (std::size_t k = 0; k < ranges.size(); ++k) {
        const double quotient = ranges[k] / unit_m;
        const long expected = ranges[k] < 0              ? 0
                              : quotient >= 2147483647.0 ? 2147483647L
                                                         : std::lround(quotient);
        if (wide[k] != static_cast<std::uint32_t>(expected) && wide_wrong++ == 0) {
          UNSCOPED_INFO("target " << t << ": " << ranges[k] << " m in units of " << unit_m
                                  << " m gave " << wide[k] << " wide, std::lround " << expected);
        }
      }
      CHECK(wide_wrong == 0);
    });
  }
}

TEST_CASE(
    "Scaled range units in lanes are the Ouster encoder's std::lround on every instruction set",
    "[simd][determinism]") {
  // The encoder's scalar expression (millimetres over 2^shift): the reference, written out.
  // Past the cap (2^31 - 1, where std::lround of a huge quotient has no value to give) the cap:
  // the encoder sends both as no return, past every field's mask.
  const auto scalar = [](float range_m, double unit_mm) -> std::uint32_t {
    const double quotient = range_m * 1000.0 / unit_mm;
    if (range_m < 0) return 0u;
    if (quotient >= 2147483647.0) return 2147483647u;
    return static_cast<std::uint32_t>(std::lround(quotient));
  };
  std::mt19937 gen(12);
  std::uniform_real_distribution<float> metres(0.0f, 1100.0f);
  for (const int shift : {0, 1, 2, 3}) {
    const double unit_mm = static_cast<double>(1u << shift);
    std::vector<float> ranges;
    ranges.reserve(20000);
    for (int i = 0; i < 20000; ++i) ranges.push_back(metres(gen));
    // Exact halves: range x 1000 / 2^shift is k + 0.5 for the ranges 2^shift x j / 16, j odd
    // (x 1000 is exact in double); the float nearest other halves; their float neighbours; the
    // widest field's top (20 bits) and past it, zero, negatives, huge.
    for (int j = 1; j < 300000; j += 2) ranges.push_back(static_cast<float>(unit_mm * j / 16.0));
    for (int k = 0; k < 1100000; k += 997) {
      const auto tie = static_cast<float>((k + 0.5) * unit_mm / 1000.0);
      ranges.insert(ranges.end(), {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 1e9f)});
    }
    ranges.insert(ranges.end(), {0.0f, -0.0f, -0.0004f, -5.0f, 1e-30f,
                                 static_cast<float>(1048575.4 * unit_mm / 1000.0),
                                 static_cast<float>(1048575.6 * unit_mm / 1000.0), 1e6f, 3e38f});
    on_every_target([&](const std::string& t) {
      std::vector<std::uint32_t> got(ranges.size());
      simd::scaled_range_units_u32(ranges, 1000.0, unit_mm, got);
      std::size_t wrong = 0;
      for (std::size_t k = 0; k < ranges.size(); ++k) {
        if (got[k] != scalar(ranges[k], unit_mm) && wrong++ == 0) {
          UNSCOPED_INFO("target " << t << ": " << ranges[k] << " m in units of " << unit_mm
                                  << " mm gave " << got[k] << ", std::lround "
                                  << scalar(ranges[k], unit_mm));
        }
      }
      CHECK(wrong == 0);
    });
  }
}

TEST_CASE("Two-way attenuation in lanes is the scalar expression's on every instruction set",
          "[simd][determinism]") {
  // physics::two_way_transmission applied as the atmosphere stages apply it, with SLEEF's scalar
  // exp: the reference, to the bit; libm's exp gives the same floats but where a double's last
  // bit tips one.
  const auto reference = [](double extinction, float range, float power) {
    return power * static_cast<float>(Sleef_cinz_expd1_u10purec(-2.0 * extinction * range));
  };
  std::mt19937 gen(14);
  std::uniform_real_distribution<float> metres(0.0f, 400.0f);
  std::uniform_real_distribution<float> watts(1e-12f, 1e-5f);
  std::vector<float> range, power;
  for (int i = 0; i < 5000; ++i) {
    range.push_back(metres(gen));
    power.push_back(watts(gen));
  }
  range.insert(range.end(), {0.0f, -0.0f, 1e-30f, 3e38f});
  power.insert(power.end(), {1e-6f, 1e-6f, 0.0f, 1e-6f});
  // Clear air at 23 km, fog at 50 m, heavy rain; none.
  for (const double extinction : {1.2e-4, 0.078, 5.5e-3, 0.0}) {
    std::vector<float> expected;
    std::size_t off_libm = 0;
    for (std::size_t i = 0; i < range.size(); ++i) {
      expected.push_back(reference(extinction, range[i], power[i]));
      const float libm = power[i] * static_cast<float>(std::exp(-2.0 * extinction * range[i]));
      if (libm != expected.back()) ++off_libm;
    }
    CHECK(off_libm <= range.size() / 1000);
    on_every_target([&](const std::string& t) {
      for (const std::size_t n : {range.size(), std::size_t{1}, std::size_t{7}, std::size_t{37}}) {
        std::vector<float> got(power.begin(), power.begin() + static_cast<std::ptrdiff_t>(n));
        simd::attenuate_two_way(extinction, std::span(range.data(), n), got);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if (got[i] != expected[i] && wrong++ == 0) {
            UNSCOPED_INFO("target " << t << ": " << range[i] << " m at " << extinction
                                    << " /m gave " << got[i] << " against " << expected[i]);
          }
        }
        CHECK(wrong == 0);
      }
    });
  }
}

TEST_CASE("The surface's returns in lanes are the scalar expressions' on every instruction set",
          "[simd][determinism]") {
  // PHYSICS.md 2b as physics.hpp writes it (lambertian_brdf + glossy_backscatter with Walter's
  // masking, times the gain; the coaxial crossover; the range equation), written out, with
  // SLEEF's scalar exp for the gloss lobe: the reference, to the bit.
  const auto reference = [](float range_f, float cos_f, float gain_f, double reflectivity,
                            double f0, double roughness, double weight, double k,
                            double full_overlap) {
    const double cos_theta = cos_f;
    const double range = range_f;
    const double lambertian = reflectivity * std::max(cos_theta, 0.0) / std::numbers::pi;
    double gloss = 0;
    if (f0 > 0 && cos_theta > 0 && roughness > 0) {
      const double c2 = cos_theta * cos_theta;
      const double exponent = (1.0 - c2) / c2 / (roughness * roughness);
      if (!(exponent > 700)) {
        const double sin_theta = std::sqrt(std::max(1.0 - cos_theta * cos_theta, 0.0));
        double masking = 1.0;
        const double a = cos_theta / (roughness * sin_theta);
        if (sin_theta > 0 && a < 1.6) {
          masking = (3.535 * a + 2.181 * a * a) / (1.0 + 2.276 * a + 2.577 * a * a);
        }
        const double m2 = roughness * roughness;
        gloss = f0 * Sleef_cinz_expd1_u10purec(-exponent) * masking /
                (4.0 * std::numbers::pi * m2 * c2 * c2 * cos_theta);
      }
    }
    const double brdf = (lambertian + gloss) * gain_f;
    double crossover = 1.0;
    if (full_overlap > 0 && range < full_overlap)
      crossover = (range / full_overlap) * (range / full_overlap);
    return std::pair{static_cast<float>(brdf * std::numbers::pi),
                     static_cast<float>(k * brdf * crossover / (range * range) * weight)};
  };
  std::mt19937 gen(13);
  std::uniform_real_distribution<float> metres(0.05f, 250.0f);
  std::uniform_real_distribution<float> cosines(-0.2f, 1.0f);
  std::uniform_real_distribution<float> gains(0.3f, 1.0f);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::array<double, 6> f0s{0.0, 0.02, 0.04, 0.58, 0.87, 1.0};
  const std::array<double, 6> roughnesses{0.0, 0.02, 0.1, 0.3, 0.6, 1.0};
  constexpr std::size_t kCount = 5000;
  std::vector<float> range(kCount), cos_theta(kCount), gain(kCount);
  std::vector<double> reflectivity(kCount), f0(kCount), roughness(kCount), weight(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    range[i] = metres(gen);
    cos_theta[i] = cosines(gen);
    gain[i] = gains(gen);
    reflectivity[i] = unit(gen);
    f0[i] = f0s[i % f0s.size()];
    roughness[i] = roughnesses[(i / f0s.size()) % roughnesses.size()];
    weight[i] = i % 3 == 0 ? 1.0 : 0.42;
  }
  // The edges: normal and grazing incidence (the masking's 1.6 and the lobe's 700), zero and
  // negative zero cosines, the crossover's full overlap and just below.
  const std::array<float, 9> edge_cos{1.0f, 0.0f, -0.0f, 1e-6f, 0.03f, 0.16f, 0.15f, 0.5f, 0.999f};
  for (std::size_t e = 0; e < edge_cos.size(); ++e) {
    cos_theta[e] = edge_cos[e];
    f0[e] = 0.04;
    roughness[e] = 0.1;
  }
  range[20] = 5.0f;
  range[21] = std::nextafter(5.0f, 0.0f);
  const double k = 3.7e-7;
  for (const double full_overlap : {0.0, 5.0}) {
    std::vector<std::pair<float, float>> expected;
    for (std::size_t i = 0; i < kCount; ++i) {
      expected.push_back(reference(range[i], cos_theta[i], gain[i], reflectivity[i], f0[i],
                                   roughness[i], weight[i], k, full_overlap));
    }
    on_every_target([&](const std::string& t) {
      for (const std::size_t n : {kCount, std::size_t{1}, std::size_t{7}, std::size_t{37}}) {
        std::vector<float> lambertian(n), power(n);
        simd::surface_returns(
            {range.data(), cos_theta.data(), gain.data(), reflectivity.data(), f0.data(),
             roughness.data(), weight.data(), lambertian.data(), power.data()},
            n, {k, full_overlap});
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if ((lambertian[i] != expected[i].first || power[i] != expected[i].second) &&
              wrong++ == 0) {
            UNSCOPED_INFO("target " << t << ", candidate " << i << " (cos " << cos_theta[i]
                                    << ", f0 " << f0[i] << ", roughness " << roughness[i]
                                    << "): " << lambertian[i] << ", " << power[i] << " against "
                                    << expected[i].first << ", " << expected[i].second);
          }
        }
        CHECK(wrong == 0);
      }
    });
  }
}

TEST_CASE("Hit geometry in lanes is the scalar expressions' on every instruction set",
          "[simd][determinism]") {
  // The geometry stage's scalar arithmetic (PHYSICS.md 1), written out: the reference.
  const simd::HitWindow window{.min_range_m = 0.3,
                               .max_range_m = 120.0,
                               .beam_exit_radius_m = 0.005,
                               .beam_tan_half_angle = std::tan(0.0015)};
  struct Expected {
    double distance;
    float range, cos_incidence, extent;
    bool accepted;
  };
  const auto scalar = [&](const std::array<float, 6>& h) {
    const double x = h[0], y = h[1], z = h[2];
    const double distance = std::sqrt((x * x + y * y) + z * z);
    const double cos_theta = -((x * h[3] + y * h[4]) + z * h[5]) / distance;
    const bool accepted =
        cos_theta > 0.0 && !(distance < window.min_range_m) && !(distance > window.max_range_m);
    const double footprint =
        2.0 * (window.beam_exit_radius_m + distance * window.beam_tan_half_angle);
    const double tan_theta = std::sqrt(std::max(1.0 - cos_theta * cos_theta, 0.0)) / cos_theta;
    return Expected{distance, static_cast<float>(distance), static_cast<float>(cos_theta),
                    static_cast<float>(std::min(footprint * tan_theta, window.max_extent_m)),
                    accepted};
  };
  // Hits all round, the unit normals facing any way; then the edges: the range window's ends,
  // grazing incidence (the extent's cap), a back face, a point at the origin, NaN.
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> coordinate(-150.0f, 150.0f);
  std::normal_distribution<float> direction;
  std::vector<std::array<float, 6>> hits;
  for (int i = 0; i < 5000; ++i) {
    std::array<float, 6> h{coordinate(gen), coordinate(gen), coordinate(gen) * 0.1f,
                           direction(gen),  direction(gen),  direction(gen)};
    const float length = std::sqrt(h[3] * h[3] + h[4] * h[4] + h[5] * h[5]);
    for (int k = 3; k < 6; ++k) h[k] /= length;
    hits.push_back(h);
  }
  hits.push_back({0.3f, 0, 0, -1, 0, 0});
  hits.push_back({120.0f, 0, 0, -1, 0, 0});
  hits.push_back({120.0001f, 0, 0, -1, 0, 0});
  hits.push_back({10.0f, 0, 0, -1e-7f, 1, 0});
  hits.push_back({10.0f, 0, 0, 1, 0, 0});
  hits.push_back({0, 0, 0, -1, 0, 0});
  hits.push_back({std::numeric_limits<float>::quiet_NaN(), 1, 1, -1, 0, 0});
  std::size_t accepted_count = 0;
  for (const auto& h : hits) accepted_count += scalar(h).accepted;
  CHECK(accepted_count > hits.size() / 5);  // both outcomes well represented
  CHECK(accepted_count < hits.size() * 2 / 3);
  // Every hit alone in its plane (stride 1), and every third of a plane of three (stride 3, the
  // layout of several rays per beam), runs of every length up to a few vectors.
  for (const std::size_t stride : {std::size_t{1}, std::size_t{3}}) {
    std::array<std::vector<float>, 6> planes;
    for (auto& p : planes) p.assign(hits.size() * stride, 99.0f);
    for (std::size_t i = 0; i < hits.size(); ++i) {
      for (std::size_t k = 0; k < 6; ++k) planes[k][i * stride] = hits[i][k];
    }
    on_every_target([&](const std::string& t) {
      std::size_t wrong = 0;
      for (std::size_t first = 0, run = 1; first < hits.size(); first += run, run = run % 37 + 1) {
        const std::size_t n = std::min(run, hits.size() - first);
        std::vector<double> distance(n);
        std::vector<float> range(n), cosine(n), extent(n);
        std::vector<std::uint8_t> accepted(n);
        const std::size_t at = first * stride;
        simd::hit_geometry(
            {&planes[0][at], &planes[1][at], &planes[2][at], &planes[3][at], &planes[4][at],
             &planes[5][at], stride},
            n, window,
            {distance.data(), range.data(), cosine.data(), extent.data(), accepted.data()});
        for (std::size_t i = 0; i < n; ++i) {
          const Expected e = scalar(hits[first + i]);
          const bool agrees =
              (accepted[i] != 0) == e.accepted &&
              (!e.accepted || (distance[i] == e.distance && range[i] == e.range &&
                               cosine[i] == e.cos_incidence && extent[i] == e.extent));
          if (!agrees && wrong++ == 0) {
            UNSCOPED_INFO(std::setprecision(17)
                          << "target " << t << ", stride " << stride << ": hit " << first + i
                          << ": accepted, distance, cos, extent " << int(accepted[i]) << " "
                          << distance[i] << " " << cosine[i] << " " << extent[i] << "; scalar "
                          << e.accepted << " " << e.distance << " " << e.cos_incidence << " "
                          << e.extent);
          }
        }
      }
      CHECK(wrong == 0);
    });
  }
}

TEST_CASE("The report's echoes in lanes are the scalar expressions' on every instruction set",
          "[simd][determinism]") {
  // What the report stage computed an echo at a time, with physics.hpp's expressions (as the
  // stage called them before): the reference, to the bit.
  const physics::Receiver receiver;
  const double wavelength_nm = 905;
  const double tau_h = 2.5e-9;
  const double watts_per_unit = 0.37;
  simd::ReportScales scales{.range_unit_m = 0.004,
                            .max_range_m = 200,
                            .system_constant = 3.7e-7,
                            .full_overlap_m = 0,
                            .min_overlap = 1e-3,
                            .pulse_half_width_s = tau_h,
                            .signal = {.watts_per_unit = watts_per_unit,
                                       .seconds = tau_h,
                                       .photon_energy_j = physics::photon_energy_j(wavelength_nm),
                                       .quantum_efficiency = receiver.quantum_efficiency,
                                       .fewest = 1}};
  struct Echo {
    float range, offset, power, threshold, noise, extent, transmission, asin_ratio;
    double crossover;
  };
  std::mt19937 gen(15);
  std::uniform_real_distribution<float> metres(0.05f, 260.0f);
  std::uniform_real_distribution<float> offsets(-0.05f, 0.05f);
  std::uniform_real_distribution<double> brightness(0.0, 1.6);   // of the white target's power
  std::uniform_real_distribution<float> thresholds(0.2f, 1.5f);  // of the power
  std::uniform_real_distribution<float> extents(0.0f, 3.0f);
  std::uniform_real_distribution<float> transmissions(0.95f, 1.0f);
  std::uniform_real_distribution<double> crossovers(0.0, 1.0);
  std::vector<Echo> echoes;
  for (int i = 0; i < 5000; ++i) {
    Echo e{};
    e.range = metres(gen);
    e.offset = i % 2 == 0 ? 0.0f : offsets(gen);
    e.transmission = transmissions(gen);
    e.crossover = i % 5 == 0 ? 1e-4 : crossovers(gen);
    const double white = physics::received_power(scales.system_constant, 1 / std::numbers::pi,
                                                 e.range, e.transmission, 1.0);
    e.power = static_cast<float>(white * brightness(gen));
    e.threshold = e.power * thresholds(gen);
    e.noise = e.threshold / 3.0f;
    e.extent = extents(gen);
    echoes.push_back(e);
  }
  // The edges: the quantisation's halves (exact in units of 2^-7 m: 384.5 and 385.5 of them; the
  // floats nearest them in 4 mm units) and its limits, ranges the offset takes to zero or below,
  // no power, power at the threshold, the photon count's clamps, a dark white target.
  const std::array<float, 14> edge_range{3.00390625f, 3.01171875f, 3.002f, 3.006f,  200.0f,
                                         200.003f,    200.01f,     0.001f, 0.0015f, 0.02f,
                                         0.0f,        -0.0f,       1e-30f, 3e38f};
  for (std::size_t i = 0; i < edge_range.size(); ++i) {
    echoes[i].range = edge_range[i];
    echoes[i].offset = i == 9 ? -0.02f : 0.0f;
  }
  echoes[20].power = 0.0f;
  echoes[21].threshold = echoes[21].power;
  echoes[22].power = 1e-30f;             // fewer than one photon: one
  echoes[23].power = 3e30f;              // more than 65535: 65535
  echoes[24].transmission = 0.0f;        // a white target that returns nothing
  echoes[25].power = -echoes[25].power;  // a power below zero reads dark
  for (Echo& e : echoes) {
    e.asin_ratio = e.power > e.threshold ? std::asin(std::sqrt(e.threshold / e.power)) : 0.0f;
  }
  const auto column = [&](auto field) {
    std::vector<std::remove_cvref_t<decltype(echoes[0].*field)>> v;
    v.reserve(echoes.size());
    for (const Echo& e : echoes) v.push_back(e.*field);
    return v;
  };
  const auto range = column(&Echo::range), offset = column(&Echo::offset),
             power = column(&Echo::power), threshold = column(&Echo::threshold),
             extent = column(&Echo::extent), transmission = column(&Echo::transmission),
             asin_ratio = column(&Echo::asin_ratio);
  const auto crossover = column(&Echo::crossover);
  std::size_t brighter = 0, reported = 0;
  for (const auto optics : {"coaxial", "form factor", "bistatic", "coaxial, 2^-7 m units"}) {
    const bool bistatic = std::string(optics) == "bistatic";
    scales.range_unit_m = std::string(optics) == "coaxial, 2^-7 m units" ? 0.0078125 : 0.004;
    scales.full_overlap_m = std::string(optics) == "form factor" ? 12.0 : 0.0;
    struct Expected {
      float range;
      int reflectivity;
      std::uint16_t photons;
      float width;
      bool operator==(const Expected&) const = default;
    };
    std::vector<Expected> expected;
    for (const Echo& e : echoes) {
      const double r = e.range;
      const double xi =
          bistatic ? e.crossover : physics::crossover({.full_overlap_m = scales.full_overlap_m}, r);
      const double white = physics::received_power(scales.system_constant, 1.0 / std::numbers::pi,
                                                   r, e.transmission, std::max(xi, 1e-3));
      expected.push_back(
          {static_cast<float>(physics::quantise_range(e.range + e.offset, scales.range_unit_m,
                                                      scales.max_range_m)),
           physics::estimated_reflectivity(e.power, white, e.noise),
           static_cast<std::uint16_t>(std::clamp(
               receiver.photons(e.power * watts_per_unit, tau_h, wavelength_nm), 1.0, 65535.0)),
           e.power > e.threshold
               ? static_cast<float>(
                     physics::echo_pulse_width_from_asin_s(e.asin_ratio, tau_h, e.extent) * 1e9)
               : 0.0f});
      if (expected.back().range != 0) ++reported;
      if (e.power > white) ++brighter;
    }
    on_every_target([&](const std::string& t) {
      for (const std::size_t n : {echoes.size(), std::size_t{1}, std::size_t{7}, std::size_t{37}}) {
        std::vector<float> got_range(n), got_width(n);
        std::vector<double> white(n);
        std::vector<std::int32_t> reflectivity(n);
        std::vector<std::uint16_t> photons(n);
        simd::report_echoes(
            {range.data(), offset.data(), power.data(), threshold.data(), extent.data(),
             transmission.data(), asin_ratio.data(), bistatic ? crossover.data() : nullptr,
             got_range.data(), white.data(), reflectivity.data(), photons.data(), got_width.data()},
            n, scales);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
          // Above the white target's power the lanes leave the reflectivity to the scalar
          // expression, from the white power they give.
          const int got_reflectivity =
              reflectivity[i] >= 0
                  ? reflectivity[i]
                  : physics::estimated_reflectivity(echoes[i].power, white[i], echoes[i].noise);
          const Expected got{got_range[i], got_reflectivity, photons[i], got_width[i]};
          if (got.range == 0 && expected[i].range == 0) continue;  // the stage clears the rest
          if (!(got == expected[i]) && wrong++ == 0) {
            UNSCOPED_INFO(optics << ", target " << t << ", echo " << i << " at " << range[i]
                                 << " m: range " << got.range << " / " << expected[i].range
                                 << ", reflectivity " << got.reflectivity << " / "
                                 << expected[i].reflectivity << ", photons " << got.photons << " / "
                                 << expected[i].photons << ", width " << got.width << " / "
                                 << expected[i].width);
          }
        }
        CHECK(wrong == 0);
      }
    });
  }
  // The draws reach both sides of the white target and of the range window.
  CHECK(brighter > 300);
  CHECK(reported > std::size_t{4} * 3000);
}

TEST_CASE("Photon counts in lanes are Receiver::photons' on every instruction set",
          "[simd][determinism]") {
  const physics::Receiver receiver;
  const simd::PhotonCounting near_ir{.seconds = 2.0 * 160 / physics::kSpeedOfLight,
                                     .photon_energy_j = physics::photon_energy_j(865),
                                     .quantum_efficiency = receiver.quantum_efficiency};
  std::mt19937 gen(16);
  std::uniform_real_distribution<float> decades(-16.0f, -4.0f);
  std::vector<float> watts(5000);
  for (float& w : watts) w = std::pow(10.0f, decades(gen));
  watts.insert(watts.end(), {0.0f, -0.0f, 1e-30f, 3e38f});
  std::vector<std::uint16_t> expected;
  std::size_t clamped = 0;
  for (const float w : watts) {
    const double photons = receiver.photons(w, near_ir.seconds, 865);
    expected.push_back(static_cast<std::uint16_t>(std::min(photons, 65535.0)));
    if (photons > 65535) ++clamped;
  }
  CHECK(clamped > 100);  // the draws reach the clamp as well as single photons
  on_every_target([&](const std::string& t) {
    std::vector<std::uint16_t> got(watts.size());
    simd::photon_counts(watts, near_ir, got);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < watts.size(); ++i) {
      if (got[i] != expected[i] && wrong++ == 0) {
        UNSCOPED_INFO("target " << t << ": " << watts[i] << " W gave " << got[i] << ", expected "
                                << expected[i]);
      }
    }
    CHECK(wrong == 0);
  });
}

TEST_CASE("Range noise in lanes is physics::range_noise_sigma_m's on every instruction set",
          "[simd][determinism]") {
  // The range noise stage's expression (sigma from physics::range_noise_sigma_m times the draw,
  // as a float): the reference, to the bit. The OS1's floor and pulse (PHYSICS.md 3).
  const double floor = 0.015, pulse = 0.45;
  std::mt19937 gen(18);
  std::uniform_real_distribution<float> snr_decades(-1.0f, 4.0f);
  std::normal_distribution<float> normal;
  constexpr std::size_t kCount = 5000;
  std::vector<float> power(kCount), noise(kCount), z(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    noise[i] = i % 7 == 0 ? 0.0f : 1e-9f;  // ideal detection: no noise figure, the floor
    power[i] = 1e-9f * std::pow(10.0f, snr_decades(gen));
    z[i] = normal(gen);
  }
  // The edges: no power, negative power, SNR where the floor takes over (450) and either side.
  power[1] = 0.0f;
  power[2] = -1e-9f;
  power[3] = 450e-9f;
  power[4] = std::nextafter(450e-9f, 0.0f);
  power[5] = std::nextafter(450e-9f, 1.0f);
  std::vector<float> expected;
  std::size_t floored = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    const double sigma = physics::range_noise_sigma_m(power[i], noise[i], floor, pulse);
    expected.push_back(static_cast<float>(sigma * z[i]));
    floored += sigma == floor ? 1 : 0;
  }
  CHECK(floored > kCount / 5);  // both the floor and the pulse's share
  CHECK(floored < kCount * 4 / 5);
  on_every_target([&](const std::string& t) {
    for (const std::size_t n : {kCount, std::size_t{1}, std::size_t{7}, std::size_t{37}}) {
      std::vector<float> shift(n);
      simd::range_noise_shifts({power.data(), noise.data(), z.data(), shift.data()}, n, floor,
                               pulse);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (shift[i] != expected[i] && wrong++ == 0) {
          UNSCOPED_INFO("target " << t << ", echo " << i << ": " << shift[i] << " m against "
                                  << expected[i]);
        }
      }
      CHECK(wrong == 0);
    }
  });
}
