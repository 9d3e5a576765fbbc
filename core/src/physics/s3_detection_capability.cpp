// PHYSICS.md section 3 (seed 002, II-D): the capability (reflectance-limit) model, detected iff
// R_L(d) <= Gamma(theta); no noise.
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class CapabilityDetectionStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    stage_kit::for_each_merged(b, [&](std::size_t, PulseRef p, int) {
      p.threshold_w = static_cast<float>(b.constants.threshold_w);
      p.noise_w = static_cast<float>(b.constants.noise_w);
      if (!physics::capability_detects(p.lambertian, p.range_m, b.params.capability_max_range_m,
                                       b.params.capability_max_reflectance_limit)) {
        p.kind = ReturnKind::kNone;
      }
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_detection_capability(const StageSetup& /*setup*/) {
  return std::make_unique<CapabilityDetectionStage>();
}

}  // namespace lidaremu::core::stages
