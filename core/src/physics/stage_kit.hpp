#pragma once
// Helpers the stage files share: a beam's candidate list, its random streams, the rays' shares
// of the beam, merging pulses the detector cannot separate.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "lidaremu/core/physics/stage.hpp"
#include "lidaremu/core/simd.hpp"

namespace lidaremu::core::stage_kit {

inline constexpr int kMaxRaysUsed = 12;  // rays beyond this are ignored (the seed uses 5)
// Reflectivity is estimated as the sensor does: from power and range, assuming clear air.
inline constexpr double kCalibrationVisibilityM = 23000.0;

inline CounterRng rng_for(const BlockContext& block, std::size_t beam, StageId stage) {
  DrawKey k = block.key;
  k.beam = static_cast<std::uint32_t>(beam);
  k.stage = static_cast<std::uint16_t>(stage);
  return CounterRng(k);
}

// The key of a stage's draws in this block (the beam is each draw's own).
inline DrawKey key_for(const BlockContext& block, StageId stage) {
  DrawKey k = block.key;
  k.stage = static_cast<std::uint16_t>(stage);
  return k;
}

// The stages that draw random numbers draw a run of beams' at once, in SIMD lanes (simd.hpp):
// runs of at most kDrawRun beams, small enough for buffers on the stack.
inline constexpr std::size_t kDrawRun = 256;

// Asks the cache for the candidates of beams [first, last), as many slots as the most any of
// them has.
inline void prefetch_candidates(const BlockContext& b, std::size_t first, std::size_t last) {
  if (first >= last) return;
  const auto counts = std::span(b.work.pulse_count).subspan(first, last - first);
  const int slots = *std::max_element(counts.begin(), counts.end());
  b.work.pulses.prefetch(first, last, slots);
}

// Calls body(first, last) for consecutive runs [first, last) covering the block; when the
// block's candidates are out of cache, the next run's are asked for while the body works on
// this one's.
template <typename Body>
void for_each_run(const BlockContext& b, Body&& body) {
  if (b.candidates_cold) prefetch_candidates(b, b.begin, std::min(b.begin + kDrawRun, b.end));
  for (std::size_t first = b.begin; first < b.end; first += kDrawRun) {
    const std::size_t last = std::min(first + kDrawRun, b.end);
    if (b.candidates_cold) prefetch_candidates(b, last, std::min(last + kDrawRun, b.end));
    body(first, last);
  }
}

// The normal draws a run of beams needs (draw d of beam b for some pairs only), drawn together in
// SIMD lanes, then taken back in the order they were asked for.
class RunNormals {
 public:
  static constexpr std::size_t kCapacity = kDrawRun * BeamWork::kMaxPulses;
  void clear() { size_ = taken_ = 0; }
  void ask(std::size_t beam, int draw) {
    beams_[size_] = static_cast<std::uint32_t>(beam);
    draws_[size_] = static_cast<std::uint32_t>(draw);
    ++size_;
  }
  void draw_all(const DrawKey& key) {
    simd::normals_at(key, std::span(beams_.data(), size_), std::span(draws_.data(), size_),
                     std::span(values_.data(), size_));
  }
  float take() { return values_[taken_++]; }
  // Every draw, in the order asked (after draw_all).
  [[nodiscard]] std::span<const float> drawn() const { return {values_.data(), size_}; }

 private:
  std::array<std::uint32_t, kCapacity> beams_;
  std::array<std::uint32_t, kCapacity> draws_;
  std::array<float, kCapacity> values_;
  std::size_t size_ = 0;
  std::size_t taken_ = 0;
};

// A beam's candidate slots: pulses_of(b, beam)[k] is slot k (read or written through).
class BeamPulses {
 public:
  BeamPulses(const PulsePlanes& planes, std::size_t beam) : planes_(planes), beam_(beam) {}
  PulseRef operator[](int slot) const { return planes_.at(beam_, slot); }

 private:
  const PulsePlanes& planes_;
  std::size_t beam_;
};

inline BeamPulses pulses_of(const BlockContext& b, std::size_t beam) {
  return {b.work.pulses, beam};
}

// The rays of a beam the stages use.
inline int rays_used(const BlockContext& b) {
  return std::min<int>(b.hits.layout.rays_per_beam, kMaxRaysUsed);
}

// When the beam is full: the candidate replaces the weakest if stronger.
void replace_weakest(const BlockContext& b, std::size_t beam, const Pulse& p);

// Adds a candidate; when the beam is full, it replaces the weakest if stronger.
inline void add_pulse(const BlockContext& b, std::size_t beam, const Pulse& p) {
  auto& count = b.work.pulse_count[beam];
  if (count < BeamWork::kMaxPulses) {
    pulses_of(b, beam)[count++] = p;
    return;
  }
  replace_weakest(b, beam, p);
}

// Calls visit(beam, pulse) for every candidate of every beam of the block.
template <typename Visit>
void for_each_pulse(const BlockContext& b, Visit&& visit) {
  for (std::size_t beam = b.begin; beam < b.end; ++beam) {
    const BeamPulses pulses = pulses_of(b, beam);
    for (int k = 0; k < b.work.pulse_count[beam]; ++k) visit(beam, pulses[k]);
  }
}

// Share of the beam's power a ray carries: the centre and a ring at the 1/e^2 edge of a
// Gaussian beam (seed 000's roses), normalised so a beam fully on one surface returns as one ray.
double ray_weight(int ray, int rays);

inline Eigen::Vector3d hit_point(const FrameHits& h, std::size_t i) {
  return {h.x[i], h.y[i], h.z[i]};
}
inline Eigen::Vector3d hit_normal(const FrameHits& h, std::size_t i) {
  return {h.nx[i], h.ny[i], h.nz[i]};
}

// Sorts a beam's candidates (and its bloom contribution) by range and merges those closer than
// the range resolution into one return whose power is the sum (seed 000, 1.3.5). Returns the
// number of merged returns.
int merge_pulses(const BlockContext& b, std::size_t beam);

// Merges each beam's candidates, then calls visit(beam, pulse, index) for every merged return.
template <typename Visit>
void for_each_merged(const BlockContext& b, Visit&& visit) {
  for (std::size_t beam = b.begin; beam < b.end; ++beam) {
    const int count = merge_pulses(b, beam);
    const BeamPulses pulses = pulses_of(b, beam);
    for (int k = 0; k < count; ++k) visit(beam, pulses[k], k);
  }
}

}  // namespace lidaremu::core::stage_kit
