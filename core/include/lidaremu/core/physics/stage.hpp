#pragma once
// What every physics stage shares: a beam's candidate returns (Pulse), the per-frame scratch
// (BeamWork), the frame-wide constants, the block a stage runs on, and the Stage interface. One
// stage per file in core/src/physics/, named after the stage and its PHYSICS.md section; the
// registry (stage_registry.hpp) lists them by name.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "lidaremu/core/counter_rng.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/physics_params.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

// Candidate returns of one beam before detection: one per ray or path, plus rain drops and
// blooming. Fixed capacity per beam; extra candidates keep the strongest.
struct Pulse {
  float range_m = 0;     // half the optical path, along the centre ray
  float power_w = 0;     // at the detector: before noise, then P_out once detected
  float extent_m = 0;    // range spread on the target (grazing incidence, merged rays)
  float lambertian = 0;  // Lambertian-equivalent reflectivity, for the capability model
  float cos_incidence = 0;
  float ambient_w = 0;    // sunlight the surface sends into the channel (receiver model)
  float gain = 1;         // mirror reflectances along a multi-bounce path
  float threshold_w = 0;  // the threshold it was detected against
  float noise_w = 0;      // the noise sigma it was detected against (0: no noise model)
  std::uint32_t object_id = 0;
  std::uint16_t material = 0;
  std::uint8_t ray = 0;
  ReturnKind kind = ReturnKind::kNone;  // kNone: dropped
};

// What blooming deposits on a beam: a candidate at the source's range, kept apart from the beam's
// own until detection merges it in. Compact, as every beam's is reset each frame.
struct Bloom {
  float range_m = 0;
  float power_w = 0;
  float lambertian = 0;
  bool present = false;
  // The candidate detection merges in.
  [[nodiscard]] Pulse pulse() const {
    Pulse p;
    p.range_m = range_m;
    p.power_w = power_w;
    p.lambertian = lambertian;
    p.kind = ReturnKind::kBloom;
    return p;
  }
};

// Allocates in transparent huge pages where the kernel offers them on request (madvise): the
// frame's candidate slots (138 MB for an OS1-128 2048x10) are walked at a stride of one beam,
// which with 4 KiB pages costs a TLB miss every seventh beam.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  explicit HugePageAllocator(const HugePageAllocator<U>& /*other*/) {}
  T* allocate(std::size_t n);
  void deallocate(T* p, std::size_t /*n*/) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>& /*other*/) const {
    return true;
  }
};

struct BeamWork {
  static constexpr int kMaxPulses = 12;
  std::vector<Pulse, HugePageAllocator<Pulse>> pulses;  // beams x kMaxPulses
  std::vector<std::uint8_t> pulse_count;                // per beam
  std::vector<float> range_offset_m;         // reported minus geometric range (Ouster origin)
  std::vector<std::uint16_t> drops_crossed;  // rain drops the beam went through
  std::vector<Bloom> bloom;                  // per beam, from blooming
  std::vector<float> ambient_w;              // per beam: the sunlight the channel sees
  std::vector<std::int8_t> echo_pick;        // beams x kMaxEchoes: index of the pulse, -1 none
  void resize(std::size_t beams);
};

// Frame-wide constants the stages read, derived once per frame from the weather.
struct FrameConstants {
  explicit FrameConstants(physics::BeamCone cone) : beam(cone) {}
  physics::BeamCone beam;
  double system_constant = 0;  // K = E_P C_A (W m^2 sr), from the datasheet or seed 000
  double noise_w = 0;
  double threshold_w = 0;
  double threshold_sigmas = 3;
  double clear_extinction_per_m = 0;
  double rain_extinction_per_m = 0;
  double rain_drops_per_m3 = 0;
  double rain_slope_per_mm = 0;
  double multibounce_resolution_deg = 0;
  double sun_direction[3] = {0, 0, 1};
};

// The beams [begin, end) of one frame a stage runs on, and everything it may read.
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
  DrawKey key;  // beam and stage filled in per draw
};

// What a stage reads and writes, checked when the chain is built.
enum Products : std::uint32_t {
  kHitsIn = 1u << 0,
  kPulses = 1u << 1,
  kPower = 1u << 2,
  kBloomed = 1u << 3,
  kDetections = 1u << 4,
  kEchoesOut = 1u << 5,
  kReported = 1u << 6,
};

// What a stage is built from.
struct StageSetup {
  const ScanPattern& pattern;
  const PhysicsParams& params;
  ReturnMode return_mode;
};

class Stage {
 public:
  virtual ~Stage() = default;
  // Called once per frame, before any block runs: per-frame tables and draws. `key` is the
  // frame's draw key (beam and stage 0).
  virtual void begin_frame(const FrameHits& /*hits*/, const FrameConstants& /*constants*/,
                           const PhysicsParams& /*params*/, const DrawKey& /*key*/) {}
  // Per-beam stages run on blocks of beams, in parallel. A frame stage (the registry says which)
  // runs on a range of whole columns at a time, [begin, end) in beams, and may parallelise
  // inside: what it writes for those columns is the same whatever the ranges.
  virtual void run(const BlockContext& block) const = 0;
  // A frame stage: how many columns either side of a column it reads (wrapping round the
  // frame), so that a frame streamed in columns can run it before the frame is complete; -1
  // when it needs the whole frame at once.
  [[nodiscard]] virtual int column_reach() const { return -1; }
  // The system constant K of the range equation, for the stages that set the power scale (the
  // surface models); 0 for the others.
  [[nodiscard]] virtual double system_constant() const { return 0; }
};

}  // namespace lidaremu::core
