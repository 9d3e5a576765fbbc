// PHYSICS.md section 8 (seed 003): which detected returns the sensor reports. Plane 0 holds the
// single-return mode's echo; dual adds the last (or, when the strongest is the last, the second
// strongest), triple the next strongest; first+last and first+strongest (Hesai) add their second
// echo only when it is another one; a further echo must lie the minimum separation away from
// those kept. The mode comes from the sensor's return mode (Velodyne) or profile (Ouster).
#include <algorithm>
#include <cmath>
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class EchoSelectionStage final : public Stage {
 public:
  explicit EchoSelectionStage(ReturnMode mode) : mode_(mode) {}
  void run(const BlockContext& b) const override {
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
      const int count = b.work.pulse_count[beam];
      std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
      std::fill(pick, pick + FrameReturns::kMaxEchoes, std::int8_t{-1});
      int strongest = -1, first = -1, last = -1;
      for (int k = 0; k < count; ++k) {
        if (pulses[k].kind == ReturnKind::kNone) continue;
        if (first < 0) first = k;
        last = k;  // sorted by range
        if (strongest < 0 || pulses[k].power_w > pulses[strongest].power_w) strongest = k;
      }
      if (strongest < 0) continue;
      const auto separated = [&](int k, int upto) {
        for (int e = 0; e < upto; ++e) {
          if (std::fabs(pulses[k].range_m - pulses[pick[e]].range_m) <
              b.params.echo_min_separation_m) {
            return false;
          }
        }
        return true;
      };
      const auto next_strongest = [&](int upto) {
        int best = -1;
        for (int k = 0; k < count; ++k) {
          if (pulses[k].kind == ReturnKind::kNone || !separated(k, upto)) continue;
          if (best < 0 || pulses[k].power_w > pulses[best].power_w) best = k;
        }
        return best;
      };
      switch (mode_) {
        case ReturnMode::kStrongest:
          pick[0] = static_cast<std::int8_t>(strongest);
          break;
        case ReturnMode::kLast:
          pick[0] = static_cast<std::int8_t>(last);
          break;
        case ReturnMode::kFirst:
          pick[0] = static_cast<std::int8_t>(first);
          break;
        case ReturnMode::kTwoStrongest:
          pick[0] = static_cast<std::int8_t>(strongest);
          pick[1] = static_cast<std::int8_t>(next_strongest(1));
          break;
        case ReturnMode::kFirstLast:
          // The last is a second echo only when it is another one, far enough from the first.
          pick[0] = static_cast<std::int8_t>(first);
          if (last != first && separated(last, 1)) pick[1] = static_cast<std::int8_t>(last);
          break;
        case ReturnMode::kFirstStrongest:
          pick[0] = static_cast<std::int8_t>(strongest);
          if (first != strongest && separated(first, 1)) pick[1] = static_cast<std::int8_t>(first);
          break;
        case ReturnMode::kDual:
        case ReturnMode::kTriple: {
          pick[0] = static_cast<std::int8_t>(strongest);
          const int second = last != strongest && separated(last, 1) ? last : next_strongest(1);
          pick[1] = static_cast<std::int8_t>(second);
          if (mode_ == ReturnMode::kTriple && second >= 0) {
            pick[2] = static_cast<std::int8_t>(next_strongest(2));
          }
          break;
        }
      }
    }
  }

 private:
  ReturnMode mode_;
};

}  // namespace

std::unique_ptr<Stage> make_echo_selection(const StageSetup& setup) {
  return std::make_unique<EchoSelectionStage>(setup.return_mode);
}

}  // namespace lidaremu::core::stages
