#pragma once
// Closed-form physics of PHYSICS.md sections 1-4a as pure functions. Stages (pipeline.hpp)
// apply them to blocks of beams; tests check them against the document's oracles.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "lidaremu/core/materials.hpp"

namespace lidaremu::core::physics {

// Section 1: cos(theta) between the way back to the detector (-i) and the normal n.
// Negative means a back face.
inline double cos_incidence(double ix, double iy, double iz, double nx, double ny, double nz) {
  return -(ix * nx + iy * ny + iz * nz);
}

// Section 2a, seed 000 eq. 1.2: diffuse share, cos(theta) / (2 r^2).
inline double ipsp_diffuse(double range_m, double cos_theta) {
  return cos_theta / (2.0 * range_m * range_m);
}

// Seed 000 eq. 1.4, theta and sigma in degrees as the seed writes it. The seed evaluates the
// lobe at the incidence angle although the mirror direction is 2 theta away from the detector;
// this model keeps the seed's form on purpose ("ipsp" is fidelity to the seed).
inline double ipsp_specular(double theta_deg, double sigma_deg) {
  const double ratio = theta_deg / sigma_deg;
  return std::exp(-2.0 * ratio * ratio) / (sigma_deg * std::sqrt(2.0 * std::numbers::pi));
}

// Seed 000 eq. 1.7: I = alpha I_D + beta I_R + gamma I_C, with I_C = 1.
inline double ipsp_returned_fraction(const Material& m, double range_m, double cos_theta) {
  const double theta_deg = std::acos(std::clamp(cos_theta, -1.0, 1.0)) * 180.0 / std::numbers::pi;
  return m.diffuse * ipsp_diffuse(range_m, cos_theta) +
         m.specular * ipsp_specular(theta_deg, m.lobe_width_deg) + m.retroreflective;
}

// Section 4a, seed 000 eq. 1.9: two-way Beer-Lambert, P(2R) = P(0) exp(-2 A R).
inline double two_way_transmission(double extinction_per_m, double range_m) {
  return std::exp(-2.0 * extinction_per_m * range_m);
}

// Section 4a: extinction from meteorological visibility (Kim et al. 2001), q by visibility.
inline double kim_size_exponent(double visibility_m) {
  const double v_km = visibility_m / 1000.0;
  if (v_km > 50) return 1.6;
  if (v_km > 6) return 1.3;
  if (v_km > 1) return 0.16 * v_km + 0.34;
  if (v_km > 0.5) return v_km - 0.5;
  return 0.0;
}
inline double extinction_from_visibility(double visibility_m, double wavelength_nm) {
  return 3.912 / visibility_m * std::pow(wavelength_nm / 550.0, -kim_size_exponent(visibility_m));
}

// Section 3, seed 000 eq. 1.10-1.13.
inline double detected_power(double returned_fraction, double peak_power_w, double efficiency) {
  return returned_fraction * peak_power_w * efficiency;
}
inline double noise_power(double nep_w_per_sqrt_hz, double bandwidth_hz) {
  return nep_w_per_sqrt_hz * std::sqrt(bandwidth_hz);
}
inline bool beats_threshold(double p_out, double p_noise) { return p_out > 3.0 * p_noise; }

// Probability that P_r + N(0, P_noise) beats 3 P_noise: Phi(P_r / P_noise - 3).
inline double detection_probability(double p_r, double p_noise) {
  return 0.5 * std::erfc(-(p_r / p_noise - 3.0) / std::numbers::sqrt2);
}

// Round to the format's range quantum; a range the field cannot hold is "no return" (0).
inline double quantise_range(double range_m, double unit_m, double max_m) {
  const double q = std::round(range_m / unit_m) * unit_m;
  return (q <= 0.0 || q > max_m) ? 0.0 : q;
}

// Calibrated reflectivity (Velodyne and Ouster convention): percent for diffuse targets, above
// 100 for retroreflectors. Derived from the received power as a real sensor does: the
// reflectivity of the Lambertian target at normal incidence that would return the same power.
// 0..1 maps to 0..100; 1..1000 (a retroreflector's gain) maps log-scaled to 101..255.
inline int calibrated_reflectivity(double lambertian_equivalent) {
  if (!(lambertian_equivalent > 0)) return 0;
  if (lambertian_equivalent <= 1.0)
    return static_cast<int>(std::lround(100.0 * lambertian_equivalent));
  const double decades = std::min(std::log10(lambertian_equivalent), 3.0);
  return 101 + static_cast<int>(std::lround(decades / 3.0 * 154.0));
}

// The Lambertian-equivalent reflectivity of a return: received fraction I, corrected for range
// and two-way transmission, in units of the seed's diffuse term at normal incidence.
inline double lambertian_equivalent(double returned_fraction, double range_m, double transmission) {
  return returned_fraction / transmission * 2.0 * range_m * range_m;
}

}  // namespace lidaremu::core::physics
