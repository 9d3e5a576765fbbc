// PHYSICS.md section 3 (seed 000, 1.3.3; seed 001): detector noise, plus the shot noise of
// ambient sunlight on the target, and the 3-sigma threshold, per merged return.
#include <cmath>
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class ThresholdDetectionStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const auto& prm = b.params;
    const double sun = prm.weather.sun_irradiance_w_per_m2;
    const double noise2 = b.constants.noise_w * b.constants.noise_w;
    stage_kit::for_each_merged(b, [&](std::size_t beam, Pulse& p, int k) {
      double variance = noise2;
      if (sun > 0) {
        const Material* m = p.material ? b.materials.find(p.material) : nullptr;
        const double ambient = physics::ambient_power_w(sun, p.cos_sun, m ? m->reflectivity : 0.0,
                                                        prm.receiver_etendue_m2_sr);
        variance += physics::ambient_noise_variance_w2(ambient, prm.wavelength_nm, prm.bandwidth_hz,
                                                       prm.quantum_efficiency);
      }
      const double sigma = std::sqrt(variance);
      const double noise =
          stage_kit::rng_for(b, beam, StageId::kDetection).normal(static_cast<std::uint32_t>(k));
      const double out = p.power_w + sigma * noise;
      p.threshold_w = static_cast<float>(3.0 * sigma);
      if (out > 3.0 * sigma) {
        p.power_w = static_cast<float>(out);
      } else {
        p.kind = ReturnKind::kNone;
      }
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_detection_threshold(const StageSetup& /*setup*/) {
  return std::make_unique<ThresholdDetectionStage>();
}

}  // namespace lidaremu::core::stages
