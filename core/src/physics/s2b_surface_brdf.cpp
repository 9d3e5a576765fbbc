// PHYSICS.md section 2b (seeds 003, 001, 002), the default surface: the range equation with a
// BRDF, the system constant from the datasheet, the crossover function, and each ray's share of
// the beam (a target smaller than the footprint returns only the rays that hit it: A_TA / A_T).
#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <numbers>

#include "lidaremu/core/simd.hpp"
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
    // Bistatic optics (the crossover's lens-shaped overlap) and retroreflectors (the entrance
    // angle) a candidate at a time; the rest gathered and computed together, in lanes.
    const bool coaxial = !(b.params.optics.baseline_m > 0);
    const std::array<double, 2> weights{stage_kit::ray_weight(0, rays),
                                        stage_kit::ray_weight(1, rays)};
    Gathered g;
    const auto flush = [&] {
      simd::surface_returns({g.range.data(), g.cos_incidence.data(), g.gain.data(),
                             g.reflectivity.data(), g.fresnel_f0.data(), g.roughness.data(),
                             g.ray_weight.data(), g.lambertian.data(), g.power.data()},
                            g.size, {b.constants.system_constant, b.params.optics.full_overlap_m});
      for (std::size_t i = 0; i < g.size; ++i) {
        const PulseRef p = b.work.pulses.at(g.pulse[i]);
        p.lambertian = g.lambertian[i];
        p.power_w = g.power[i];
      }
      g.size = 0;
    };
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      for (int k = 0; k < b.work.pulse_count[beam]; ++k) {
        const std::size_t index = b.work.pulses.index(beam, k);
        const PulseRef p = b.work.pulses.at(index);
        if (p.kind == ReturnKind::kNone) continue;
        const Material* m = b.materials.find(p.material);
        if (!m) continue;
        if (!coaxial || m->retroreflective != 0) {
          one_by_one(b, p, *m, rays);
          continue;
        }
        const std::size_t i = g.size++;
        g.pulse[i] = index;
        g.range[i] = p.range_m;
        g.cos_incidence[i] = p.cos_incidence;
        g.gain[i] = p.gain;
        g.reflectivity[i] = m->reflectivity;
        g.fresnel_f0[i] = m->fresnel_f0;
        g.roughness[i] = m->roughness;
        g.ray_weight[i] = weights[p.ray == 0 ? 0 : 1];
        if (g.size == Gathered::kCapacity) flush();
      }
    }
    flush();
  }
  [[nodiscard]] double system_constant() const override { return system_constant_; }

 private:
  // Candidates gathered for the lanes, with where each lies.
  struct Gathered {
    static constexpr std::size_t kCapacity = 256;
    std::size_t size = 0;
    std::array<std::size_t, kCapacity> pulse;
    std::array<float, kCapacity> range, cos_incidence, gain, lambertian, power;
    std::array<double, kCapacity> reflectivity, fresnel_f0, roughness, ray_weight;
  };

  // The scalar expressions (PHYSICS.md 2b), for what the lanes do not take.
  static void one_by_one(const BlockContext& b, const PulseRef& p, const Material& m, int rays) {
    const double baseline = b.params.optics.baseline_m;
    const double range = p.range_m;
    const double observation = baseline > 0 ? std::atan(baseline / range) : 0.0;
    const double brdf = physics::material_brdf(m, p.cos_incidence, observation) * p.gain;
    p.lambertian = static_cast<float>(brdf * std::numbers::pi);
    p.power_w =
        static_cast<float>(physics::received_power(b.constants.system_constant, brdf, range, 1.0,
                                                   physics::crossover(b.params.optics, range)) *
                           stage_kit::ray_weight(p.ray, rays));
  }

  double system_constant_;
};

}  // namespace

std::unique_ptr<Stage> make_surface_brdf(const StageSetup& setup) {
  return std::make_unique<BrdfSurfaceStage>(setup.params);
}

}  // namespace lidaremu::core::stages
