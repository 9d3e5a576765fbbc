// PHYSICS.md section 4a (seed 000, 1.3.2; Kim et al. 2001): two-way Beer-Lambert with the
// extinction of clear air or fog, from the meteorological visibility.
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class ClearAirStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const double extinction = b.constants.clear_extinction_per_m;
    stage_kit::for_each_pulse(b, [&](std::size_t, PulseRef p) {
      p.power_w *= static_cast<float>(physics::two_way_transmission(extinction, p.range_m));
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_clear_air(const StageSetup& /*setup*/) {
  return std::make_unique<ClearAirStage>();
}

}  // namespace lidaremu::core::stages
