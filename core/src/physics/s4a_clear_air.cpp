// PHYSICS.md section 4a (seed 000, 1.3.2; Kim et al. 2001): two-way Beer-Lambert with the
// extinction of clear air or fog, from the meteorological visibility.
#include <array>
#include <cstddef>
#include <memory>
#include <span>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class ClearAirStage final : public Stage {
 public:
  // The candidates gathered (where each lies, its range and power), attenuated together in lanes.
  void run(const BlockContext& b) const override {
    const double extinction = b.constants.clear_extinction_per_m;
    constexpr std::size_t kCapacity = 256;
    std::array<std::size_t, kCapacity> pulse;
    std::array<float, kCapacity> range;
    std::array<float, kCapacity> power;
    std::size_t size = 0;
    const auto flush = [&] {
      simd::attenuate_two_way(extinction, std::span(range.data(), size),
                              std::span(power.data(), size));
      for (std::size_t i = 0; i < size; ++i) b.work.pulses.at(pulse[i]).power_w = power[i];
      size = 0;
    };
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      for (int k = 0; k < b.work.pulse_count[beam]; ++k) {
        const std::size_t index = b.work.pulses.index(beam, k);
        const PulseRef p = b.work.pulses.at(index);
        pulse[size] = index;
        range[size] = p.range_m;
        power[size] = p.power_w;
        if (++size == kCapacity) flush();
      }
    }
    flush();
  }
};

}  // namespace

std::unique_ptr<Stage> make_clear_air(const StageSetup& /*setup*/) {
  return std::make_unique<ClearAirStage>();
}

}  // namespace lidaremu::core::stages
