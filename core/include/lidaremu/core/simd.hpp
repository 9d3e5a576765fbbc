#pragma once
// The vector kernel's entry points: keyed random draws for runs of consecutive beams, computed in
// SIMD lanes (Google Highway, one build per instruction set, chosen at run time), and the choice of
// instruction set. Every result is the same on every instruction set the build dispatches to:
// integer Philox, IEEE add/multiply/divide/sqrt without fused multiply-add, and SLEEF's
// deterministic ("cinz") elementary functions, which return the same bits on every ISA.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/counter_rng.hpp"

namespace lidaremu::core::simd {

// The instruction sets this build dispatches to and this CPU runs, best first ("AVX3", "AVX2",
// "SSE4", "SSSE3", "SCALAR" on x86-64).
std::vector<std::string> available_targets();
// The one in use.
std::string current_target();
// Uses `name` (one of available_targets(), case-insensitive) from now on, process-wide; "" or
// "best" returns to the best one. Throws std::invalid_argument naming the choices otherwise.
void use_target(std::string_view name);

// Means above this are drawn from the normal approximation N(mu, mu), rounded (the skew it drops,
// 1/sqrt(mu) < 0.25, is far below what the stages that draw such counts can show: rain's crossed
// drops only set the range jitter, as sqrt(count)).
inline constexpr float kPoissonInversionLimit = 16.0f;

// Draw `draw` of the streams of beams first_beam, first_beam + 1, ... (one per element of `out`),
// each keyed as CounterRng(key with .beam = that beam) keys it: the same Philox-4x32-10 words.
//
// Uniform in the open interval (0, 1): 2^23 values from the first word's top 23 bits.
void uniforms(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<float> out);
// Standard normal by Box-Muller from the first two words (|z| < 5.8: tails beyond carry 7e-9).
void normals(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
             std::span<float> out);
// The same normals for scattered draws: draw draws[i] of beam beams[i], for the stages that need
// a draw for only some beams (writes the smallest of the three sizes).
void normals_at(const DrawKey& key, std::span<const std::uint32_t> beams,
                std::span<const std::uint32_t> draws, std::span<float> out);
// Poisson(means[i]) by inversion of the CDF from the first word's uniform below
// kPoissonInversionLimit, above it the normal approximation from the same words as normals(); 0
// for a mean that is not positive (NaN included). Writes min(means.size(), out.size()) counts.
void poissons(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<const float> means, std::span<std::uint32_t> out);

// In place, element by element: SLEEF's exp and asin (1 ulp; the same bits on every target).
void exp_each(std::span<float> x);
void asin_each(std::span<float> x);
// out[i] = asin(sqrt(numerator[i] / denominator[i])) where denominator[i] > numerator[i], else
// asin(0) (0): the float division and root as std::sqrt takes them, then SLEEF's asin.
void asin_root_ratio(std::span<const float> numerator, std::span<const float> denominator,
                     std::span<float> out);
// Two-way Beer-Lambert in place (physics::two_way_transmission, PHYSICS.md 4a):
// power_w[i] *= float(exp(-2 extinction range_m[i])), for the first min of the two sizes; the
// product in double as the scalar expression takes it, the exp SLEEF's (1 ulp; the same bits on
// every target).
void attenuate_two_way(double extinction_per_m, std::span<const float> range_m,
                       std::span<float> power_w);
// out[i] = atan2(y[i], x[i]) in double (SLEEF, 1 ulp, the same bits on every target), for the
// first min of the three sizes.
void atan2_each(std::span<const double> y, std::span<const double> x, std::span<double> out);

// The units of a 16-bit range field (Hesai, RoboSense): out[i] = std::round(range_m[i] / unit_m)
// (halves away from zero), 65535 at most, 0 for a negative range, for the first min of the two
// sizes. The same integers as that scalar expression on every target: the quotient is one
// IEEE division in double lanes, and its fraction past the truncation is exact.
void range_units_u16(std::span<const float> range_m, double unit_m, std::span<std::uint16_t> out);
// The same rounding for wider fields, capped at 2^31 - 1 (4,295 km in Velodyne's 2 mm units):
// a field of 16 bits keeps the low 16 bits of these, as it kept those of std::lround's.
void range_units_u32(std::span<const float> range_m, double unit_m, std::span<std::uint32_t> out);
// The same for a field whose unit is written as a scale and a divisor (Ouster: millimetres over
// 2^shift): out[i] = std::lround(double(range_m[i]) * scale / unit), the product and the quotient
// rounded as that expression rounds them; the same cap, 0 for a negative range.
void scaled_range_units_u32(std::span<const float> range_m, double scale, double unit,
                            std::span<std::uint32_t> out);

// The default surface's returns (PHYSICS.md 2b) of candidates on coaxial optics, from materials
// without retroreflection: element i of each array. The BRDF x cos(theta) is the Lambertian
// term plus the gloss lobe (physics::lambertian_brdf, physics::glossy_backscatter) times the
// path's gain; lambertian = float(brdf x pi); power = float(K brdf xi / r^2 x ray_weight), xi
// the coaxial crossover (physics::crossover). The scalar expressions operation for operation in
// double lanes, save the gloss lobe's exp: SLEEF's (1 ulp), the same bits on every target.
struct SurfaceCandidates {
  const float* range_m = nullptr;
  const float* cos_incidence = nullptr;
  const float* gain = nullptr;
  const double* reflectivity = nullptr;
  const double* fresnel_f0 = nullptr;
  const double* roughness = nullptr;
  const double* ray_weight = nullptr;
  float* lambertian = nullptr;
  float* power_w = nullptr;
};
struct SurfaceOptics {
  double system_constant = 0;  // K, W m^2 sr
  double full_overlap_m = 0;   // BistaticOptics::full_overlap_m (0: xi = 1)
};
void surface_returns(const SurfaceCandidates& candidates, std::size_t count,
                     const SurfaceOptics& optics);

// Photons a detector counts (physics::Receiver::photons): power_w[i] x watts_per_unit, over
// `seconds`, divided by the photon's energy, times the quantum efficiency, the double operations
// in that order, clamped to [fewest, 65535] and truncated.
struct PhotonCounting {
  double watts_per_unit = 1;  // the power's unit in watts
  double seconds = 0;
  double photon_energy_j = 1;  // physics::photon_energy_j(wavelength)
  double quantum_efficiency = 1;
  double fewest = 0;
};
void photon_counts(std::span<const float> power_w, const PhotonCounting& counting,
                   std::span<std::uint16_t> out);

// What the report stage (PHYSICS.md 2b, 3, 8) derives from echo i, element i of each array:
// - reported_range_m: physics::quantise_range(double(range_m + range_offset_m)) (the float sum);
// - white_w: the Lambertian white target's power at range_m (physics::received_power of the BRDF
//   1/pi, the given two-way transmission and the crossover, at least min_overlap): the coaxial
//   form factor, or crossover[i] where that array is given (bistatic optics);
// - reflectivity: physics::estimated_reflectivity(power, white) where the echo is no brighter
//   than the white target, -1 where it is (the caller takes the scalar expression and its log10);
// - signal_photons: photon_counts of the power over the pulse (fewest 1);
// - pulse_width_ns: physics::echo_pulse_width_from_asin_s x 1e9 as a float where power exceeds
//   threshold, else 0.
// The scalar expressions operation for operation in double lanes, the same bits on every target.
struct ReportEchoes {
  const float* range_m = nullptr;
  const float* range_offset_m = nullptr;
  const float* power_w = nullptr;
  const float* threshold_w = nullptr;
  const float* extent_m = nullptr;
  const float* transmission = nullptr;  // two-way, at the calibration visibility
  const float* asin_ratio = nullptr;    // asin(sqrt(threshold / power)) where power > threshold
  const double* crossover = nullptr;    // optional: the crossover factor per echo
  float* reported_range_m = nullptr;
  double* white_w = nullptr;
  std::int32_t* reflectivity = nullptr;
  std::uint16_t* signal_photons = nullptr;
  float* pulse_width_ns = nullptr;
};
struct ReportScales {
  double range_unit_m = 0;
  double max_range_m = 0;
  double system_constant = 0;  // K, W m^2 sr
  double full_overlap_m = 0;   // BistaticOptics::full_overlap_m (0: xi = 1)
  double min_overlap = 0;      // the least crossover the calibration divides by
  double pulse_half_width_s = 0;
  PhotonCounting signal;  // seconds: the pulse half width; fewest: 1
};
void report_echoes(const ReportEchoes& echoes, std::size_t count, const ReportScales& scales);

// Range noise (PHYSICS.md 3, seed 002): shift_m[i] = float(sigma x z[i]), sigma
// physics::range_noise_sigma_m(power_w[i], noise_w[i], floor_m, pulse_m) (the floor without a
// noise figure or power), for the first `count` of each; the caller adds it to the range. The
// scalar expressions in double lanes, the same bits on every target.
struct RangeNoiseEchoes {
  const float* power_w = nullptr;
  const float* noise_w = nullptr;
  const float* z = nullptr;
  float* shift_m = nullptr;
};
void range_noise_shifts(const RangeNoiseEchoes& echoes, std::size_t count, double floor_m,
                        double pulse_m);

// The threshold detector (PHYSICS.md 3, s3_detection_threshold.cpp), for the first `count`
// candidates: sigma = dark_noise_w x sqrt(1 + max(ambient_w[i], 0) / knee_w) (the ambient's shot
// noise, physics::Receiver::noise_factor), out = power_w[i] + sigma x z[i] in double; noise_w[i]
// = float(sigma), threshold_w[i] = float(threshold_sigmas x sigma), power_w[i] = float(out), and
// detected[i] = 1 where out is above that threshold (in double), 0 otherwise. The scalar
// expressions in double lanes, the same bits on every target.
struct DetectionCandidates {
  float* power_w = nullptr;  // read, then written
  const float* ambient_w = nullptr;
  const float* z = nullptr;
  float* noise_w = nullptr;
  float* threshold_w = nullptr;
  std::int32_t* detected = nullptr;
};
struct DetectorNoise {
  double dark_noise_w = 0;
  double knee_w = 1;
  double threshold_sigmas = 0;
};
void detect_against_noise(const DetectionCandidates& candidates, std::size_t count,
                          const DetectorNoise& detector);

// Rain's expected drops per beam (PHYSICS.md 4b, s4b_rain.cpp): all the drops in the beam's cone
// from 0 to reach_m[i] (drops_per_m3 x physics::BeamCone::volume_m3) and those of them that
// could be detected, read from the frame's cumulated table (steps + 1 values, step_m apart from
// start_m; 0 before it, its last value beyond) and capped at all of them: detectable[i] =
// float(seen), rest[i] = float(all - seen), for the first min of the three sizes. The scalar
// expressions in double lanes, the same bits on every target.
struct RainDrops {
  double drops_per_m3 = 0;
  double exit_radius_m = 0;
  double tan_half_angle = 0;
  const double* cumulative = nullptr;
  std::size_t steps = 0;
  double start_m = 0;
  double step_m = 1;
};
void rain_drop_means(const RainDrops& drops, std::span<const double> reach_m,
                     std::span<float> detectable, std::span<float> rest);

// How engine rows become sensor-frame hits: the point is axes x v x metres_per_unit, then, for
// world rows, pose_linear x p + pose_translation; the normal is axes x n (then pose_linear x n),
// divided by its length. Matrices row-major. A row is implausible unless min_range_m <= |p| <
// max_range_m and |n| > min_normal_length.
struct RowsToSensor {
  double axes[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double metres_per_unit = 1;
  bool posed = false;
  double pose_linear[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double pose_translation[3] = {0, 0, 0};
  double min_range_m = 0;
  double max_range_m = 0;
  double min_normal_length = 0;
};
// What rows_to_sensor finds wrong with a row (0: nothing): a NaN or infinity among its first
// seven floats (then nothing else is judged), or an implausible point or normal.
inline constexpr std::uint8_t kRowNonFinite = 1;
inline constexpr std::uint8_t kRowOutOfRange = 2;
// Where rows_to_sensor writes row i's point, unit normal (as float) and flaws: element i of each;
// and, where the exact_ pointers are set, the point before its rounding to float (the raw rows'
// beam search reads the direction the engine sent).
struct SensorRows {
  float* x = nullptr;
  float* y = nullptr;
  float* z = nullptr;
  float* nx = nullptr;
  float* ny = nullptr;
  float* nz = nullptr;
  std::uint8_t* flaws = nullptr;
  double* exact_x = nullptr;
  double* exact_y = nullptr;
  double* exact_z = nullptr;
};
// `count` rows of `floats_per_row` (>= 7) floats each (x y z nx ny nz material ...) to the sensor
// frame, in double lanes: the same floats as the scalar double arithmetic in the order written
// above ((m0 x + m1 y) + m2 z per component, |v| = sqrt((x^2 + y^2) + z^2)), on every target.
void rows_to_sensor(const RowsToSensor& transform, const float* rows, std::size_t floats_per_row,
                    std::size_t count, const SensorRows& out);

// Hits in float planes (FrameHits): hit i of a run at [i * stride] of each.
struct HitPlanes {
  const float* x = nullptr;
  const float* y = nullptr;
  const float* z = nullptr;
  const float* nx = nullptr;
  const float* ny = nullptr;
  const float* nz = nullptr;
  std::size_t stride = 1;
};
// The sensor's range window and beam cone (physics::BeamCone) the geometry stage judges a hit by.
struct HitWindow {
  double min_range_m = 0;
  double max_range_m = 0;
  double beam_exit_radius_m = 0;
  double beam_tan_half_angle = 0;
  double max_extent_m = 10;  // a footprint's range extent at grazing incidence, at most
};
// Where hit_geometry writes hit i's: element i of each.
struct HitGeometry {
  double* distance_m = nullptr;
  float* range_m = nullptr;
  float* cos_incidence = nullptr;
  float* extent_m = nullptr;
  std::uint8_t* accepted = nullptr;  // 1: faces the sensor, within the range window
};
// The geometry stage's arithmetic (PHYSICS.md 1) on `count` hits, in double lanes: distance |p|,
// cos_incidence -(p . n) / |p|, accepted when that is > 0 and min <= |p| <= max, and the
// footprint's range extent min(2 (exit radius + |p| tan half-angle) tan(theta), max_extent_m) with
// tan(theta) = sqrt(max(1 - cos^2, 0)) / cos (meaningful where accepted). The same floats as the
// scalar double expressions ((a.x b.x + a.y b.y) + a.z b.z for a dot product) on every target.
void hit_geometry(const HitPlanes& hits, std::size_t count, const HitWindow& window,
                  const HitGeometry& out);
// Ouster's reported range of points of one column (BeamGeometry::reported_range, FORMATS.md):
// (|R (1000 p - t) - o| + n) x 1e-3, R the sensor-to-lidar rotation (row-major), t the
// lidar-to-sensor translation (mm), o the column's beam origin (mm, lidar frame), n the lidar
// origin to beam origin offset (mm).
struct OusterRange {
  double lidar_from_sensor[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double translation_mm[3] = {0, 0, 0};
  double beam_origin_mm[3] = {0, 0, 0};
  double origin_to_beam_origin_mm = 0;
};
// offset_m[i] = float(the reported range of points[i] - distance_m[i]), for `count` points, the
// same floats as the scalar double expression on every target.
void ouster_range_offsets(const OusterRange& range, const HitPlanes& points,
                          const double* distance_m, std::size_t count, float* offset_m);

}  // namespace lidaremu::core::simd
