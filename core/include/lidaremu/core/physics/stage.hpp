#pragma once
// What every physics stage shares: a beam's candidate returns (Pulse), the per-frame scratch
// (BeamWork), the frame-wide constants, the block a stage runs on, and the Stage interface. One
// stage per file in core/src/physics/, named after the stage and its PHYSICS.md section; the
// registry (stage_registry.hpp) lists them by name.
#include <array>
#include <cstddef>
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

// A candidate slot in the planes (PulsePlanes), by reference: its fields are read and written
// where they lie, as a Pulse's would be.
struct PulseRef {
  float& range_m;
  float& power_w;
  float& extent_m;
  float& lambertian;
  float& cos_incidence;
  float& ambient_w;
  float& gain;
  float& threshold_w;
  float& noise_w;
  std::uint32_t& object_id;
  std::uint16_t& material;
  std::uint8_t& ray;
  ReturnKind& kind;

  // Assignment copies the fields into the slot (a reference is never re-seated).
  // NOLINTNEXTLINE(misc-unconventional-assign-operator): a proxy's assignment writes through
  PulseRef& operator=(const Pulse& p) {
    range_m = p.range_m;
    power_w = p.power_w;
    extent_m = p.extent_m;
    lambertian = p.lambertian;
    cos_incidence = p.cos_incidence;
    ambient_w = p.ambient_w;
    gain = p.gain;
    threshold_w = p.threshold_w;
    noise_w = p.noise_w;
    object_id = p.object_id;
    material = p.material;
    ray = p.ray;
    kind = p.kind;
    return *this;
  }
  PulseRef& operator=(const PulseRef& p) { return *this = Pulse(p); }
  PulseRef& operator=(PulseRef&& p) noexcept { return *this = Pulse(p); }
  // NOLINTNEXTLINE(google-explicit-constructor): a slot reads as the Pulse it holds
  operator Pulse() const {
    return {range_m,     power_w, extent_m,  lambertian, cos_incidence, ambient_w, gain,
            threshold_w, noise_w, object_id, material,   ray,           kind};
  }
};

// Memory mapped zeroed and faulted in on first touch (in transparent huge pages where the kernel
// offers them on request), so that candidate slots no beam reaches cost nothing: most beams fill
// one or two of their twelve.
class ZeroedMemory {
 public:
  ZeroedMemory() = default;
  explicit ZeroedMemory(std::size_t bytes);
  ~ZeroedMemory();
  ZeroedMemory(const ZeroedMemory&) = delete;
  ZeroedMemory& operator=(const ZeroedMemory&) = delete;
  ZeroedMemory(ZeroedMemory&& other) noexcept;
  ZeroedMemory& operator=(ZeroedMemory&& other) noexcept;
  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// The frame's candidate slots, in tiles of 64 beams: for each tile and slot, each field of the
// tile's 64 beams lies together (64 ranges, then 64 powers, ...). A stage walking the beams reads
// each field it uses as runs of whole cache lines (a beam's twelve slots as one 528-byte record
// cost a line, and a TLB miss every seventh beam, per beam and stage), the several candidates of
// a beam lie within a few pages of each other (a plane per slot and field put 65 streams in 65
// pages for five rays), and the slots no beam of a tile reaches are never touched.
class PulsePlanes {
 public:
  static constexpr int kSlots = 12;
  static constexpr std::size_t kTileBeams = 64;
  void resize(std::size_t beams);
  // What resize maps for `beams` (the daemon's memory estimate).
  static std::size_t bytes_for(std::size_t beams);
  // Faults every page in now (a write per page): mapped zeroed on first touch, the slots would
  // otherwise come in page by page during the first frames with rain or echoes.
  void fault_in();
  // Where slot `slot` of `beam` lies, for at(): the same for every field.
  [[nodiscard]] static std::size_t index(std::size_t beam, int slot) {
    return ((beam / kTileBeams) * kSlots + static_cast<std::size_t>(slot)) * kTileBeams +
           beam % kTileBeams;
  }
  [[nodiscard]] PulseRef at(std::size_t index) const {
    std::byte* block = memory_.data() + (index / kTileBeams) * kBlockBytes;
    const std::size_t lane = index % kTileBeams;
    const auto field = [&]<typename T>(std::size_t offset, T* /*type*/) -> T& {
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the fields' own memory
      return reinterpret_cast<T*>(block + offset)[lane];
    };
    constexpr std::size_t kF = kTileBeams * sizeof(float);
    return {field(0 * kF, static_cast<float*>(nullptr)),
            field(1 * kF, static_cast<float*>(nullptr)),
            field(2 * kF, static_cast<float*>(nullptr)),
            field(3 * kF, static_cast<float*>(nullptr)),
            field(4 * kF, static_cast<float*>(nullptr)),
            field(5 * kF, static_cast<float*>(nullptr)),
            field(6 * kF, static_cast<float*>(nullptr)),
            field(7 * kF, static_cast<float*>(nullptr)),
            field(8 * kF, static_cast<float*>(nullptr)),
            field(kObjectIdAt, static_cast<std::uint32_t*>(nullptr)),
            field(kMaterialAt, static_cast<std::uint16_t*>(nullptr)),
            field(kRayAt, static_cast<std::uint8_t*>(nullptr)),
            field(kKindAt, static_cast<ReturnKind*>(nullptr))};
  }
  [[nodiscard]] PulseRef at(std::size_t beam, int slot) const { return at(index(beam, slot)); }
  // Asks the cache for every field of the first `slots` slots of the tiles holding beams
  // [first, last): a stage after a frame stage reads a frame's candidates long after they were
  // written, and the hardware prefetcher does not follow the tiles' page-apart strides.
  void prefetch(std::size_t first, std::size_t last, int slots) const;

 private:
  // One tile's slot: nine float fields, then object id, material, ray and kind.
  static constexpr std::size_t kObjectIdAt = 9 * kTileBeams * sizeof(float);
  static constexpr std::size_t kMaterialAt = kObjectIdAt + kTileBeams * sizeof(std::uint32_t);
  static constexpr std::size_t kRayAt = kMaterialAt + kTileBeams * sizeof(std::uint16_t);
  static constexpr std::size_t kKindAt = kRayAt + kTileBeams * sizeof(std::uint8_t);
  static constexpr std::size_t kBlockBytes = kKindAt + kTileBeams * sizeof(ReturnKind);
  static_assert(sizeof(Pulse) == 44 && kBlockBytes == kTileBeams * 44,
                "every field of Pulse has its place in a tile");
  ZeroedMemory memory_;
};

struct BeamWork {
  static constexpr int kMaxPulses = PulsePlanes::kSlots;
  PulsePlanes pulses;                        // beams x kMaxPulses candidate slots
  std::vector<std::uint8_t> pulse_count;     // per beam
  std::vector<float> range_offset_m;         // reported minus geometric range (Ouster origin)
  std::vector<std::uint16_t> drops_crossed;  // rain drops the beam went through
  std::vector<Bloom> bloom;                  // per beam, from blooming
  // Per beam: the candidate blooming spreads (present when it can reach a neighbour above the
  // noise), picked at the end of the per-beam stages while the beam's slots are in cache.
  std::vector<Bloom> bloom_source;
  std::vector<float> ambient_w;        // per beam: the sunlight the channel sees
  std::vector<std::int8_t> echo_pick;  // beams x kMaxEchoes: index of the pulse, -1 none
  void resize(std::size_t beams);
  // What resize allocates (the daemon's memory estimate).
  static std::size_t bytes_for(std::size_t beams);
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
  // The block's candidates were written before a frame stage ran on the whole range, so they
  // are out of cache: the first stage after it asks for them ahead (stage_kit::for_each_run).
  bool candidates_cold = false;
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
  // A frame stage: its per-beam part, run on each block of the per-beam stages just before it,
  // as their last step, while the block's candidates are still in cache (a frame stage reads
  // every beam of its reach again, and the candidate slots lie in tiles a page apart).
  virtual void prepare_beams(const BlockContext& /*block*/) const {}
  // A frame stage: how many columns either side of a column it reads (wrapping round the
  // frame), so that a frame streamed in columns can run it before the frame is complete; -1
  // when it needs the whole frame at once.
  [[nodiscard]] virtual int column_reach() const { return -1; }
  // A frame stage: the fewest columns worth a run of it while a frame streams in. A run reads
  // its reach either side of the columns it writes and parallelises over blocks of columns, so
  // a short one is a single block on one thread that reads more than it writes.
  [[nodiscard]] virtual std::uint32_t streaming_run_columns() const { return 1; }
  // The system constant K of the range equation, for the stages that set the power scale (the
  // surface models); 0 for the others.
  [[nodiscard]] virtual double system_constant() const { return 0; }
};

}  // namespace lidaremu::core
