#pragma once
// Closed-form physics of PHYSICS.md as pure functions, named after the seed that gives each.
// Stages (pipeline.cpp) apply them to blocks of beams; tests check them against the oracles.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
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

// The standard normal quantile Phi^-1(p), 0 < p < 1, by bisection on erfc (start-up only).
inline double normal_quantile(double p) {
  double lo = -40.0;
  double hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::numbers::sqrt2) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The mean received power a target needs to be detected with probability p against Gaussian
// noise of sigma P_noise and a threshold of k sigma: P_noise (k + Phi^-1(p)).
inline double power_detected_with_probability(double p_noise, double threshold_sigmas,
                                              double probability) {
  return p_noise * (threshold_sigmas + normal_quantile(probability));
}

// The threshold, in noise sigmas, that gives `false_alarm_rate` noise detections per beam over a
// range gate of `independent_samples` range cells (PHYSICS.md 0): each cell fires with
// probability Phi(-k), so k = Phi^-1(1 - rate / cells). One in 10,000 (the OS1 datasheet's
// false-positive rate) over 1,310 cells of 10 cm (a VLP-16's 131 m) gives k = 5.25.
inline double threshold_for_false_alarm_rate(double false_alarm_rate, double independent_samples) {
  return normal_quantile(1.0 - false_alarm_rate / std::max(independent_samples, 1.0));
}

// Probability that P_r + N(0, P_noise) beats 3 P_noise: Phi(P_r / P_noise - 3).
inline double detection_probability(double p_r, double p_noise) {
  return 0.5 * std::erfc(-(p_r / p_noise - 3.0) / std::numbers::sqrt2);
}

// Range noise of an echo (PHYSICS.md 0): sigma_R = dR / sqrt(2 SNR) with a floor, SNR = detected
// power / noise sigma. With dR = 0.45 m and a 1.5 cm floor it gives the OS1 datasheet's range
// repeatability: 3 cm at SNR 100, 9 cm at SNR 12, 1.5 cm above SNR 450. Without a noise figure
// (ideal detection) the floor.
inline double range_noise_sigma_m(double power_w, double noise_sigma_w, double floor_m,
                                  double pulse_resolution_m) {
  if (!(noise_sigma_w > 0) || !(power_w > 0)) return floor_m;
  const double snr = power_w / noise_sigma_w;
  return std::max(floor_m, pulse_resolution_m / std::sqrt(2.0 * snr));
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

// The sensor's reading of a detection of power P where a white Lambertian target at normal
// incidence would return P_white: the Lambertian-equivalent reflectivity P / P_white, on the
// calibrated scale. A reading above 100 claims that no diffuse target could have returned the
// power, so it is given only with the confidence a detection has (the excess beyond the noise's
// 3 sigma) and beyond the calibration's own tolerance (10 %): P - 3 sigma > 1.1 P_white.
// Otherwise the reading stops at 100: a white target, or a diffuse one at the edge of reach that
// the noise lifted over the threshold, does not read as a retroreflector.
inline constexpr double kRetroreflectiveMargin = 1.1;
inline int estimated_reflectivity(double power_w, double white_w, double noise_sigma_w) {
  if (!(white_w > 0) || !(power_w > 0)) return 0;
  const double equivalent = power_w / white_w;
  if (equivalent > 1.0 && !(power_w - 3.0 * noise_sigma_w > kRetroreflectiveMargin * white_w)) {
    return 100;
  }
  return calibrated_reflectivity(equivalent);
}

// The Lambertian-equivalent reflectivity of a return: received fraction I, corrected for range
// and two-way transmission, in units of the seed's diffuse term at normal incidence.
inline double lambertian_equivalent(double returned_fraction, double range_m, double transmission) {
  return returned_fraction / transmission * 2.0 * range_m * range_m;
}

// ---------------------------------------------------------------------------------------------
// Section 2b: the range equation with a BRDF (seeds 003, 001, 002). Per steradian, monostatic.

inline constexpr double kSpeedOfLight = 299792458.0;
inline double deg_to_rad(double d) { return d * std::numbers::pi / 180.0; }

// Lambertian, beta_0 = Gamma / pi, with Gamma(theta) = Gamma(0) cos(theta) (seed 002, eq. 4).
inline double lambertian_brdf(double reflectivity, double cos_theta) {
  return reflectivity * std::max(cos_theta, 0.0) / std::numbers::pi;
}

// Fresnel reflectance at normal incidence of a dielectric of refractive index n in air:
// ((n - 1) / (n + 1))^2 (glass n = 1.5: 0.040; water n = 1.33 at 905 nm: 0.020).
inline double fresnel_f0(double refractive_index) {
  const double r = (refractive_index - 1.0) / (refractive_index + 1.0);
  return r * r;
}

// Smith's masking of a Beckmann surface of RMS slope m seen at cos(theta), in Walter et al.'s
// rational approximation ("Microfacet Models for Refraction", EGSR 2007, eq. 27).
inline double beckmann_masking(double cos_theta, double roughness) {
  const double sin_theta = std::sqrt(std::max(1.0 - cos_theta * cos_theta, 0.0));
  if (!(sin_theta > 0)) return 1.0;
  const double a = cos_theta / (roughness * sin_theta);
  if (a >= 1.6) return 1.0;
  return (3.535 * a + 2.181 * a * a) / (1.0 + 2.276 * a + 2.577 * a * a);
}

// Gloss seen by a monostatic sensor: the Cook-Torrance microfacet BRDF (Beckmann facets, Smith
// masking; Walter et al. 2007) with the light leaving back along its way in. The facets that send
// it back face the sensor, so their Fresnel term is F(0) = f0 and the lobe is the facet slope
// distribution at the incidence angle: f cos(theta) = f0 D G / (4 cos(theta)), with
// D = exp(-tan^2(theta) / m^2) / (pi m^2 cos^4(theta)). Energy-conserving by construction (D is
// normalised, F and G at most 1): the hemispherical reflectance of the gloss never exceeds f0.
// Returned like lambertian_brdf, as BRDF x cos(theta) per steradian.
inline double glossy_backscatter(double f0, double roughness, double cos_theta) {
  if (!(f0 > 0) || !(cos_theta > 0) || !(roughness > 0)) return 0.0;
  const double c2 = cos_theta * cos_theta;
  const double tan2 = (1.0 - c2) / c2;
  const double m2 = roughness * roughness;
  const double exponent = tan2 / m2;
  if (exponent > 700) return 0.0;
  return f0 * std::exp(-exponent) * beckmann_masking(cos_theta, roughness) /
         (4.0 * std::numbers::pi * m2 * c2 * c2 * cos_theta);
}

// Retroreflector (seed 001, I-B): a peak of 100-1000 /sr at zero observation angle (the angle
// between incoming and outgoing rays), falling steeply with it, and more gently with the
// entrance angle theta, as retroreflective sheeting does.
inline double retro_brdf(double peak_per_sr, double observation_rad, double observation_width_rad,
                         double theta_rad, double entrance_width_rad) {
  const double o = observation_rad / observation_width_rad;
  const double e = theta_rad / entrance_width_rad;
  return peak_per_sr * std::exp(-o * o) * std::exp(-e * e);
}

// The material's BRDF x cos(theta) back towards a monostatic sensor: diffuse, gloss, retro. The
// observation angle is that of a bistatic baseline seen from the range (zero for coaxial optics).
inline double material_brdf(const Material& m, double cos_theta, double observation_rad) {
  const double surface = lambertian_brdf(m.reflectivity, cos_theta) +
                         glossy_backscatter(m.fresnel_f0, m.roughness, cos_theta);
  if (m.retroreflective == 0) return surface;  // most materials: no entrance angle to compute
  const double theta = std::acos(std::clamp(cos_theta, -1.0, 1.0));
  return surface + m.retroreflective * retro_brdf(m.retro_peak_per_sr, observation_rad,
                                                  deg_to_rad(m.retro_observation_deg), theta,
                                                  deg_to_rad(m.retro_entrance_deg));
}

// A hit passes most of its light on along the mirror direction (seed 000's "reflector" branch of
// the guns algorithm): specular weight dominating and a narrow lobe.
inline bool is_mirror_like(const Material& m) {
  return m.specular > m.diffuse + m.retroreflective && m.lobe_width_deg <= 10.0;
}

// Bistatic optics with parallel axes (seed 003): transmitter and receiver cones of opening
// angles gamma_t, gamma_r (full angles) from apertures of radius rho_t, rho_r, axes d apart.
struct BistaticOptics {
  double baseline_m = 0;  // d; 0 = coaxial
  // Coaxial optics focused far away (not in the seeds): a return from R below full overlap
  // reaches the detector in proportion to (R / R_full)^2, the usual geometric form factor.
  // 0 = seed 003's constant crossover of 1.
  double full_overlap_m = 0;
  double tx_aperture_radius_m = 0.005;
  double rx_aperture_radius_m = 0.01;
  double tx_opening_rad = 0.003;
  double rx_opening_rad = 0.01;
  bool operator==(const BistaticOptics&) const = default;
};

// First contact R_1 and full overlap R_2 (seed 003).
inline double crossover_start_m(const BistaticOptics& o) {
  return (o.baseline_m - o.tx_aperture_radius_m - o.rx_aperture_radius_m) /
         (std::tan(o.tx_opening_rad / 2) + std::tan(o.rx_opening_rad / 2));
}
inline double crossover_full_m(const BistaticOptics& o) {
  const double spread = std::tan(o.rx_opening_rad / 2) - std::tan(o.tx_opening_rad / 2);
  if (!(spread > 0)) return std::numeric_limits<double>::infinity();
  return (o.baseline_m - o.rx_aperture_radius_m + o.tx_aperture_radius_m) / spread;
}

// The crossover function xi(R): the share of the illuminated area the receiver sees (seed 003,
// closed form for two circles: 0 below R_1, 1 above R_2, the lens-shaped overlap between; for
// coaxial optics 1, or the form factor above).
inline double crossover(const BistaticOptics& o, double range_m) {
  if (o.baseline_m <= 0) {
    if (!(o.full_overlap_m > 0) || range_m >= o.full_overlap_m) return 1.0;
    const double share = range_m / o.full_overlap_m;
    return share * share;
  }
  if (range_m <= crossover_start_m(o)) return 0.0;
  if (range_m >= crossover_full_m(o)) return 1.0;
  const double d = o.baseline_m;
  const double rt = range_m * std::tan(o.tx_opening_rad / 2) + o.tx_aperture_radius_m;
  const double rr = range_m * std::tan(o.rx_opening_rad / 2) + o.rx_aperture_radius_m;
  const double phi_t =
      2.0 * std::acos(std::clamp((rt * rt - rr * rr + d * d) / (2 * d * rt), -1.0, 1.0));
  const double phi_r =
      2.0 * std::acos(std::clamp((rr * rr - rt * rt + d * d) / (2 * d * rr), -1.0, 1.0));
  const double overlap = rt * rt * (phi_t - std::sin(phi_t)) + rr * rr * (phi_r - std::sin(phi_r));
  return std::clamp(overlap / (2 * std::numbers::pi * rt * rt), 0.0, 1.0);
}

// Received power of a hard target filling the beam (seed 003):
// P_R = K beta T^2 xi / R^2, with K = E_P C_A the system constant (W m^2 sr).
inline double received_power(double system_constant, double brdf_per_sr, double range_m,
                             double two_way_transmission_factor, double crossover_factor) {
  return system_constant * brdf_per_sr * two_way_transmission_factor * crossover_factor /
         (range_m * range_m);
}

// Datasheet calibration: the system constant for which a Lambertian target of the datasheet
// reflectivity at the datasheet range, at normal incidence, returns the power `target_w` (the
// threshold for 50 % detection, more for the probability a datasheet states).
inline double system_constant_from_datasheet(double target_w, double range_m, double reflectivity,
                                             double two_way_transmission_factor,
                                             double crossover_factor) {
  return target_w * range_m * range_m /
         (lambertian_brdf(reflectivity, 1.0) * two_way_transmission_factor * crossover_factor);
}

// Range at which a Lambertian target at normal incidence returns the threshold, ignoring
// extinction: R = sqrt(K Gamma / (pi P_T)). A 40 % target reaches twice as far as a 10 % one.
inline double lambertian_reach_m(double system_constant, double reflectivity, double threshold_w) {
  return std::sqrt(system_constant * lambertian_brdf(reflectivity, 1.0) / threshold_w);
}

// ---------------------------------------------------------------------------------------------
// Section 3: detection.

// Ambient light (seed 001: computed like the laser's return with the sun as the source; PHYSICS.md
// 0): the sunlight a surface sends into one channel's field of view, and the noise it adds.
inline constexpr double kPlanck = 6.62607015e-34;
inline double photon_energy_j(double wavelength_nm) {
  return kPlanck * kSpeedOfLight / (wavelength_nm * 1e-9);
}
// Solar spectral irradiance near 905 nm per 1000 W/m^2 of broadband sunlight (ASTM G173, AM1.5
// global: about 0.7 W m^-2 nm^-1). 1000 W/m^2 is full sun, about 100 klx.
inline constexpr double kSolarSpectralIrradiance905 = 0.70e-3;  // per nm, per W/m^2 broadband
// Diffuse skylight besides the direct beam, in the near infrared of a clear day: about a tenth of
// the direct irradiance, from the whole sky (a surface facing up sees all of it).
inline constexpr double kDiffuseSkyShare = 0.10;

struct Receiver {
  double aperture_m = 0.025;  // lens diameter
  double fov_rad = 0.003;     // full angle one channel sees
  double filter_nm = 25;      // optical band-pass width
  double optics_efficiency = 0.7;
  double quantum_efficiency = 0.8;
  // The ambient power whose shot noise equals the detector's own noise: an APD's
  // NEP^2 QE / (2 h nu F) (input-referred NEP, excess noise factor F).
  double knee_w = 1.5e-9;

  // Sunlight of broadband irradiance E on a surface of reflectivity rho, normal at cos_sun to
  // the sun and at cos_up to the zenith, into one channel: in-band irradiance (direct + diffuse
  // sky) x rho / pi (radiance) x aperture area x field-of-view solid angle x optics efficiency.
  [[nodiscard]] double ambient_w(double sun_w_per_m2, double cos_sun, double cos_up,
                                 double reflectivity) const {
    const double irradiance =
        sun_w_per_m2 * kSolarSpectralIrradiance905 * filter_nm *
        (std::max(cos_sun, 0.0) + kDiffuseSkyShare * 0.5 * (1.0 + std::clamp(cos_up, -1.0, 1.0)));
    const double area = std::numbers::pi * 0.25 * aperture_m * aperture_m;
    const double solid_angle = std::numbers::pi * 0.25 * fov_rad * fov_rad;
    return irradiance * reflectivity / std::numbers::pi * area * solid_angle * optics_efficiency;
  }
  // The clear sky seen by a beam that hits nothing: the diffuse sky's radiance E_sky / pi, which
  // a white surface facing up and away from the sun sends back too.
  [[nodiscard]] double sky_w(double sun_w_per_m2) const {
    return ambient_w(sun_w_per_m2, 0.0, 1.0, 1.0);
  }
  // How much the ambient's shot noise raises the detector's noise sigma.
  [[nodiscard]] double noise_factor(double ambient_w) const {
    return std::sqrt(1.0 + std::max(ambient_w, 0.0) / knee_w);
  }
  // Photoelectrons a power delivers in a time.
  [[nodiscard]] double photons(double power_w, double seconds, double wavelength_nm) const {
    return power_w * seconds / photon_energy_j(wavelength_nm) * quantum_efficiency;
  }
  // The detector's own noise in watts at the input, over a bandwidth: the shot noise of the knee.
  [[nodiscard]] double dark_noise_w(double bandwidth_hz, double wavelength_nm) const {
    return std::sqrt(2.0 * photon_energy_j(wavelength_nm) * knee_w * bandwidth_hz /
                     quantum_efficiency);
  }
  bool operator==(const Receiver&) const = default;
};

// The capability (reflectance-limit) model of seed 002: detected iff R_L(d) <= Gamma(theta),
// R_L(d) = R_L,max d / d_max, and nothing beyond d_max.
inline bool capability_detects(double lambertian_reflectivity, double range_m, double max_range_m,
                               double max_reflectance_limit) {
  if (range_m > max_range_m) return false;
  return max_reflectance_limit * range_m / max_range_m <= lambertian_reflectivity;
}

// Section 8: echo pulse width. The sin^2 pulse of seed 003 with half-power width tau_h and peak
// A stays above the threshold T for 2 tau_h (1 - (2/pi) asin(sqrt(T/A))); a target that spreads
// the return over a range extent dR adds its two-way time 2 dR / c (seed 001, II-C).
// The same from asin(sqrt(T/A)) (the report computes that part for a run of echoes in SIMD lanes).
inline double echo_pulse_width_from_asin_s(double asin_sqrt_ratio, double tau_h_s,
                                           double range_extent_m) {
  const double above = 2.0 * tau_h_s * (1.0 - 2.0 / std::numbers::pi * asin_sqrt_ratio);
  return above + 2.0 * range_extent_m / kSpeedOfLight;
}
inline double echo_pulse_width_s(double peak_w, double threshold_w, double tau_h_s,
                                 double range_extent_m) {
  if (!(peak_w > threshold_w)) return 0.0;
  return echo_pulse_width_from_asin_s(std::asin(std::sqrt(threshold_w / peak_w)), tau_h_s,
                                      range_extent_m);
}

// ---------------------------------------------------------------------------------------------
// Section 4b: rain (seed 004 section 3.4, seed 003).

// Marshall-Palmer slope in mm^-1. The seed prints 41 R^-0.21 "mm^-1", which is the cm^-1 value.
inline double marshall_palmer_slope_per_mm(double rain_mm_per_h) {
  return 4.1 * std::pow(rain_mm_per_h, -0.21);
}
inline constexpr double kMarshallPalmerIntercept = 8000.0;  // m^-3 mm^-1
// N_total = N_0 / Lambda, drops per cubic metre over all diameters.
inline double rain_drop_density_per_m3(double rain_mm_per_h) {
  if (!(rain_mm_per_h > 0)) return 0.0;
  return kMarshallPalmerIntercept / marshall_palmer_slope_per_mm(rain_mm_per_h);
}

// Extinction coefficient at 905 nm (seed 004, table 3.2): log-log interpolation between the
// table's points; outside them the least-squares power law through all four, anchored at the
// end point so the curve stays continuous.
struct RainExtinctionPoint {
  double rain_mm_per_h;
  double extinction_per_m;
};
inline constexpr std::array<RainExtinctionPoint, 4> kRainExtinctionTable{
    {{5.0, 0.00132}, {12.5, 0.00244}, {25.0, 0.00387}, {100.0, 0.00991}}};
inline double rain_extinction_exponent() {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : kRainExtinctionTable) {
    const double x = std::log(p.rain_mm_per_h);
    const double y = std::log(p.extinction_per_m);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = kRainExtinctionTable.size();
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}
inline double rain_extinction_per_m(double rain_mm_per_h) {
  if (!(rain_mm_per_h > 0)) return 0.0;
  const auto& t = kRainExtinctionTable;
  const auto power_from = [&](const RainExtinctionPoint& p) {
    return p.extinction_per_m *
           std::pow(rain_mm_per_h / p.rain_mm_per_h, rain_extinction_exponent());
  };
  if (rain_mm_per_h <= t.front().rain_mm_per_h) return power_from(t.front());
  if (rain_mm_per_h >= t.back().rain_mm_per_h) return power_from(t.back());
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (rain_mm_per_h <= t[i].rain_mm_per_h) {
      const double f = std::log(rain_mm_per_h / t[i - 1].rain_mm_per_h) /
                       std::log(t[i].rain_mm_per_h / t[i - 1].rain_mm_per_h);
      return std::exp(std::log(t[i - 1].extinction_per_m) +
                      f * std::log(t[i].extinction_per_m / t[i - 1].extinction_per_m));
    }
  }
  return t.back().extinction_per_m;
}

// The beam's cone: exit radius w0 and divergence half-angle Theta, with tan(Theta) worked out
// once (the hot path asks for radii millions of times per second).
struct BeamCone {
  BeamCone(double exit_radius, double half_angle_rad)
      : exit_radius_m(exit_radius), tan_half_angle(std::tan(half_angle_rad)) {}
  // Beam radius at range r (seed 000, 1.3.5: spot diameter 2 L sin(Theta) far from the exit).
  [[nodiscard]] double radius_m(double range_m) const {
    return exit_radius_m + range_m * tan_half_angle;
  }
  // Volume between r0 and r1: a truncated cone, pi r_beam^2 * distance when Theta = 0.
  [[nodiscard]] double volume_m3(double r0, double r1) const {
    if (tan_half_angle < 1e-12) return std::numbers::pi * exit_radius_m * exit_radius_m * (r1 - r0);
    const double w0 = radius_m(r0);
    const double w1 = radius_m(r1);
    return std::numbers::pi * (w1 * w1 * w1 - w0 * w0 * w0) / (3.0 * tan_half_angle);
  }
  double exit_radius_m;
  double tan_half_angle;
};
inline double beam_radius_m(double exit_radius_m, double half_angle_rad, double range_m) {
  return BeamCone(exit_radius_m, half_angle_rad).radius_m(range_m);
}
inline double beam_volume_m3(double exit_radius_m, double half_angle_rad, double r0, double r1) {
  return BeamCone(exit_radius_m, half_angle_rad).volume_m3(r0, r1);
}

// A drop of diameter D at range r inside the beam returns like a small target (PHYSICS.md 0, as
// LISA does: Kilic et al., "Lidar Light Scattering Augmentation", 2021): its share of the
// footprint (pi D^2/4) / (pi w^2) times water's Fresnel reflectance at normal incidence
// (n = 1.33 at 905 nm: 0.020) per pi steradians.
inline constexpr double kWaterFresnelReflectance = 0.020;
inline double drop_brdf_area_ratio(double diameter_m, double beam_radius, double reflectance) {
  const double share = (diameter_m * diameter_m / 4.0) / (beam_radius * beam_radius);
  return std::min(share, 1.0) * reflectance / std::numbers::pi;
}

// Fog's backscatter coefficient from the meteorological visibility (Rasshofer et al. 2011, as
// Hahner et al.'s LiDAR_fog_sim uses it): beta = 0.046 / V, per metre and steradian.
inline double fog_backscatter_per_m_sr(double visibility_m) { return 0.046 / visibility_m; }

// The fog volume's return at range R (Hahner et al., "Fog Simulation on Real LiDAR Point Clouds",
// ICCV 2021; seed 003's range equation for a soft target): the sin^2 pulse of half-power width
// tau_H convolved with beta xi(R') T^2(R') / R'^2 over the pulse's extent, in the units where a
// hard target returns K beta_0 xi T^2 / R^2:
// P(R) = K beta integral over [R - c tau_H, R] of sin^2(pi (R - R') / (c tau_H)) xi T^2 / R'^2 dR'.
// Far from the sensor this is a hard target of beta_0 = beta c tau_H / 2.
template <typename Crossover>
double fog_return_w(double system_constant, double beta, double extinction_per_m, double range_m,
                    double tau_h_s, Crossover&& crossover, double min_range_m) {
  const double length = kSpeedOfLight * tau_h_s;
  constexpr int kSteps = 64;
  const double step = length / kSteps;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double back = (i + 0.5) * step;  // R - R'
    const double r = range_m - back;
    if (r < min_range_m) break;
    const double shape = std::sin(std::numbers::pi * back / length);
    sum += shape * shape * crossover(r) * std::exp(-2.0 * extinction_per_m * r) / (r * r) * step;
  }
  return system_constant * beta * sum;
}

// ---------------------------------------------------------------------------------------------
// Section 7: blooming. One axis of the separable kernel kappa * eta: a Gaussian core of width
// sigma_core and an exponential skirt of relative level s, so the intensity falls about six
// orders of magnitude over about 3 degrees with the defaults (seed 001).
inline double bloom_kernel_1d(double offset_deg, double core_sigma_deg, double skirt_level,
                              double skirt_decay_deg) {
  const double x = std::fabs(offset_deg);
  const double c = x / core_sigma_deg;
  return (1.0 - skirt_level) * std::exp(-0.5 * c * c) +
         skirt_level * std::exp(-x / skirt_decay_deg);
}

// ---------------------------------------------------------------------------------------------
// Section 9: rasterising engines. A hit found on pixel direction p at range r lies on the
// surface (point q, normal n); the true beam direction v meets that plane at
// r_corr = (p . n) / (v . n) * r.
inline double raster_corrected_range(double pixel_dot_normal, double beam_dot_normal,
                                     double range_m) {
  if (std::fabs(beam_dot_normal) < 1e-9) return range_m;
  return pixel_dot_normal / beam_dot_normal * range_m;
}

}  // namespace lidaremu::core::physics
