// PHYSICS.md sections 0 and 4a (Hahner et al., "Fog Simulation on Real LiDAR Point Clouds", ICCV
// 2021; seed 003's range equation for soft targets): the fog volume scatters the pulse back. Its
// return, the pulse convolved with beta xi T^2 / R^2 over range, peaks near the sensor; at low
// visibility it beats the threshold there and a beam reports the fog itself (kind kFog), unless a
// target stands closer. Extinction is atmosphere.clear_air's.
#include <algorithm>
#include <cmath>
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class FogStage final : public Stage {
 public:
  // The fog's return depends on the range only: its peak is found once per frame, on a 5 cm grid
  // out to the range gate (or where extinction has taken it), after a bound rules out clear air.
  void begin_frame(const FrameHits& /*hits*/, const FrameConstants& c, const PhysicsParams& p,
                   const DrawKey& /*key*/) override {
    peak_w_ = 0;
    peak_range_m_ = 0;
    const double beta = physics::fog_backscatter_per_m_sr(p.weather.visibility_m);
    const double tau_h = p.pulse_half_width_ns * 1e-9;
    const double half_pulse = physics::kSpeedOfLight * tau_h / 2.0;
    const auto crossover = [&](double r) { return physics::crossover(p.optics, r); };
    const double start = std::max(min_range_m_, 0.05);
    const double end = std::min(p.range_gate_m, start + 10.0 / c.clear_extinction_per_m);
    // Far from the sensor the fog is a hard target of beta c tau_H / 2: bound its return by the
    // largest xi / R^2 along the beam.
    double geometry_max = 0;
    const auto bound_steps = static_cast<int>(std::ceil(std::log(end / start) / std::log(1.05)));
    for (int i = 0; i <= bound_steps; ++i) {
      const double r = start * std::pow(1.05, i);
      geometry_max = std::max(geometry_max, crossover(r) / (r * r));
    }
    if (c.system_constant * beta * half_pulse * geometry_max * 1.5 <
        kNegligibleSigmas * c.noise_w) {
      return;
    }
    const auto steps = static_cast<int>((end - start) / kStepM);
    for (int i = 0; i <= steps; ++i) {
      const double r = start + i * kStepM;
      const double w = physics::fog_return_w(c.system_constant, beta, c.clear_extinction_per_m, r,
                                             tau_h, crossover, start);
      if (w > peak_w_) peak_w_ = w, peak_range_m_ = r;
    }
    lambertian_ = static_cast<float>(std::numbers::pi * beta * half_pulse);
  }

  void run(const BlockContext& b) const override {
    if (!(peak_w_ >= kNegligibleSigmas * b.constants.noise_w)) return;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
      bool hidden = false;  // a target closer than the fog's peak takes the pulse first
      for (int k = 0; k < b.work.pulse_count[beam]; ++k) {
        hidden |= pulses[k].kind != ReturnKind::kNone && pulses[k].range_m < peak_range_m_;
      }
      if (hidden) continue;
      Pulse fog;
      fog.range_m = static_cast<float>(peak_range_m_);
      fog.power_w = static_cast<float>(peak_w_);
      fog.lambertian = lambertian_;
      fog.ambient_w = b.work.ambient_w[beam];
      fog.kind = ReturnKind::kFog;
      stage_kit::add_pulse(b, beam, fog);
    }
  }

  explicit FogStage(double min_range_m) : min_range_m_(min_range_m) {}

 private:
  static constexpr double kStepM = 0.05;
  // A fog return this far under the noise never lifts a beam over the threshold.
  static constexpr double kNegligibleSigmas = 0.3;
  double min_range_m_;
  double peak_w_ = 0;
  double peak_range_m_ = 0;
  float lambertian_ = 0;
};

}  // namespace

std::unique_ptr<Stage> make_fog(const StageSetup& setup) {
  return std::make_unique<FogStage>(setup.pattern.model->min_range_m);
}

}  // namespace lidaremu::core::stages
