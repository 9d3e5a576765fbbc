#pragma once
// The physics chain as named stages (PHYSICS.md section by section). Per-beam stages run fused
// over blocks of beams under tbb::parallel_for; a frame stage (blooming) sees the whole frame
// between two such passes. Every random draw is keyed by (seed, sensor, frame, beam, stage), so
// the result never depends on scheduling. Stages declare what they read and write; the chain is
// checked when it is built.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/counter_rng.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

enum class PhysicsMode : std::uint8_t {
  kIdeal,    // no noise, no loss, no random effect: every valid hit returns exactly
  kDefault,  // the realistic chain PhysicsStages describes
};
enum class SurfaceModel : std::uint8_t { kBrdf, kIpsp };
enum class DetectionModel : std::uint8_t { kThreshold, kCapability };

// Which stages the realistic chain has. Stages with nothing to do (rain at 0 mm/h, one ray per
// beam, one segment per path) change nothing.
struct PhysicsStages {
  SurfaceModel surface = SurfaceModel::kBrdf;
  DetectionModel detection = DetectionModel::kThreshold;
  EchoMode echoes = EchoMode::kStrongest;
  bool raster_correction = false;
  bool multibounce = true;
  bool clear_air = true;  // clear air and fog, from the visibility
  bool rain = true;
  bool blooming = true;
  bool range_noise = true;
};

// Every number the physics reads. Defaults per sensor model come from default_physics_params();
// config overrides them key by key.
struct PhysicsParams {
  // Seed 000's detector (the "ipsp" surface model reads peak power and efficiency).
  double peak_power_w = 100.0;
  double detector_efficiency = 1e-3;
  double nep_w_per_sqrt_hz = 6.6e-12;
  double bandwidth_hz = 1e9;
  double wavelength_nm = 905.0;
  double quantum_efficiency = 0.8;
  double receiver_etendue_m2_sr = 1.7e-9;  // aperture area x field of view x optics efficiency
  // Datasheet calibration of the range equation (PHYSICS.md 2b).
  double datasheet_range_m = 100.0;
  double datasheet_reflectivity = 0.10;
  // Beam and optics.
  double beam_exit_radius_m = 0.005;
  double beam_divergence_rad = 0.001;  // half-angle Theta of the cone
  physics::BistaticOptics optics;      // baseline 0: coaxial
  double pulse_half_width_ns = 5.0;    // tau_H of the sin^2 pulse
  // Detection and echoes.
  double range_noise_sigma_m = 0.01;
  double range_resolution_m = 0.10;      // pulses closer than this merge (seed 000, 1.3.5)
  double echo_min_separation_m = 1.0;    // a further echo must lie this far from the first
  double capability_max_range_m = 50.0;  // seed 002, Ouster OS0-128
  double capability_max_reflectance_limit = 0.8;
  double sun_elevation_deg = 90.0;  // sun direction for ambient light
  double sun_azimuth_deg = 0.0;
  // Rain (seed 004).
  double rain_lidar_ratio_sr = 18.0;  // extinction over backscatter of water drops
  double rain_min_range_m = 1.0;      // no drop returns closer than this (receiver blind zone)
  double rain_range_jitter_m_per_drop = 2e-5;
  // Blooming kernel (seed 001).
  double bloom_core_sigma_deg = 0.05;
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
  [[nodiscard]] double threshold_w() const { return 3.0 * noise_power_w(); }
};

// The datasheet figures of a sensor model (sensor_registry.cpp) as physics defaults.
PhysicsParams default_physics_params(const SensorModel& model);

// Candidate returns of one beam before detection: one per ray or path, plus rain drops and
// blooming. Fixed capacity per beam; extra candidates keep the strongest.
struct Pulse {
  float range_m = 0;     // half the optical path, along the centre ray
  float power_w = 0;     // at the detector: before noise, then P_out once detected
  float extent_m = 0;    // range spread on the target (grazing incidence, merged rays)
  float lambertian = 0;  // Lambertian-equivalent reflectivity, for the capability model
  float cos_incidence = 0;
  float cos_sun = 0;      // normal . sun direction, for ambient light
  float gain = 1;         // mirror reflectances along a multi-bounce path
  float threshold_w = 0;  // the threshold it was detected against
  std::uint32_t object_id = 0;
  std::uint16_t material = 0;
  std::uint8_t ray = 0;
  ReturnKind kind = ReturnKind::kNone;  // kNone: dropped
};

struct BeamWork {
  static constexpr int kMaxPulses = 12;
  std::vector<Pulse> pulses;                 // beams x kMaxPulses
  std::vector<std::uint8_t> pulse_count;     // per beam
  std::vector<float> range_offset_m;         // reported minus geometric range (Ouster origin)
  std::vector<std::uint16_t> drops_crossed;  // rain drops the beam went through
  std::vector<Pulse> bloom;                  // per beam, from blooming (kind kNone if none)
  std::vector<std::int8_t> echo_pick;        // beams x kMaxEchoes: index of the pulse, -1 none
  void resize(std::size_t beams);
};

// Seed 004's Poisson drops, thinned to those that could beat the noise (a drop of diameter D at
// range r returns more than 1 sigma only if D exceeds D_t(r), which grows fast with r): the
// expected number of such drops in the beam, cumulated from rain_min_range_m outwards. Built
// once per frame from the rain rate; beyond the table no drop can be detected.
struct RainDropTable {
  static constexpr int kSteps = 300;
  double start_m = 0;
  double step_m = 0.5;
  std::array<double, kSteps + 1> cumulative{};
  [[nodiscard]] double expected_within(double range_m) const;
  // The range where the cumulated expectation reaches `expected` (inverse of the above).
  [[nodiscard]] double range_at(double expected) const;
};

// Frame-wide constants the stages read, derived once per frame.
struct FrameConstants {
  explicit FrameConstants(physics::BeamCone cone) : beam(cone) {}
  physics::BeamCone beam;
  double system_constant = 0;  // K = E_P C_A (W m^2 sr), from the datasheet or seed 000
  double noise_w = 0;
  double threshold_w = 0;
  double clear_extinction_per_m = 0;
  double rain_extinction_per_m = 0;
  double rain_drops_per_m3 = 0;
  double rain_slope_per_mm = 0;
  RainDropTable rain_drops;
  double multibounce_resolution_deg = 0;
  double sun_direction[3] = {0, 0, 1};
};

struct BlockContext {
  std::size_t begin = 0;
  std::size_t end = 0;
  const FrameHits& hits;
  BeamWork& work;
  FrameReturns& out;
  const BeamGeometry& geometry;
  const MaterialTable& materials;
  const PhysicsParams& params;
  const FrameConstants& constants;
  const PhysicsStages& stages;
  DrawKey key;  // beam and stage filled in per draw
};

// What a stage reads and writes, checked when the chain is built.
enum Products : std::uint32_t {
  kHitsIn = 1u << 0,
  kPulses = 1u << 1,
  kBloomed = 1u << 2,
  kDetections = 1u << 3,
  kEchoesOut = 1u << 4,
};

class Stage {
 public:
  virtual ~Stage() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::uint32_t reads() const = 0;
  [[nodiscard]] virtual std::uint32_t writes() const = 0;
  // Per-beam stages run on blocks; frame stages see all beams and run alone.
  [[nodiscard]] virtual bool whole_frame() const { return false; }
  virtual void run(const BlockContext& block) const = 0;
};

struct PipelineSettings {
  PhysicsMode mode = PhysicsMode::kDefault;
  PhysicsStages stages;
  PhysicsParams params;
  std::uint64_t seed = 0;
  std::uint32_t sensor_index = 0;
};

class Pipeline {
 public:
  // Throws std::invalid_argument naming the stage when the chain is inconsistent.
  Pipeline(const ScanPattern& pattern, const MaterialTable& materials, PipelineSettings settings);

  // Turns one frame of hits into returns. Reuses its scratch; does not allocate once warm.
  void process(const FrameHits& hits, FrameReturns& out) {
    process_stages(0, stages_.size(), hits, out);
  }
  // Runs stages [first, last) of the chain (stage_names() order) on the frame: the stages before
  // `first` must have run on it. For measuring one stage at a time.
  void process_stages(std::size_t first, std::size_t last, const FrameHits& hits,
                      FrameReturns& out);
  [[nodiscard]] std::vector<std::string_view> stage_names() const;
  [[nodiscard]] const BeamGeometry& geometry() const { return geometry_; }
  [[nodiscard]] const PipelineSettings& settings() const { return settings_; }
  // The system constant K of the range equation this pipeline uses (W m^2 sr).
  [[nodiscard]] double system_constant() const { return system_constant_; }

 private:
  [[nodiscard]] FrameConstants constants_for(const Weather& weather) const;

  BeamGeometry geometry_;
  const MaterialTable& materials_;
  PipelineSettings settings_;
  double system_constant_ = 0;
  std::vector<std::unique_ptr<Stage>> stages_;
  BeamWork work_;
};

}  // namespace lidaremu::core
