// PHYSICS.md section 7 (seed 001): beam-level blooming. Beams bright enough to reach a
// neighbour above the noise scatter kernel-weighted copies of their strongest return to the beams
// around them; contributions at one range (within dR) add, different ranges do not: the dominant
// bin is kept. Beams that cannot bloom are skipped (the seed's slice skipping).
#include <tbb/blocked_range.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "lidaremu/core/parallel_blocks.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class BloomingStage final : public Stage {
 public:
  // The kernel depends only on the scan grid and the parameters: tabulated once per pipeline, in
  // the beams' true angles (seed 001: kappa x eta over the angle between two beams). Beams of one
  // column do not share an azimuth (Ouster's per-channel offsets, +-3 deg; Velodyne's firing
  // times and rot corrections), so each pair of channels has its own azimuth weights by column
  // offset; the core is elliptic like the beam (horizontal and vertical divergence).
  BloomingStage(const ScanPattern& pattern, const PhysicsParams& prm)
      : channels_(pattern.model->channels), columns_(pattern.columns_per_frame) {
    const BeamGeometry geometry(pattern);
    const auto kernel = [&](double offset_deg, double core_sigma_deg) {
      return physics::bloom_kernel_1d(offset_deg, core_sigma_deg, prm.bloom_skirt_level,
                                      prm.bloom_skirt_decay_deg);
    };
    const auto degrees = [](double rad) { return rad * 180.0 / std::numbers::pi; };
    const auto azimuth_of = [&](std::uint32_t column, std::uint16_t channel) {
      const Eigen::Vector3d d = geometry.ray(column, channel).direction;
      return degrees(std::atan2(d.y(), d.x()));
    };
    const auto wrap = [](double deg) { return std::remainder(deg, 360.0); };
    const int columns = pattern.columns_per_frame;
    // Signed azimuth step from one column to the next, and each channel's azimuth in column 0.
    const double step = wrap(azimuth_of(1, 0) - azimuth_of(0, 0));
    std::vector<double> azimuth(static_cast<std::size_t>(channels_));
    std::vector<double> elevation(static_cast<std::size_t>(channels_));
    for (int ch = 0; ch < channels_; ++ch) {
      const auto c = static_cast<std::uint16_t>(ch);
      azimuth[std::size_t(ch)] = azimuth_of(0, c);
      elevation[std::size_t(ch)] = degrees(std::asin(geometry.ray(0, c).direction.z()));
    }
    const double extent = prm.bloom_extent_deg;
    // For each channel, the channels its kernel reaches, strongest in elevation first (a source
    // stops at the first it cannot lift above the noise), each with its azimuth weights.
    for (int from = 0; from < channels_; ++from) {
      reach_begin_.push_back(reached_.size());
      ColumnSpan span{columns, -columns};  // empty until a weight is tabulated
      for (int to = 0; to < channels_; ++to) {
        const double d_el = elevation[std::size_t(to)] - elevation[std::size_t(from)];
        if (std::fabs(d_el) > extent) continue;
        // Column offsets dc whose azimuth difference dc step + az(to) - az(from) is in reach.
        const double skew = wrap(azimuth[std::size_t(to)] - azimuth[std::size_t(from)]);
        const double lo = (-extent - skew) / step, hi = (extent - skew) / step;
        const int first = static_cast<int>(std::ceil(std::min(lo, hi)));
        const int last = static_cast<int>(std::floor(std::max(lo, hi)));
        Reached r{kernel(d_el, prm.bloom_core_sigma_v_deg), static_cast<std::uint16_t>(to), first,
                  az_weights_.size(), 0};
        for (int dc = first; dc <= last && dc - first < columns; ++dc) {
          const double weight = kernel(dc * step + skew, prm.bloom_core_sigma_h_deg);
          az_weights_.push_back(weight);
          if (!(dc == 0 && to == from))
            strongest_neighbour_ = std::max(strongest_neighbour_, weight * r.weight);
          column_reach_ = std::max(column_reach_, std::abs(dc));
          span = {std::min(span.first, dc), std::max(span.last, dc)};
        }
        r.count = az_weights_.size() - r.az_begin;
        mark_peak(r);
        reached_.push_back(r);
      }
      std::stable_sort(reached_.begin() + static_cast<std::ptrdiff_t>(reach_begin_.back()),
                       reached_.end(),
                       [](const Reached& l, const Reached& r) { return l.weight > r.weight; });
      source_span_.push_back(span);
    }
    reach_begin_.push_back(reached_.size());
    column_reach_ = std::min(column_reach_, columns / 2);
  }
  // Gathers per block of destination columns, in parallel: the destination columns are the
  // block's [begin, end) in beams. Each block walks its sources in the order one serial pass over
  // the frame would (ascending beam index), so every bin receives the same contributions in the
  // same order: the same floats with one thread or many, and whatever the ranges a streamed
  // frame is run in.
  void run(const BlockContext& b) const override {
    const int columns = static_cast<int>(b.hits.shape.columns);
    const int channels = b.hits.shape.channels;
    const auto dest_begin = static_cast<int>(b.begin / static_cast<std::size_t>(channels));
    const auto dest_end = static_cast<int>(b.end / static_cast<std::size_t>(channels));
    if (column_reach(columns) < 0) {
      scatter(b, dest_begin, dest_end, {{{0, columns - 1}, {0, -1}, {0, -1}}});
      return;
    }
    parallel_blocks(tbb::blocked_range<int>(dest_begin, dest_end, kColumnsPerBlock), &b.work,
                    [&](const tbb::blocked_range<int>& r) {
                      const int lo = r.begin() - column_reach_;
                      const int hi = r.end() - 1 + column_reach_;
                      // Source columns in ascending order: the wrapped-around low end, the
                      // window itself, the wrapped-around high end.
                      const SourceRanges sources{{{0, hi - columns},
                                                  {std::max(lo, 0), std::min(hi, columns - 1)},
                                                  {lo + columns, columns - 1}}};
                      scatter(b, r.begin(), r.end(), sources);
                    });
  }
  // Each beam's brightest candidate, kept when it can reach a neighbour above the noise. Read
  // here, in cache after the per-beam stages, rather than in scatter, which reads each beam once
  // per block its reach overlaps from slots that lie in tiles a page apart (most of blooming's
  // time was waiting on those loads).
  void prepare_beams(const BlockContext& b) const override {
    const double noise = b.constants.noise_w;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      const stage_kit::BeamPulses pulses = stage_kit::pulses_of(b, beam);
      int brightest_slot = -1;
      for (int k = 0; k < b.work.pulse_count[beam]; ++k) {
        if (pulses[k].kind != ReturnKind::kNone &&
            (brightest_slot < 0 || pulses[k].power_w > pulses[brightest_slot].power_w)) {
          brightest_slot = k;
        }
      }
      Bloom& source = b.work.bloom_source[beam];
      source.present =
          brightest_slot >= 0 && !(pulses[brightest_slot].power_w * strongest_neighbour_ < noise);
      if (!source.present) continue;
      const PulseRef brightest = pulses[brightest_slot];
      source.range_m = brightest.range_m;
      source.power_w = brightest.power_w;
      source.lambertian = brightest.lambertian;
    }
  }
  [[nodiscard]] int column_reach() const override { return column_reach(columns_); }
  // Two blocks a run: both cores of the smallest machine busy, and each block's reach read for
  // 128 columns written rather than for a streaming step's (64 for an OS1-128: one block, run
  // alone on the processing thread while the workers idled, reading 2 reach + 64 columns).
  [[nodiscard]] std::uint32_t streaming_run_columns() const override {
    return 2 * kColumnsPerBlock;
  }

 private:
  static constexpr int kColumnsPerBlock = 128;
  // The kernel's reach in columns; -1 where its window and a block span the frame (every source
  // is then gathered for every destination).
  [[nodiscard]] int column_reach(int columns) const {
    return 2 * column_reach_ + kColumnsPerBlock >= columns ? -1 : column_reach_;
  }
  // Inclusive column ranges; empty when first > last.
  using SourceRanges = std::array<std::array<int, 2>, 3>;

  // Blooms the sources in `sources` into destination columns [dest_begin, dest_end).
  void scatter(const BlockContext& b, int dest_begin, int dest_end,
               const SourceRanges& sources) const {
    const auto& prm = b.params;
    const auto shape = b.hits.shape;
    const auto columns = static_cast<int>(shape.columns);
    const double noise = b.constants.noise_w;
    for (const auto& [first_column, last_column] : sources) {
      for (int column = first_column; column <= last_column; ++column) {
        for (int channel = 0; channel < shape.channels; ++channel) {
          const std::size_t src =
              shape.beam(static_cast<std::uint32_t>(column), static_cast<std::uint16_t>(channel));
          const Bloom brightest = b.work.bloom_source[src];  // prepare_beams
          if (!brightest.present) continue;
          // A source whose channel cannot reach the block deposits nothing in it: skipped
          // before its list is read. The block's sources reach as far as the widest channel
          // pair (82 columns on a VLS-128, whose lasers sit up to 6.4 degrees apart in azimuth),
          // where most channels reach less.
          if (!reaches(source_span_[std::size_t(channel)], column, dest_begin, dest_end, columns))
            continue;
          const Reached* reached_begin = reached_.data() + reach_begin_[std::size_t(channel)];
          const Reached* reached_end = reached_.data() + reach_begin_[std::size_t(channel) + 1];
          // A source adds at most once to each bin, so the order of its own deposits does not
          // matter; the channels come by falling elevation weight: stop at the first whose
          // weight alone cannot lift a beam above the noise.
          for (const Reached* to = reached_begin; to != reached_end; ++to) {
            const double p_el = brightest.power_w * to->weight;
            if (p_el < noise) break;
            // Nor where even the largest azimuth weight leaves it below the noise (no weight
            // of the channel is then read: that was half the channels a VLS-128's sources
            // visited).
            if (p_el * to->peak_weight < noise) continue;
            const double* weights = az_weights_.data() + to->az_begin;
            // The weights that may reach the noise: [lo, hi). Falling away from the peak on both
            // sides, they are one run around it, found without visiting the rest.
            std::size_t lo = 0;
            std::size_t hi = to->count;
            if (to->unimodal) {
              for (hi = to->peak; hi < to->count && !(p_el * weights[hi] < noise); ++hi) {
              }
              for (lo = to->peak; lo > 0 && !(p_el * weights[lo - 1] < noise); --lo) {
              }
            }
            int dc = to->first_dc + static_cast<int>(lo);
            int nc = wrap_column(column + dc, columns);
            for (std::size_t i = lo; i < hi; ++i, ++dc, nc = nc + 1 == columns ? 0 : nc + 1) {
              const double power = p_el * weights[i];
              if (power < noise || nc < dest_begin || nc >= dest_end) continue;
              if (dc == 0 && to->channel == channel) continue;
              deposit(b.work.bloom[shape.beam(static_cast<std::uint32_t>(nc), to->channel)],
                      brightest, power, prm.range_resolution_m);
            }
          }
        }
      }
    }
  }

  // Column offsets from a source, inclusive; empty when first > last.
  struct ColumnSpan {
    int first;
    int last;
  };
  // Whether columns column + span.first ... column + span.last (round the turn) meet
  // [dest_begin, dest_end): two arcs meet where one holds the other's start.
  static bool reaches(const ColumnSpan& span, int column, int dest_begin, int dest_end,
                      int columns) {
    if (span.first > span.last) return false;
    const int length = span.last - span.first + 1;
    if (length >= columns) return true;
    const int start = wrap_column(column + span.first, columns);
    return wrap_column(dest_begin - start, columns) < length ||
           (start >= dest_begin && start < dest_end);
  }

  // The column `c` names round the turn: ((c % columns) + columns) % columns.
  static int wrap_column(int c, int columns) {
    if (c >= 0 && c < columns) return c;
    if (c < 0 && c >= -columns) return c + columns;
    if (c >= columns && c < 2 * columns) return c - columns;
    return (c % columns + columns) % columns;
  }

  static void deposit(Bloom& bin, const Bloom& source, double power, double resolution) {
    if (bin.present && std::fabs(bin.range_m - source.range_m) < resolution) {
      bin.power_w += static_cast<float>(power);
      return;
    }
    if (!bin.present || power > bin.power_w) {
      bin.range_m = source.range_m;
      bin.power_w = static_cast<float>(power);
      bin.lambertian = source.lambertian;
      bin.present = true;
    }
  }

  struct Reached {
    double weight;  // the kernel at the elevation difference
    std::uint16_t channel;
    int first_dc;          // column offset of the first azimuth weight
    std::size_t az_begin;  // where its azimuth weights start in az_weights_
    std::size_t count;
    std::size_t peak = 0;    // the largest azimuth weight's index
    double peak_weight = 0;  // and its value (read here, not from az_weights_)
    bool unimodal = false;   // the weights never rise moving away from the peak
  };
  // The kernel falls with the angle from its centre, so a source's deposits on a channel are one
  // run of columns around the peak; checked on the tabulated numbers (else every weight is
  // visited), so the deposits, and the bytes, are those of a full scan. A source deposits once
  // per bin, so the order of its own deposits does not change a float.
  void mark_peak(Reached& r) const {
    const double* w = az_weights_.data() + r.az_begin;
    if (r.count == 0) return;
    r.peak = static_cast<std::size_t>(std::max_element(w, w + r.count) - w);
    r.peak_weight = w[r.peak];
    r.unimodal = true;
    for (std::size_t i = r.peak + 1; i < r.count; ++i) r.unimodal &= w[i] <= w[i - 1];
    for (std::size_t i = r.peak; i > 0; --i) r.unimodal &= w[i - 1] <= w[i];
  }
  int channels_;
  int columns_;
  double strongest_neighbour_ = 0;  // the largest kernel weight on any other beam
  int column_reach_ = 0;
  std::vector<ColumnSpan> source_span_;  // per source channel: the offsets its weights cover
  std::vector<double> az_weights_;
  std::vector<Reached> reached_;          // per source channel, by falling elevation weight
  std::vector<std::size_t> reach_begin_;  // where each source channel's list starts in reached_
};

class NoBloomingStage final : public Stage {
 public:
  void run(const BlockContext& /*b*/) const override {}
};

}  // namespace

std::unique_ptr<Stage> make_blooming(const StageSetup& setup) {
  // The kernel is tabulated over a grid's neighbours; a table scan (Livox) has no grid, and its
  // neighbours in angle are firings far apart in time: not modelled there.
  if (setup.pattern.table != nullptr) return std::make_unique<NoBloomingStage>();
  return std::make_unique<BloomingStage>(setup.pattern, setup.params);
}

}  // namespace lidaremu::core::stages
