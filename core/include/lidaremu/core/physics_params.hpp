#pragma once
// Every number the physics reads, with the datasheet defaults of each sensor model. Config
// (`physics_params` in a sensor table) overrides them key by key, within the ranges the settings
// loader checks.
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

struct PhysicsParams {
  // Seed 000's detector (the "ipsp" surface model reads peak power and efficiency).
  double peak_power_w = 100.0;
  double detector_efficiency = 1e-3;
  double nep_w_per_sqrt_hz = 6.6e-12;
  double bandwidth_hz = 1e9;
  double wavelength_nm = 905.0;
  // The receiver, for ambient light (PHYSICS.md 0 and 3): aperture, one channel's field of view,
  // filter, efficiencies, the ambient power at which its shot noise equals the detector's noise.
  physics::Receiver receiver;
  // Datasheet calibration of the range equation (PHYSICS.md 2b).
  double datasheet_range_m = 100.0;
  double datasheet_reflectivity = 0.10;
  double datasheet_detection_probability = 0.5;  // with which the datasheet target is detected
  double datasheet_sun_w_per_m2 = 0;  // in sunlight this strong (Ouster: 100 klx, full sun)
  // Beam and optics.
  double beam_exit_radius_m = 0.005;
  double beam_divergence_rad = 0.001;  // half-angle Theta of the cone
  physics::BistaticOptics optics;      // baseline 0: coaxial
  double pulse_half_width_ns = 5.0;    // tau_H of the sin^2 pulse
  // Detection and echoes.
  double range_noise_sigma_m = 0.01;   // floor: the range noise of a strong echo
  double range_noise_pulse_m = 0.45;   // dR of sigma_R = dR / sqrt(2 SNR), per model
  double range_resolution_m = 0.10;    // pulses closer than this merge (seed 000, 1.3.5)
  double echo_min_separation_m = 1.0;  // a further echo must lie this far from the first
  // Noise false alarms per beam and measurement, over the range gate (OS1 datasheet: 1 in 10,000);
  // they set the threshold unless threshold_sigmas_set is given (seed 000: 3).
  double false_alarm_rate = 1e-4;
  double range_gate_m = 131.0;
  double threshold_sigmas_set = 0;
  double capability_max_range_m = 50.0;  // seed 002, Ouster OS0-128
  double capability_max_reflectance_limit = 0.8;
  double sun_elevation_deg = 90.0;  // sun direction for ambient light
  double sun_azimuth_deg = 0.0;
  // Rain (seed 004).
  double rain_drop_reflectance = physics::kWaterFresnelReflectance;  // per pi sr, as LISA
  double rain_min_range_m = 1.0;  // no drop returns closer than this (receiver blind zone)
  // Each drop crossed delays the echo by an independent +-this (a random walk: sigma x sqrt(N)).
  double rain_range_jitter_m_per_drop = 5e-4;
  // Blooming kernel (seed 001).
  double bloom_core_sigma_h_deg = 0.05;  // the kernel's core across (azimuth)...
  double bloom_core_sigma_v_deg = 0.05;  // ...and along the column (elevation): the beam's shape
  double bloom_skirt_level = 1e-3;
  double bloom_skirt_decay_deg = 0.434;
  double bloom_extent_deg = 3.0;
  // Multi-bounce: largest angle at which a returning ray still enters the receiver (0 = the
  // model's column spacing).
  double multibounce_resolution_deg = 0.0;
  // The weather at start; Control messages replace it at run time.
  Weather weather;

  [[nodiscard]] double noise_power_w() const {
    return physics::noise_power(nep_w_per_sqrt_hz, bandwidth_hz);
  }
  // The detection threshold in noise sigmas: as set, or (0) from the false-alarm rate over the
  // range gate's cells of one range resolution each.
  [[nodiscard]] double threshold_sigmas() const {
    if (threshold_sigmas_set > 0) return threshold_sigmas_set;
    return physics::threshold_for_false_alarm_rate(false_alarm_rate,
                                                   range_gate_m / range_resolution_m);
  }
  [[nodiscard]] double threshold_w() const { return threshold_sigmas() * noise_power_w(); }
  bool operator==(const PhysicsParams&) const = default;
};

// The datasheet figures of a sensor model (its row: core/src/<family>/models.cpp) as physics
// defaults.
PhysicsParams default_physics_params(const SensorModel& model);

}  // namespace lidaremu::core
