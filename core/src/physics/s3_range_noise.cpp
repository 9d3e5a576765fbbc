// PHYSICS.md sections 0 and 3 (seed 002, II-D): Gaussian range noise on every reported echo,
// growing as the echo weakens: sigma = max(floor, dR / sqrt(2 SNR)), SNR the detected power over
// the noise sigma it was detected against.
#include <array>
#include <memory>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class RangeNoiseStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const double floor = b.params.range_noise_sigma_m;
    const double pulse_width = b.params.range_noise_pulse_m;
    const DrawKey key = stage_kit::key_for(b, StageId::kRangeNoise);
    // Echo e of a beam takes draw e of the beam's stream.
    stage_kit::RunNormals z;
    // The run's echoes in the order of their draws, their noise computed together in SIMD lanes.
    constexpr std::size_t kEchoes = stage_kit::kDrawRun * FrameReturns::kMaxEchoes;
    std::array<std::size_t, kEchoes> pulse;  // index in the planes
    std::array<float, kEchoes> power_w;
    std::array<float, kEchoes> noise_w;
    std::array<float, kEchoes> shift_m;
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      z.clear();
      std::size_t n = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
        for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
          if (pick[e] < 0) continue;
          z.ask(beam, e);
          pulse[n] = b.work.pulses.index(beam, pick[e]);
          const PulseRef p = b.work.pulses.at(pulse[n]);
          power_w[n] = p.power_w;
          noise_w[n] = p.noise_w;
          ++n;
        }
      }
      z.draw_all(key);
      simd::range_noise_shifts({power_w.data(), noise_w.data(), z.drawn().data(), shift_m.data()},
                               n, floor, pulse_width);
      // Added one by one, in order: two echoes may pick one candidate (no separation asked).
      for (std::size_t i = 0; i < n; ++i) b.work.pulses.at(pulse[i]).range_m += shift_m[i];
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_range_noise(const StageSetup& /*setup*/) {
  return std::make_unique<RangeNoiseStage>();
}

}  // namespace lidaremu::core::stages
