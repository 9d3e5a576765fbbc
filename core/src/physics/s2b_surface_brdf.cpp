// PHYSICS.md section 2b (seeds 003, 001, 002), the default surface: the range equation with a
// BRDF, the system constant from the datasheet, the crossover function, and each ray's share of
// the beam (a target smaller than the footprint returns only the rays that hit it: A_TA / A_T).
#include <cmath>
#include <memory>
#include <numbers>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class BrdfSurfaceStage final : public Stage {
 public:
  // Datasheet calibration: a Lambertian target of the datasheet reflectivity at the datasheet
  // range, at normal incidence in clear air, facing the datasheet's sun (Ouster: 100 klx), is
  // detected with the datasheet's probability.
  explicit BrdfSurfaceStage(const PhysicsParams& p)
      : system_constant_(physics::system_constant_from_datasheet(
            physics::power_detected_with_probability(
                p.noise_power_w() *
                    p.receiver.noise_factor(p.receiver.ambient_w(p.datasheet_sun_w_per_m2, 1.0, 0.0,
                                                                 p.datasheet_reflectivity)),
                p.threshold_sigmas(), p.datasheet_detection_probability),
            p.datasheet_range_m, p.datasheet_reflectivity,
            physics::two_way_transmission(physics::extinction_from_visibility(
                                              stage_kit::kCalibrationVisibilityM, p.wavelength_nm),
                                          p.datasheet_range_m),
            physics::crossover(p.optics, p.datasheet_range_m))) {}

  void run(const BlockContext& b) const override {
    const int rays = stage_kit::rays_used(b);
    const double baseline = b.params.optics.baseline_m;
    stage_kit::for_each_pulse(b, [&](std::size_t, PulseRef p) {
      if (p.kind == ReturnKind::kNone) return;
      const Material* m = b.materials.find(p.material);
      if (!m) return;
      const double range = p.range_m;
      const double observation = baseline > 0 ? std::atan(baseline / range) : 0.0;
      const double brdf = physics::material_brdf(*m, p.cos_incidence, observation) * p.gain;
      p.lambertian = static_cast<float>(brdf * std::numbers::pi);
      p.power_w =
          static_cast<float>(physics::received_power(b.constants.system_constant, brdf, range, 1.0,
                                                     physics::crossover(b.params.optics, range)) *
                             stage_kit::ray_weight(p.ray, rays));
    });
  }
  [[nodiscard]] double system_constant() const override { return system_constant_; }

 private:
  double system_constant_;
};

}  // namespace

std::unique_ptr<Stage> make_surface_brdf(const StageSetup& setup) {
  return std::make_unique<BrdfSurfaceStage>(setup.params);
}

}  // namespace lidaremu::core::stages
