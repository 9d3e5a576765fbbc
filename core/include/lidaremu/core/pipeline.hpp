#pragma once
// The physics chain as named stages over blocks of beams. Each block runs every stage in turn
// over structure-of-arrays scratch, blocks run in parallel under TBB, and every random draw is
// keyed by (seed, sensor, frame, beam, stage), so the result never depends on scheduling.
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
  kDefault,  // PHYSICS.md sections 1-4a
};

// Defaults: seed 000 (P_peak 100 W, NEP 6.6 pW/sqrt(Hz), BW 1 GHz); efficiency chosen so a
// 10 % diffuse target at normal incidence reaches threshold near 90 m (VLP-16 class); clear air
// from a 23 km standard visibility at 905 nm.
struct PhysicsParams {
  double peak_power_w = 100.0;
  double detector_efficiency = 1e-3;
  double nep_w_per_sqrt_hz = 6.6e-12;
  double bandwidth_hz = 1e9;
  double wavelength_nm = 905.0;
  double visibility_m = 23000.0;
  double range_noise_sigma_m = 0.01;
  [[nodiscard]] double noise_power_w() const {
    return physics::noise_power(nep_w_per_sqrt_hz, bandwidth_hz);
  }
  [[nodiscard]] double extinction_per_m() const {
    return physics::extinction_from_visibility(visibility_m, wavelength_nm);
  }
};

// Per-beam scratch the stages share.
struct BeamWork {
  std::vector<float> range_m;
  std::vector<float> cos_incidence;
  std::vector<double> returned_fraction;
  std::vector<double> transmission;
  std::vector<double> power_w;
  std::vector<std::uint8_t> alive;
  void resize(std::size_t beams);
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
  DrawKey key;  // beam and stage filled in per draw
};

class Stage {
 public:
  virtual ~Stage() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  virtual void run(const BlockContext& block) const = 0;
};

struct PipelineSettings {
  PhysicsMode mode = PhysicsMode::kDefault;
  PhysicsParams params;
  std::uint64_t seed = 0;
  std::uint32_t sensor_index = 0;
};

class Pipeline {
 public:
  Pipeline(const ScanPattern& pattern, const MaterialTable& materials, PipelineSettings settings);

  // Turns one frame of hits into returns. Reuses its scratch; does not allocate once warm.
  void process(const FrameHits& hits, FrameReturns& out);
  [[nodiscard]] std::vector<std::string_view> stage_names() const;
  [[nodiscard]] const BeamGeometry& geometry() const { return geometry_; }
  // Weather and other parameters may change between frames (Control messages).
  void set_params(const PhysicsParams& params) { settings_.params = params; }

 private:
  BeamGeometry geometry_;
  const MaterialTable& materials_;
  PipelineSettings settings_;
  std::vector<std::unique_ptr<Stage>> stages_;
  BeamWork work_;
};

}  // namespace lidaremu::core
