// PHYSICS.md section 2a (seed 000, 1.3.1): the IPSP mixture, kept for fidelity to the seed (no
// 1/r^2 on its specular and retroreflective terms).
#include <memory>
#include <numbers>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class IpspSurfaceStage final : public Stage {
 public:
  // The seed's diffuse term, cos / (2 r^2) * P_peak * efficiency, is K Gamma / (pi r^2) with
  // this K: the power scale the detector and the reflectivity estimate share.
  explicit IpspSurfaceStage(const PhysicsParams& p)
      : system_constant_(std::numbers::pi * p.peak_power_w * p.detector_efficiency / 2.0) {}

  void run(const BlockContext& b) const override {
    const int rays = stage_kit::rays_used(b);
    stage_kit::for_each_pulse(b, [&](std::size_t, PulseRef p) {
      if (p.kind == ReturnKind::kNone) return;
      const Material* m = b.materials.find(p.material);
      if (!m) return;
      const double fraction =
          physics::ipsp_returned_fraction(*m, p.range_m, p.cos_incidence) * p.gain;
      p.lambertian = static_cast<float>(physics::lambertian_equivalent(fraction, p.range_m, 1.0));
      p.power_w = static_cast<float>(
          physics::detected_power(fraction, b.params.peak_power_w, b.params.detector_efficiency) *
          stage_kit::ray_weight(p.ray, rays));
    });
  }
  [[nodiscard]] double system_constant() const override { return system_constant_; }

 private:
  double system_constant_;
};

}  // namespace

std::unique_ptr<Stage> make_surface_ipsp(const StageSetup& setup) {
  return std::make_unique<IpspSurfaceStage>(setup.params);
}

}  // namespace lidaremu::core::stages
