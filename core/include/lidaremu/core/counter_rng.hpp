#pragma once
// Counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11): every draw is a pure
// function of its key and counter, so output bytes do not depend on threads or scheduling.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace lidaremu::core {

// Where a draw sits in the run; PHYSICS.md section 10.
struct DrawKey {
  std::uint64_t seed = 0;
  std::uint32_t sensor = 0;
  std::uint32_t frame = 0;
  std::uint32_t beam = 0;
  std::uint16_t stage = 0;
};

class CounterRng {
 public:
  // Philox-4x32's multipliers and key increments (Salmon et al., table 2); the vector kernel
  // (simd.hpp) runs the same rounds in lanes.
  static constexpr std::uint32_t kMul0 = 0xD2511F53u;
  static constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
  static constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
  static constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;

  explicit CounterRng(const DrawKey& key) : key_(key) {}

  // Four independent 32-bit words for draw number `draw` of this key.
  [[nodiscard]] std::array<std::uint32_t, 4> words(std::uint32_t draw) const {
    std::array<std::uint32_t, 4> counter{
        key_.frame, key_.beam, (static_cast<std::uint32_t>(key_.stage) << 16) ^ key_.sensor, draw};
    std::array<std::uint32_t, 2> k{static_cast<std::uint32_t>(key_.seed),
                                   static_cast<std::uint32_t>(key_.seed >> 32)};
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = std::uint64_t{kMul0} * counter[0];
      const std::uint64_t p1 = std::uint64_t{kMul1} * counter[2];
      counter = {
          static_cast<std::uint32_t>(p1 >> 32) ^ counter[1] ^ k[0], static_cast<std::uint32_t>(p1),
          static_cast<std::uint32_t>(p0 >> 32) ^ counter[3] ^ k[1], static_cast<std::uint32_t>(p0)};
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    return counter;
  }

  // Uniform in the open interval (0, 1).
  [[nodiscard]] double uniform(std::uint32_t draw) const {
    const auto w = words(draw);
    return to_open_unit(w[0], w[1]);
  }

  // Poisson(mu) from consecutive draws starting at `draw` (advanced past what was used):
  // inversion of the CDF with one uniform below mu = 30, Hormann's transformed rejection (PTRS,
  // 1993) above. Both loops are bounded; the bounds are never reached in practice.
  [[nodiscard]] std::uint32_t poisson(double mu, std::uint32_t& draw) const {
    if (!(mu > 0)) return 0;
    if (mu < 30) {
      const double u = uniform(draw++);
      double term = std::exp(-mu);
      double cdf = term;
      std::uint32_t k = 0;
      while (u > cdf && k < 1000) {
        ++k;
        term *= mu / k;
        cdf += term;
      }
      return k;
    }
    const double smu = std::sqrt(mu);
    const double b = 0.931 + 2.53 * smu;
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    const double vr = 0.9277 - 3.6224 / (b - 2);
    const double log_mu = std::log(mu);
    for (int attempt = 0; attempt < 100; ++attempt) {
      const auto w = words(draw++);
      const double u = to_open_unit(w[0], w[1]) - 0.5;
      const double v = to_open_unit(w[2], w[3]);
      const double us = 0.5 - std::fabs(u);
      const double k = std::floor((2 * a / us + b) * u + mu + 0.43);
      if (us >= 0.07 && v <= vr) return static_cast<std::uint32_t>(k);
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
          -mu + k * log_mu - std::lgamma(k + 1)) {
        return static_cast<std::uint32_t>(k);
      }
    }
    return static_cast<std::uint32_t>(std::lround(mu));
  }

  // Standard normal by Box-Muller over one counter block.
  [[nodiscard]] double normal(std::uint32_t draw) const {
    const auto w = words(draw);
    const double u1 = to_open_unit(w[0], w[1]);
    const double u2 = to_open_unit(w[2], w[3]);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static double to_open_unit(std::uint32_t hi, std::uint32_t lo) {
    const std::uint64_t bits53 = ((std::uint64_t{hi} << 32 | lo) >> 11);
    return (static_cast<double>(bits53) + 0.5) * 0x1.0p-53;
  }

  DrawKey key_;
};

// Stage ids in draw keys: stable numbers, never reused, so adding a stage never shifts the
// random stream of another.
enum class StageId : std::uint16_t {
  kDetection = 1,
  kRangeNoise = 2,
  kRainCount = 3,
  kRainDrops = 4,
  kRainJitter = 5,
  kFalseAlarms = 6,
};

}  // namespace lidaremu::core
