// PHYSICS.md sections 0 and 3 (seed 000, 1.3.3; seed 001): detector noise, plus the shot noise of
// ambient sunlight on the target, and a threshold of k sigma, per merged return; and the noise's
// own false alarms, on every beam whether it hit something or not.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

// A frame's noise false alarms: which beams, where in the range gate, how far above threshold.
struct FalseAlarm {
  std::uint32_t beam;
  float range_m;
  float excess_sigmas;  // above the threshold, in noise sigmas
};

class ThresholdDetectionStage final : public Stage {
 public:
  ThresholdDetectionStage() { alarms_.reserve(kMaxAlarms); }

  // Each range cell of each beam fires with probability Phi(-k); over the gate that is the
  // false-alarm rate per beam, so a frame has Poisson(rate x beams) of them, on beams, ranges and
  // excesses drawn once per frame from one stream (the same whatever the blocks).
  void begin_frame(const FrameHits& hits, const FrameConstants& c, const PhysicsParams& p,
                   const DrawKey& key) override {
    alarms_.clear();
    const std::size_t beams = hits.shape.beams();
    const double k = c.threshold_sigmas;
    const double cells = p.range_gate_m / p.range_resolution_m;
    const double per_beam = cells * 0.5 * std::erfc(k / std::numbers::sqrt2);
    DrawKey frame_key = key;
    frame_key.beam = 0xFFFFFFFFu;  // no beam: the frame's own stream
    frame_key.stage = static_cast<std::uint16_t>(StageId::kFalseAlarms);
    const CounterRng rng(frame_key);
    std::uint32_t draw = 0;
    const std::uint32_t count =
        std::min<std::uint32_t>(rng.poisson(per_beam * double(beams), draw), kMaxAlarms);
    for (std::uint32_t i = 0; i < count; ++i) {
      const auto w = rng.words(draw++);
      // The excess of a Gaussian beyond k sigma is close to exponential with rate k.
      const double u_excess = (w[2] + 0.5) * 0x1.0p-32;
      alarms_.push_back({static_cast<std::uint32_t>((std::uint64_t{w[0]} * beams) >> 32),
                         static_cast<float>((w[1] + 0.5) * 0x1.0p-32 * p.range_gate_m),
                         static_cast<float>(-std::log(u_excess) / k)});
    }
    std::sort(alarms_.begin(), alarms_.end(),
              [](const FalseAlarm& l, const FalseAlarm& r) { return l.beam < r.beam; });
  }

  void run(const BlockContext& b) const override {
    const auto& receiver = b.params.receiver;
    const double dark = b.constants.noise_w;
    const double k = b.constants.threshold_sigmas;
    const auto* alarm =
        std::lower_bound(alarms_.data(), alarms_.data() + alarms_.size(), b.begin,
                         [](const FalseAlarm& a, std::size_t beam) { return a.beam < beam; });
    const auto* alarms_end = alarms_.data() + alarms_.size();
    const DrawKey key = stage_kit::key_for(b, StageId::kDetection);
    const simd::DetectorNoise detector{dark, receiver.knee_w, k};
    // Merged return i of a beam takes draw i of the beam's stream.
    stage_kit::RunNormals z;
    // The run's merged returns (but the noise's own) in the order of their draws, detected
    // together in SIMD lanes.
    constexpr std::size_t kReturns = stage_kit::RunNormals::kCapacity;
    std::array<std::size_t, kReturns> pulse;  // index in the planes
    std::array<float, kReturns> power_w;
    std::array<float, kReturns> ambient_w;
    std::array<float, kReturns> noise_w;
    std::array<float, kReturns> threshold_w;
    std::array<std::int32_t, kReturns> detected;
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      z.clear();
      std::size_t n = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        for (; alarm != alarms_end && alarm->beam == beam; ++alarm) {
          // The threshold follows the noise (the ambient the channel sees included), so the rate
          // of false alarms stays what the threshold was set for, in the sun as in the dark.
          const double sigma = dark * receiver.noise_factor(b.work.ambient_w[beam]);
          Pulse noise;
          noise.range_m = alarm->range_m;
          noise.noise_w = static_cast<float>(sigma);
          noise.threshold_w = static_cast<float>(k * sigma);
          noise.power_w = static_cast<float>((k + alarm->excess_sigmas) * sigma);
          noise.kind = ReturnKind::kNoise;
          stage_kit::add_pulse(b, beam, noise);
        }
        const int count = stage_kit::merge_pulses(b, beam);
        for (int i = 0; i < count; ++i) {
          const std::size_t at = b.work.pulses.index(beam, i);
          const PulseRef p = b.work.pulses.at(at);
          if (p.kind == ReturnKind::kNoise) continue;  // the noise itself: detected as drawn
          z.ask(beam, i);
          pulse[n] = at;
          power_w[n] = p.power_w;
          ambient_w[n] = p.ambient_w;
          ++n;
        }
      }
      z.draw_all(key);
      simd::detect_against_noise({.power_w = power_w.data(),
                                  .ambient_w = ambient_w.data(),
                                  .z = z.drawn().data(),
                                  .noise_w = noise_w.data(),
                                  .threshold_w = threshold_w.data(),
                                  .detected = detected.data()},
                                 n, detector);
      for (std::size_t i = 0; i < n; ++i) {
        PulseRef p = b.work.pulses.at(pulse[i]);
        p.threshold_w = threshold_w[i];
        p.noise_w = noise_w[i];
        if (detected[i] != 0) {
          p.power_w = power_w[i];
        } else {
          p.kind = ReturnKind::kNone;
        }
      }
    });
  }

 private:
  static constexpr std::uint32_t kMaxAlarms = 65536;
  std::vector<FalseAlarm> alarms_;
};

}  // namespace

std::unique_ptr<Stage> make_detection_threshold(const StageSetup& /*setup*/) {
  return std::make_unique<ThresholdDetectionStage>();
}

}  // namespace lidaremu::core::stages
