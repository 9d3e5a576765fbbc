// The ideal chain's detector (PHYSICS.md section 3 without noise): every candidate is detected
// with the power the surface returns; candidates the detector cannot separate still merge.
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class IdealDetectionStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    stage_kit::for_each_merged(b, [](std::size_t, PulseRef p, int) { p.threshold_w = 0; });
  }
};

}  // namespace

std::unique_ptr<Stage> make_detection_ideal(const StageSetup& /*setup*/) {
  return std::make_unique<IdealDetectionStage>();
}

}  // namespace lidaremu::core::stages
