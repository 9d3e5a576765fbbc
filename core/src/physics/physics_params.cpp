#include "lidaremu/core/physics_params.hpp"

#include <numbers>

namespace lidaremu::core {

PhysicsParams default_physics_params(const SensorModel& model) {
  PhysicsParams p;
  p.datasheet_range_m = model.optics.datasheet_range_m;
  p.datasheet_reflectivity = model.optics.datasheet_reflectivity;
  p.datasheet_detection_probability = model.optics.datasheet_detection_probability;
  p.beam_exit_radius_m = model.optics.beam_exit_radius_m;
  p.beam_divergence_rad = model.optics.beam_divergence_rad;
  p.range_noise_sigma_m = model.optics.range_noise_sigma_m;
  p.range_noise_pulse_m = model.optics.range_noise_pulse_m;
  p.optics = physics::BistaticOptics{.baseline_m = model.optics.bistatic_baseline_m,
                                     .full_overlap_m = model.optics.full_overlap_m,
                                     .tx_aperture_radius_m = model.optics.tx_aperture_radius_m,
                                     .rx_aperture_radius_m = model.optics.rx_aperture_radius_m,
                                     .tx_opening_rad = model.optics.tx_opening_rad,
                                     .rx_opening_rad = model.optics.rx_opening_rad};
  // The kernel core is the beam itself: its 1/e^2 half-angle is two standard deviations.
  p.bloom_core_sigma_deg = model.optics.beam_divergence_rad * 180.0 / std::numbers::pi / 2.0;
  return p;
}

}  // namespace lidaremu::core
