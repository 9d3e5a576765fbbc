// PHYSICS.md section 9 (seed 001, II-D2): rows from depth images lie on the pixel's direction,
// not the beam's; move the centre ray's hit along the true beam direction onto the surface's
// plane.
#include <cmath>
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class RasterCorrectionStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    stage_kit::for_each_pulse(b, [&](std::size_t beam, PulseRef pulse) {
      if (pulse.ray != 0) return;
      const std::size_t i = h.hit(beam, 0, 0);
      const Eigen::Vector3d p = stage_kit::hit_point(h, i);
      const Eigen::Vector3d n = stage_kit::hit_normal(h, i);
      const auto column = static_cast<std::uint32_t>(beam / h.shape.channels);
      const auto channel = static_cast<std::uint16_t>(beam % h.shape.channels);
      const Eigen::Vector3d v = b.geometry.ray_in_frame(h.frame_number, column, channel).direction;
      const double r = p.norm();
      const double corrected = physics::raster_corrected_range(p.dot(n) / r, v.dot(n), r);
      if (!(corrected > 0) || !std::isfinite(corrected)) return;
      pulse.range_m = static_cast<float>(corrected);
      pulse.cos_incidence = static_cast<float>(std::max(-v.dot(n), 1e-6));
    });
  }
};

}  // namespace

std::unique_ptr<Stage> make_raster_correction(const StageSetup& /*setup*/) {
  return std::make_unique<RasterCorrectionStage>();
}

}  // namespace lidaremu::core::stages
