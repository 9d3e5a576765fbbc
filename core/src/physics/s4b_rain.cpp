// PHYSICS.md section 4b (seed 004 section 3.4, seed 003): Poisson drops in the beam's cone,
// two-way extinction from the seed's table, drop returns (water's Fresnel backscatter, each drop's
// share of the beam) as false positives, range jitter as a random walk over the drops crossed.
// Every drop is counted (for the jitter); only those that could beat the noise are placed one by
// one, from the frame's drop table, with a diameter D_t(r) + Exp(Lambda) (memoryless).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <span>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

constexpr int kMaxDropPulses = 3;

// The smallest drop that returns more than the noise sigma from range r: the drop's share of the
// footprint (D^2/4)/w^2 times its backscatter R / pi, through the range equation.
double detectable_drop_diameter_m(const FrameConstants& c, const PhysicsParams& p, double r) {
  const double w = c.beam.radius_m(r);
  const double transmission =
      physics::two_way_transmission(c.rain_extinction_per_m + c.clear_extinction_per_m, r);
  const double gain = c.system_constant * transmission * physics::crossover(p.optics, r) / (r * r);
  if (!(gain > 0)) return std::numeric_limits<double>::infinity();
  if (!(p.rain_drop_reflectance > 0)) return std::numeric_limits<double>::infinity();
  return std::sqrt(c.noise_w * 4.0 * w * w * std::numbers::pi / (p.rain_drop_reflectance * gain));
}

// Seed 004's Poisson drops, thinned to those that could beat the noise (a drop of diameter D at
// range r returns more than 1 sigma only if D exceeds D_t(r), which grows fast with r): the
// expected number of such drops in the beam, cumulated from rain_min_range_m outwards. Built
// once per frame from the rain rate; beyond the table no drop can be detected.
struct RainDropTable {
  static constexpr int kSteps = 300;
  double start_m = 0;
  // A power of two: dividing by it is an exact multiply, which the compiler then uses.
  static constexpr double kStepM = 0.5;
  std::array<double, kSteps + 1> cumulative{};

  void build(const FrameConstants& c, const PhysicsParams& p) {
    start_m = std::max(p.rain_min_range_m, 0.05);
    cumulative.fill(0.0);
    if (!(c.rain_drops_per_m3 > 0)) return;
    // Drops per metre of beam that could be detected: N pi w(r)^2 P(D > D_t(r)).
    const auto density = [&](double r) {
      const double w = c.beam.radius_m(r);
      const double d_t_mm = detectable_drop_diameter_m(c, p, r) * 1e3;
      return c.rain_drops_per_m3 * std::numbers::pi * w * w *
             std::exp(-c.rain_slope_per_mm * d_t_mm);
    };
    double previous = density(start_m);
    for (int i = 1; i <= kSteps; ++i) {
      const double here = density(start_m + i * kStepM);
      cumulative[static_cast<std::size_t>(i)] =
          cumulative[static_cast<std::size_t>(i - 1)] + 0.5 * (previous + here) * kStepM;
      previous = here;
    }
  }

  // Every drop and the detectable ones within each beam's reach, as simd::rain_drop_means reads
  // them: the cone's volume times the density, and this table between its steps.
  [[nodiscard]] simd::RainDrops in_lanes(const FrameConstants& c) const {
    return {.drops_per_m3 = c.rain_drops_per_m3,
            .exit_radius_m = c.beam.exit_radius_m,
            .tan_half_angle = c.beam.tan_half_angle,
            .cumulative = cumulative.data(),
            .steps = kSteps,
            .start_m = start_m,
            .step_m = kStepM};
  }

  // The range where the cumulated expectation reaches `expected` (the inverse of the table's
  // reading in simd::rain_drop_means).
  [[nodiscard]] double range_at(double expected) const {
    const auto above = std::upper_bound(cumulative.begin(), cumulative.end(), expected);
    if (above == cumulative.begin()) return start_m;
    if (above == cumulative.end()) return start_m + kSteps * kStepM;
    const auto i = static_cast<std::size_t>(above - cumulative.begin()) - 1;
    const double span = cumulative[i + 1] - cumulative[i];
    const double f = span > 0 ? (expected - cumulative[i]) / span : 0.0;
    return start_m + (static_cast<double>(i) + f) * kStepM;
  }
};

class RainStage final : public Stage {
 public:
  void begin_frame(const FrameHits& /*hits*/, const FrameConstants& c, const PhysicsParams& p,
                   const DrawKey& /*key*/) override {
    drops_.build(c, p);
  }

  void run(const BlockContext& b) const override {
    const auto& c = b.constants;
    if (!(c.rain_drops_per_m3 > 0)) return;
    const auto& prm = b.params;
    const DrawKey count_key = stage_kit::key_for(b, StageId::kRainCount);
    const DrawKey jitter_key = stage_kit::key_for(b, StageId::kRainJitter);
    // Per beam of a run: the expected drops (detectable ones, the others), their counts (draws 0
    // and 1 of the count stream), and a jitter draw per candidate (draw k for candidate k).
    const simd::RainDrops drops = drops_.in_lanes(c);
    std::array<double, stage_kit::kDrawRun> reach_m;
    std::array<float, stage_kit::kDrawRun> mu_detectable;
    std::array<float, stage_kit::kDrawRun> mu_rest;
    std::array<std::uint32_t, stage_kit::kDrawRun> detectable;
    std::array<std::uint32_t, stage_kit::kDrawRun> rest;
    stage_kit::RunNormals jitter;
    // The run's candidates in order (beam, slot), their ranges and their powers through the
    // rain's two-way extinction, computed together in SIMD lanes before any drop is added: a
    // beam's drops may replace its weakest candidate, judged on the attenuated powers.
    std::array<float, stage_kit::RunNormals::kCapacity> range_m;
    std::array<float, stage_kit::RunNormals::kCapacity> power_w;
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      const std::size_t n = last - first;
      const auto first_beam = static_cast<std::uint32_t>(first);
      jitter.clear();
      std::size_t candidates = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
        const int targets = b.work.pulse_count[beam];
        double reach = 0;
        for (int k = 0; k < targets; ++k) {
          jitter.ask(beam, k);
          const PulseRef p = pulses[k];
          range_m[candidates] = p.range_m;
          power_w[candidates] = p.power_w;
          ++candidates;
          reach = std::max<double>(reach, p.range_m);
        }
        if (reach <= 0) reach = prm.datasheet_range_m;  // open sky: drops up to the sensor's reach
        reach_m[beam - first] = reach;
      }
      simd::rain_drop_means(drops, std::span(reach_m.data(), n), std::span(mu_detectable.data(), n),
                            std::span(mu_rest.data(), n));
      simd::poissons(count_key, first_beam, 0, std::span(mu_detectable.data(), n),
                     std::span(detectable.data(), n));
      simd::poissons(count_key, first_beam, 1, std::span(mu_rest.data(), n),
                     std::span(rest.data(), n));
      jitter.draw_all(jitter_key);
      simd::attenuate_two_way(c.rain_extinction_per_m, std::span(range_m.data(), candidates),
                              std::span(power_w.data(), candidates));
      std::size_t candidate = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        const std::size_t i = beam - first;
        const std::uint32_t crossed = detectable[i] + rest[i];
        b.work.drops_crossed[beam] =
            static_cast<std::uint16_t>(std::min<std::uint32_t>(crossed, 65535));
        // Extinction and jitter of what the beam hit.
        const double sigma = prm.rain_range_jitter_m_per_drop * std::sqrt(double(crossed));
        const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
        for (int k = 0; k < b.work.pulse_count[beam]; ++k) {
          PulseRef p = pulses[k];
          p.power_w = power_w[candidate++];
          p.range_m += static_cast<float>(sigma * jitter.take());
        }
        add_drops(b, beam, detectable[i], mu_detectable[i]);
      }
    });
  }

 private:
  // The detectable drops of a beam as returns, each placed from the frame's drop table.
  void add_drops(const BlockContext& b, std::size_t beam, std::uint32_t detectable,
                 double mu_detectable) const {
    const auto& c = b.constants;
    const auto& prm = b.params;
    const CounterRng drop_rng = stage_kit::rng_for(b, beam, StageId::kRainDrops);
    for (std::uint32_t d = 0; d < std::min<std::uint32_t>(detectable, kMaxDropPulses); ++d) {
      const auto u = drop_rng.words(d);
      const double u_position = (u[0] + 0.5) * 0x1.0p-32;
      const double u_size = (u[1] + 0.5) * 0x1.0p-32;
      const double r = drops_.range_at(u_position * mu_detectable);
      const double diameter_m =
          detectable_drop_diameter_m(c, prm, r) - std::log(u_size) / c.rain_slope_per_mm * 1e-3;
      const double share =
          physics::drop_brdf_area_ratio(diameter_m, c.beam.radius_m(r), prm.rain_drop_reflectance);
      Pulse drop;
      drop.range_m = static_cast<float>(r);
      drop.power_w = static_cast<float>(physics::received_power(
          c.system_constant, share, r,
          physics::two_way_transmission(c.rain_extinction_per_m + c.clear_extinction_per_m, r),
          physics::crossover(prm.optics, r)));
      drop.lambertian = static_cast<float>(share * std::numbers::pi);
      drop.kind = ReturnKind::kRainDrop;
      stage_kit::add_pulse(b, beam, drop);
    }
  }

  RainDropTable drops_;
};

}  // namespace

std::unique_ptr<Stage> make_rain(const StageSetup& /*setup*/) {
  return std::make_unique<RainStage>();
}

}  // namespace lidaremu::core::stages
