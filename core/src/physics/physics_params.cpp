#include "lidaremu/core/physics_params.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace lidaremu::core {

PhysicsParams default_physics_params(const SensorModel& model) {
  PhysicsParams p;
  p.datasheet_range_m = model.optics.datasheet_range_m;
  p.datasheet_reflectivity = model.optics.datasheet_reflectivity;
  p.datasheet_detection_probability = model.optics.datasheet_detection_probability;
  p.datasheet_sun_w_per_m2 = model.optics.datasheet_sun_w_per_m2;
  p.receiver.aperture_m = model.optics.rx_aperture_m;
  p.receiver.fov_rad = model.optics.rx_fov_rad;
  p.receiver.filter_nm = model.optics.optical_filter_nm;
  p.receiver.knee_w = model.optics.ambient_knee_w;
  p.beam_exit_radius_m = model.optics.beam_exit_radius_m;
  p.beam_divergence_rad = model.optics.beam_divergence_rad;
  p.range_noise_sigma_m = model.optics.range_noise_sigma_m;
  p.range_noise_pulse_m = model.optics.range_noise_pulse_m;
  // Echoes are searched for as far as the format can carry a range, and at most twice the
  // datasheet range (beyond it nothing real returns; Ouster's 20-bit field reaches 1 km).
  p.range_gate_m = std::min(model.max_range_m, 2.0 * model.optics.datasheet_range_m);
  p.optics = physics::BistaticOptics{.baseline_m = model.optics.bistatic_baseline_m,
                                     .full_overlap_m = model.optics.full_overlap_m,
                                     .tx_aperture_radius_m = model.optics.tx_aperture_radius_m,
                                     .rx_aperture_radius_m = model.optics.rx_aperture_radius_m,
                                     .tx_opening_rad = model.optics.tx_opening_rad,
                                     .rx_opening_rad = model.optics.rx_opening_rad};
  // The kernel core is the beam itself: its 1/e^2 half-angle is two standard deviations.
  // The kernel's core is the beam itself: its 1/e^2 half-angle is two standard deviations, and
  // the beam is elliptic (horizontal / vertical divergence = beam_aspect).
  const double half_angle_deg = model.optics.beam_divergence_rad * 180.0 / std::numbers::pi;
  const double aspect = std::sqrt(model.optics.beam_aspect);
  p.bloom_core_sigma_h_deg = half_angle_deg * aspect / 2.0;
  p.bloom_core_sigma_v_deg = half_angle_deg / aspect / 2.0;
  return p;
}

}  // namespace lidaremu::core
