// PHYSICS.md sections 0 and 3 (seed 002, II-D): Gaussian range noise on every reported echo,
// growing as the echo weakens: sigma = max(floor, dR / sqrt(2 SNR)), SNR the detected power over
// the noise sigma it was detected against.
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class RangeNoiseStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const double floor = b.params.range_noise_sigma_m;
    const double pulse = b.params.range_noise_pulse_m;
    const DrawKey key = stage_kit::key_for(b, StageId::kRangeNoise);
    // Echo e of a beam takes draw e of the beam's stream.
    stage_kit::RunNormals z;
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      z.clear();
      for (std::size_t beam = first; beam < last; ++beam) {
        const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
        for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
          if (pick[e] >= 0) z.ask(beam, e);
        }
      }
      z.draw_all(key);
      for (std::size_t beam = first; beam < last; ++beam) {
        const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
        const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
        for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
          if (pick[e] < 0) continue;
          PulseRef p = pulses[pick[e]];
          const double sigma = physics::range_noise_sigma_m(p.power_w, p.noise_w, floor, pulse);
          p.range_m += static_cast<float>(sigma * z.take());
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_range_noise(const StageSetup& /*setup*/) {
  return std::make_unique<RangeNoiseStage>();
}

}  // namespace lidaremu::core::stages
