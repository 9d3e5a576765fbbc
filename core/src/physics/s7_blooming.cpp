// PHYSICS.md section 7 (seed 001): beam-level blooming. Beams bright enough to reach a
// neighbour above the noise scatter kernel-weighted copies of their strongest return to the beams
// around them; contributions at one range (within dR) add, different ranges do not: the dominant
// bin is kept. Beams that cannot bloom are skipped (the seed's slice skipping).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class BloomingStage final : public Stage {
 public:
  // The kernel depends only on the scan grid and the parameters: tabulated once per pipeline
  // (by column offset, and by pair of channels), the same values the frame loop would compute.
  BloomingStage(const ScanPattern& pattern, const PhysicsParams& prm)
      : channels_(pattern.model->channels) {
    const auto kernel = [&](double offset_deg) {
      return physics::bloom_kernel_1d(offset_deg, prm.bloom_core_sigma_deg, prm.bloom_skirt_level,
                                      prm.bloom_skirt_decay_deg);
    };
    const int columns = pattern.columns_per_frame;
    const double column_step_deg = 360.0 / columns;
    nearest_ = kernel(column_step_deg);
    column_reach_ =
        std::min<int>(static_cast<int>(prm.bloom_extent_deg / column_step_deg), columns / 2);
    for (int dc = -column_reach_; dc <= column_reach_; ++dc) {
      by_column_.push_back(kernel(dc * column_step_deg));
    }
    // For each channel, the channels its kernel reaches, strongest first: a source stops at the
    // first one it cannot lift above the noise.
    const auto& elevation = pattern.model->elevation_deg;
    for (int from = 0; from < channels_; ++from) {
      reach_begin_.push_back(reached_.size());
      for (int to = 0; to < channels_; ++to) {
        const double d_el = elevation[to] - elevation[from];
        if (std::fabs(d_el) <= prm.bloom_extent_deg) {
          reached_.push_back({kernel(d_el), static_cast<std::uint16_t>(to)});
        }
      }
      std::stable_sort(reached_.begin() + static_cast<std::ptrdiff_t>(reach_begin_.back()),
                       reached_.end(),
                       [](const Reached& l, const Reached& r) { return l.weight > r.weight; });
    }
    reach_begin_.push_back(reached_.size());
  }
  // Gathers per block of destination columns, in parallel. Each block walks its sources in the
  // order one serial pass over the frame would (ascending beam index), so every bin receives the
  // same contributions in the same order: the same floats with one thread or many.
  void run(const BlockContext& b) const override {
    const int columns = static_cast<int>(b.hits.shape.columns);
    constexpr int kColumnsPerBlock = 128;
    if (2 * column_reach_ + kColumnsPerBlock >= columns) {
      scatter(b, 0, columns, {{{0, columns - 1}, {0, -1}, {0, -1}}});
      return;
    }
    LIDAREMU_TSAN_RELEASE(&b.work);
    tbb::parallel_for(tbb::blocked_range<int>(0, columns, kColumnsPerBlock),
                      [&](const tbb::blocked_range<int>& r) {
                        LIDAREMU_TSAN_ACQUIRE(&b.work);
                        const int lo = r.begin() - column_reach_;
                        const int hi = r.end() - 1 + column_reach_;
                        // Source columns in ascending order: the wrapped-around low end, the
                        // window itself, the wrapped-around high end.
                        const SourceRanges sources{{{0, hi - columns},
                                                    {std::max(lo, 0), std::min(hi, columns - 1)},
                                                    {lo + columns, columns - 1}}};
                        scatter(b, r.begin(), r.end(), sources);
                        LIDAREMU_TSAN_RELEASE(&b.work);
                      });
    LIDAREMU_TSAN_ACQUIRE(&b.work);
  }

 private:
  // Inclusive column ranges; empty when first > last.
  using SourceRanges = std::array<std::array<int, 2>, 3>;

  // Blooms the sources in `sources` into destination columns [dest_begin, dest_end).
  void scatter(const BlockContext& b, int dest_begin, int dest_end,
               const SourceRanges& sources) const {
    const auto& prm = b.params;
    const auto shape = b.hits.shape;
    const auto columns = static_cast<int>(shape.columns);
    for (const auto& [first_column, last_column] : sources) {
      for (int column = first_column; column <= last_column; ++column) {
        for (int channel = 0; channel < shape.channels; ++channel) {
          const std::size_t src =
              shape.beam(static_cast<std::uint32_t>(column), static_cast<std::uint16_t>(channel));
          const Pulse* pulses = stage_kit::pulses_of(b, src);
          const Pulse* brightest = nullptr;
          for (int k = 0; k < b.work.pulse_count[src]; ++k) {
            if (pulses[k].kind != ReturnKind::kNone &&
                (!brightest || pulses[k].power_w > brightest->power_w)) {
              brightest = &pulses[k];
            }
          }
          if (!brightest || brightest->power_w * nearest_ < b.constants.noise_w) continue;
          const Reached* reached_begin = reached_.data() + reach_begin_[std::size_t(channel)];
          const Reached* reached_end = reached_.data() + reach_begin_[std::size_t(channel) + 1];
          // A source adds at most once to each bin, so the order of its own deposits does not
          // matter; the power falls along the list (rounding is monotonic): stop at the first
          // channel below the noise.
          for (int dc = -column_reach_; dc <= column_reach_; ++dc) {
            const int nc = (column + dc + columns) % columns;
            if (nc < dest_begin || nc >= dest_end) continue;
            const double k_az = by_column_[static_cast<std::size_t>(dc) + column_reach_];
            if (brightest->power_w * k_az < b.constants.noise_w) continue;
            for (const Reached* to = reached_begin; to != reached_end; ++to) {
              const double power = brightest->power_w * k_az * to->weight;
              if (power < b.constants.noise_w) break;
              if (dc == 0 && to->channel == channel) continue;
              deposit(b.work.bloom[shape.beam(static_cast<std::uint32_t>(nc), to->channel)],
                      *brightest, power, prm.range_resolution_m);
            }
          }
        }
      }
    }
  }

  static void deposit(Pulse& bin, const Pulse& source, double power, double resolution) {
    if (bin.kind != ReturnKind::kNone && std::fabs(bin.range_m - source.range_m) < resolution) {
      bin.power_w += static_cast<float>(power);
      return;
    }
    if (bin.kind == ReturnKind::kNone || power > bin.power_w) {
      bin = Pulse{};
      bin.range_m = source.range_m;
      bin.power_w = static_cast<float>(power);
      bin.lambertian = source.lambertian;
      bin.kind = ReturnKind::kBloom;
    }
  }

  int channels_;
  double nearest_ = 0;
  int column_reach_ = 0;
  std::vector<double> by_column_;  // kernel at column offsets -reach..reach
  struct Reached {
    double weight;
    std::uint16_t channel;
  };
  std::vector<Reached> reached_;          // per source channel, by falling weight
  std::vector<std::size_t> reach_begin_;  // where each source channel's list starts in reached_
};

}  // namespace

std::unique_ptr<Stage> make_blooming(const StageSetup& setup) {
  return std::make_unique<BloomingStage>(setup.pattern, setup.params);
}

}  // namespace lidaremu::core::stages
