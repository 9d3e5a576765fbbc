#include "lidaremu/core/pipeline.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

// Debian's libtbb is not built for ThreadSanitizer, so TSan cannot see that spawning the tasks
// orders the caller's writes before the workers' reads, nor that parallel_for's join orders the
// workers' writes before the caller's. State both edges, in TSan builds only.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);  // NOLINT(bugprone-reserved-identifier)
extern "C" void __tsan_release(void* addr);  // NOLINT(bugprone-reserved-identifier)
#define LIDAREMU_TSAN_RELEASE(addr) __tsan_release(addr)
#define LIDAREMU_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#else
#define LIDAREMU_TSAN_RELEASE(addr) static_cast<void>(addr)
#define LIDAREMU_TSAN_ACQUIRE(addr) static_cast<void>(addr)
#endif

namespace lidaremu::core {
namespace {

constexpr int kMaxRaysUsed = 12;  // rays beyond this are ignored (the seed uses 5)
constexpr int kMaxDropPulses = 3;
// Reflectivity is estimated as the sensor does: from power and range, assuming clear air.
constexpr double kCalibrationVisibilityM = 23000.0;

CounterRng rng_for(const BlockContext& block, std::size_t beam, StageId stage) {
  DrawKey k = block.key;
  k.beam = static_cast<std::uint32_t>(beam);
  k.stage = static_cast<std::uint16_t>(stage);
  return CounterRng(k);
}

Pulse* pulses_of(const BlockContext& b, std::size_t beam) {
  return b.work.pulses.data() + beam * BeamWork::kMaxPulses;
}

// Adds a candidate; when the beam is full, it replaces the weakest if stronger.
void add_pulse(const BlockContext& b, std::size_t beam, const Pulse& p) {
  Pulse* pulses = pulses_of(b, beam);
  auto& count = b.work.pulse_count[beam];
  if (count < BeamWork::kMaxPulses) {
    pulses[count++] = p;
    return;
  }
  Pulse* weakest = std::min_element(
      pulses, pulses + count, [](const Pulse& l, const Pulse& r) { return l.power_w < r.power_w; });
  if (weakest->power_w < p.power_w) *weakest = p;
}

// Calls visit(beam, pulse) for every candidate of every beam of the block.
template <typename Visit>
void for_each_pulse(const BlockContext& b, Visit&& visit) {
  for (std::size_t beam = b.begin; beam < b.end; ++beam) {
    Pulse* pulses = pulses_of(b, beam);
    for (int k = 0; k < b.work.pulse_count[beam]; ++k) visit(beam, pulses[k]);
  }
}

// Share of the beam's power a ray carries: the centre and a ring at the 1/e^2 edge of a
// Gaussian beam (seed 000's roses), normalised so a beam fully on one surface returns as one ray.
double ray_weight(int ray, int rays) {
  if (rays <= 1) return 1.0;
  const double edge = std::exp(-2.0);
  const double centre = 1.0 / (1.0 + (rays - 1) * edge);
  return ray == 0 ? centre : centre * edge;
}

Eigen::Vector3d hit_point(const FrameHits& h, std::size_t i) { return {h.x[i], h.y[i], h.z[i]}; }
Eigen::Vector3d hit_normal(const FrameHits& h, std::size_t i) {
  return {h.nx[i], h.ny[i], h.nz[i]};
}

// Section 1: one candidate per ray from its first hit: range, incidence, back faces, the
// sensor's range window, the footprint's range extent at grazing incidence.
class GeometryStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "geometry"; }
  [[nodiscard]] std::uint32_t reads() const override { return kHitsIn; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    const auto& model = *b.geometry.pattern().model;
    const int rays = std::min<int>(h.layout.rays_per_beam, kMaxRaysUsed);
    const Eigen::Vector3d sun(b.constants.sun_direction[0], b.constants.sun_direction[1],
                              b.constants.sun_direction[2]);
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      b.work.pulse_count[beam] = 0;
      b.work.range_offset_m[beam] = 0;
      b.work.drops_crossed[beam] = 0;
      b.work.bloom[beam] = Pulse{};
      const auto column = static_cast<std::uint32_t>(beam / h.shape.channels);
      const auto channel = static_cast<std::uint16_t>(beam % h.shape.channels);
      for (int ray = 0; ray < rays; ++ray) {
        const std::size_t i = h.hit(beam, ray, 0);
        if (h.material[i] == 0) continue;
        const Eigen::Vector3d p = hit_point(h, i);
        const Eigen::Vector3d n = hit_normal(h, i);
        const double distance = p.norm();
        // The emitter sits within millimetres of the origin: -p/|p| is the way back.
        const double cos_theta = -p.dot(n) / distance;
        if (!(cos_theta > 0.0) || distance < model.min_range_m || distance > model.max_range_m) {
          continue;
        }
        // The format's range convention (Ouster: from the lidar origin, minus the beam-origin
        // offset) taken from the centre ray, or the first ray that hit when the centre missed.
        if (ray == 0 || b.work.pulse_count[beam] == 0) {
          b.work.range_offset_m[beam] =
              static_cast<float>(b.geometry.reported_range(p, column, channel) - distance);
        }
        const double footprint = 2.0 * b.constants.beam.radius_m(distance);
        const double tan_theta = std::sqrt(std::max(1.0 - cos_theta * cos_theta, 0.0)) / cos_theta;
        Pulse pulse;
        pulse.range_m = static_cast<float>(distance);
        pulse.extent_m = static_cast<float>(std::min(footprint * tan_theta, 10.0));
        pulse.object_id = h.object_id[i];
        pulse.kind = ReturnKind::kTarget;
        pulse.cos_incidence = static_cast<float>(cos_theta);
        pulse.cos_sun = static_cast<float>(n.dot(sun));
        pulse.material = h.material[i];
        pulse.ray = static_cast<std::uint8_t>(ray);
        pulse.gain = 1.0f;
        add_pulse(b, beam, pulse);
      }
    }
  }
};

// Section 9: rows from depth images lie on the pixel's direction, not the beam's; move the centre
// ray's hit along the true beam direction onto the surface's plane.
class RasterCorrectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "geometry.raster_correction"; }
  [[nodiscard]] std::uint32_t reads() const override { return kHitsIn | kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    for_each_pulse(b, [&](std::size_t beam, Pulse& pulse) {
      if (pulse.ray != 0) return;
      const std::size_t i = h.hit(beam, 0, 0);
      const Eigen::Vector3d p = hit_point(h, i);
      const Eigen::Vector3d n = hit_normal(h, i);
      const auto column = static_cast<std::uint32_t>(beam / h.shape.channels);
      const auto channel = static_cast<std::uint16_t>(beam % h.shape.channels);
      const Eigen::Vector3d v = b.geometry.ray(column, channel).direction;
      const double r = p.norm();
      const double corrected = physics::raster_corrected_range(p.dot(n) / r, v.dot(n), r);
      if (!(corrected > 0) || !std::isfinite(corrected)) return;
      pulse.range_m = static_cast<float>(corrected);
      pulse.cos_incidence = static_cast<float>(std::max(-v.dot(n), 1e-6));
    });
  }
};

// Section 6: 8-float paths. A mirror-like first hit passes its light on; the first hit that is not
// mirror-like returns it. The point lies along the first segment at half the optical path: the
// ghost behind the glass. The return enters the receiver directly when theta_in is within the
// angular resolution, otherwise back along the mirrors (one more reflection per mirror).
class MultiBounceStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "paths.multibounce"; }
  [[nodiscard]] std::uint32_t reads() const override { return kHitsIn | kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    const int segments = h.layout.segments_per_path;
    if (segments < 2) return;
    for_each_pulse(b, [&](std::size_t beam, Pulse& p) { follow_path(b, beam, segments, p); });
  }

 private:
  static void follow_path(const BlockContext& b, std::size_t beam, int segments, Pulse& pulse) {
    const auto& h = b.hits;
    Eigen::Vector3d previous = Eigen::Vector3d::Zero();
    double travelled = 0;
    double mirror_gain = 1;
    for (int s = 0; s < segments; ++s) {
      const std::size_t i = h.hit(beam, pulse.ray, s);
      const Material* m = h.material[i] ? b.materials.find(h.material[i]) : nullptr;
      if (!m) return;  // the path ended (padding) before a diffuse hit: keep the first return
      const Eigen::Vector3d p = hit_point(h, i);
      const Eigen::Vector3d n = hit_normal(h, i);
      const Eigen::Vector3d incoming = (p - previous).normalized();
      const double leg = (p - previous).norm();
      travelled += leg;
      const bool next_exists = s + 1 < segments && h.material[h.hit(beam, pulse.ray, s + 1)] != 0;
      if (physics::is_mirror_like(*m) && next_exists) {
        mirror_gain *= m->specular;
        previous = p;
        continue;
      }
      if (s == 0) return;  // an ordinary first hit: geometry already made its pulse
      const double cos_theta = -incoming.dot(n);
      if (!(cos_theta > 0)) {
        pulse.kind = ReturnKind::kNone;
        pulse.power_w = 0;
        return;
      }
      const bool direct = h.angle_deg[i] <= b.constants.multibounce_resolution_deg;
      const double back = direct ? p.norm() : travelled;
      const double gain = direct ? mirror_gain : mirror_gain * mirror_gain;
      pulse.range_m = static_cast<float>((travelled + back) / 2.0);
      pulse.cos_incidence = static_cast<float>(cos_theta);
      pulse.material = h.material[i];
      pulse.object_id = h.object_id[i];
      pulse.gain = static_cast<float>(gain);
      pulse.kind = ReturnKind::kGhost;
      return;
    }
  }
};

// Section 2b, the default: the range equation with a BRDF, the system constant from the
// datasheet, the crossover function, and each ray's share of the beam (a target smaller than the
// footprint returns only the rays that hit it: A_TA / A_T).
class BrdfSurfaceStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "surface.brdf"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const int rays = std::min<int>(b.hits.layout.rays_per_beam, kMaxRaysUsed);
    const double baseline = b.params.optics.baseline_m;
    for_each_pulse(b, [&](std::size_t, Pulse& p) {
      if (p.kind == ReturnKind::kNone) return;
      const Material* m = b.materials.find(p.material);
      if (!m) return;
      const double range = p.range_m;
      const double observation = baseline > 0 ? std::atan(baseline / range) : 0.0;
      const double brdf = physics::material_brdf(*m, p.cos_incidence, observation) * p.gain;
      p.lambertian = static_cast<float>(brdf * std::numbers::pi);
      p.power_w =
          static_cast<float>(physics::received_power(b.constants.system_constant, brdf, range, 1.0,
                                                     physics::crossover(b.params.optics, range)) *
                             ray_weight(p.ray, rays));
    });
  }
};

// Section 2a: the seed-000 mixture, kept for fidelity to the seed (no 1/r^2 on its specular and
// retroreflective terms).
class IpspSurfaceStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "surface.ipsp"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const int rays = std::min<int>(b.hits.layout.rays_per_beam, kMaxRaysUsed);
    for_each_pulse(b, [&](std::size_t, Pulse& p) {
      if (p.kind == ReturnKind::kNone) return;
      const Material* m = b.materials.find(p.material);
      if (!m) return;
      const double fraction =
          physics::ipsp_returned_fraction(*m, p.range_m, p.cos_incidence) * p.gain;
      p.lambertian = static_cast<float>(physics::lambertian_equivalent(fraction, p.range_m, 1.0));
      p.power_w = static_cast<float>(
          physics::detected_power(fraction, b.params.peak_power_w, b.params.detector_efficiency) *
          ray_weight(p.ray, rays));
    });
  }
};

// Section 4a: two-way Beer-Lambert with the extinction of clear air or fog (visibility).
class ClearAirStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "atmosphere.clear_air"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const double extinction = b.constants.clear_extinction_per_m;
    for_each_pulse(b, [&](std::size_t, Pulse& p) {
      p.power_w *= static_cast<float>(physics::two_way_transmission(extinction, p.range_m));
    });
  }
};

// The smallest drop that returns more than the noise sigma from range r: the drop's share of the
// footprint (D^2/4)/w^2 times its backscatter 2/S, through the range equation.
double detectable_drop_diameter_m(const FrameConstants& c, const PhysicsParams& p, double r) {
  const double w = c.beam.radius_m(r);
  const double transmission =
      physics::two_way_transmission(c.rain_extinction_per_m + c.clear_extinction_per_m, r);
  const double gain = c.system_constant * transmission * physics::crossover(p.optics, r) / (r * r);
  if (!(gain > 0)) return std::numeric_limits<double>::infinity();
  return std::sqrt(c.noise_w * 4.0 * w * w * p.rain_lidar_ratio_sr / (2.0 * gain));
}

// Section 4b, seed 004: Poisson drops in the beam's cone, two-way extinction from the seed's
// table, drop returns as false positives, range jitter in proportion to the drops crossed. Every
// drop is counted (for the jitter); only those that could beat the noise are placed one by one,
// from the frame's RainDropTable, with a diameter D_t(r) + Exp(Lambda) (memoryless).
class RainStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "atmosphere.rain"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kPulses; }
  void run(const BlockContext& b) const override {
    const auto& c = b.constants;
    if (!(c.rain_drops_per_m3 > 0)) return;
    const auto& prm = b.params;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      Pulse* pulses = pulses_of(b, beam);
      const int targets = b.work.pulse_count[beam];
      double reach = 0;
      for (int k = 0; k < targets; ++k) reach = std::max<double>(reach, pulses[k].range_m);
      if (reach <= 0) reach = prm.datasheet_range_m;  // open sky: drops up to the sensor's reach
      const CounterRng count_rng = rng_for(b, beam, StageId::kRainCount);
      std::uint32_t draw = 0;
      const double mu_all = c.rain_drops_per_m3 * c.beam.volume_m3(0.0, reach);
      const double mu_detectable = std::min(c.rain_drops.expected_within(reach), mu_all);
      const std::uint32_t detectable = count_rng.poisson(mu_detectable, draw);
      const std::uint32_t crossed = detectable + count_rng.poisson(mu_all - mu_detectable, draw);
      b.work.drops_crossed[beam] =
          static_cast<std::uint16_t>(std::min<std::uint32_t>(crossed, 65535));
      // Extinction and jitter of what the beam hit.
      const CounterRng jitter_rng = rng_for(b, beam, StageId::kRainJitter);
      const double sigma = prm.rain_range_jitter_m_per_drop * crossed;
      for (int k = 0; k < targets; ++k) {
        Pulse& p = pulses[k];
        p.power_w *=
            static_cast<float>(physics::two_way_transmission(c.rain_extinction_per_m, p.range_m));
        p.range_m += static_cast<float>(sigma * jitter_rng.normal(static_cast<std::uint32_t>(k)));
      }
      const CounterRng drop_rng = rng_for(b, beam, StageId::kRainDrops);
      for (std::uint32_t d = 0; d < std::min<std::uint32_t>(detectable, kMaxDropPulses); ++d) {
        const auto u = drop_rng.words(d);
        const double u_position = (u[0] + 0.5) * 0x1.0p-32;
        const double u_size = (u[1] + 0.5) * 0x1.0p-32;
        const double r = c.rain_drops.range_at(u_position * mu_detectable);
        const double diameter_m =
            detectable_drop_diameter_m(c, prm, r) - std::log(u_size) / c.rain_slope_per_mm * 1e-3;
        const double share =
            physics::drop_brdf_area_ratio(diameter_m, c.beam.radius_m(r), prm.rain_lidar_ratio_sr);
        Pulse drop;
        drop.range_m = static_cast<float>(r);
        drop.power_w = static_cast<float>(physics::received_power(
            c.system_constant, share, r,
            physics::two_way_transmission(c.rain_extinction_per_m + c.clear_extinction_per_m, r),
            physics::crossover(prm.optics, r)));
        drop.lambertian = static_cast<float>(share * std::numbers::pi);
        drop.kind = ReturnKind::kRainDrop;
        add_pulse(b, beam, drop);
      }
    }
  }
};

RainDropTable build_rain_drop_table(const FrameConstants& c, const PhysicsParams& p) {
  RainDropTable t;
  t.start_m = std::max(p.rain_min_range_m, 0.05);
  if (!(c.rain_drops_per_m3 > 0)) return t;
  // Drops per metre of beam that could be detected: N pi w(r)^2 P(D > D_t(r)).
  const auto density = [&](double r) {
    const double w = c.beam.radius_m(r);
    const double d_t_mm = detectable_drop_diameter_m(c, p, r) * 1e3;
    return c.rain_drops_per_m3 * std::numbers::pi * w * w * std::exp(-c.rain_slope_per_mm * d_t_mm);
  };
  double previous = density(t.start_m);
  for (int i = 1; i <= RainDropTable::kSteps; ++i) {
    const double here = density(t.start_m + i * t.step_m);
    t.cumulative[static_cast<std::size_t>(i)] =
        t.cumulative[static_cast<std::size_t>(i - 1)] + 0.5 * (previous + here) * t.step_m;
    previous = here;
  }
  return t;
}

// Section 7, seed 001: beam-level blooming. Beams bright enough to reach a neighbour above the
// noise scatter kernel-weighted copies of their strongest return to the beams around them;
// contributions at one range (within dR) add, different ranges do not: the dominant bin is kept.
// Beams that cannot bloom are skipped (the seed's slice skipping).
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
  [[nodiscard]] std::string_view name() const override { return "blooming"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kBloomed; }
  [[nodiscard]] bool whole_frame() const override { return true; }
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
          const Pulse* pulses = pulses_of(b, src);
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

// Sorts a beam's candidates by range and merges those closer than the range resolution: one
// return whose power is the sum (seed 000, 1.3.5). The merged return keeps the leading edge's
// range and the strongest member's identity; its extent spans the members.
int merge_pulses(const BlockContext& b, std::size_t beam) {
  Pulse* pulses = pulses_of(b, beam);
  int count = b.work.pulse_count[beam];
  const Pulse& bloom = b.work.bloom[beam];
  if (bloom.kind != ReturnKind::kNone) {
    add_pulse(b, beam, bloom);
    count = b.work.pulse_count[beam];
  }
  count =
      static_cast<int>(std::remove_if(pulses, pulses + count,
                                      [](const Pulse& p) { return p.kind == ReturnKind::kNone; }) -
                       pulses);
  std::sort(pulses, pulses + count,
            [](const Pulse& l, const Pulse& r) { return l.range_m < r.range_m; });
  int merged = 0;
  for (int k = 0; k < count; ++k) {
    if (merged > 0 &&
        pulses[k].range_m - pulses[merged - 1].range_m < b.params.range_resolution_m) {
      Pulse& into = pulses[merged - 1];
      const float far_edge =
          std::max(into.range_m + into.extent_m, pulses[k].range_m + pulses[k].extent_m);
      if (pulses[k].power_w > into.power_w) {
        into.object_id = pulses[k].object_id;
        into.kind = pulses[k].kind;
        into.material = pulses[k].material;
        into.cos_sun = pulses[k].cos_sun;
      }
      into.lambertian = std::max(into.lambertian, pulses[k].lambertian);
      into.power_w += pulses[k].power_w;
      into.extent_m = far_edge - into.range_m;
      continue;
    }
    pulses[merged++] = pulses[k];
  }
  b.work.pulse_count[beam] = static_cast<std::uint8_t>(merged);
  return merged;
}

// Merges each beam's candidates, then calls visit(beam, pulse, index) for every merged return.
template <typename Visit>
void for_each_merged(const BlockContext& b, Visit&& visit) {
  for (std::size_t beam = b.begin; beam < b.end; ++beam) {
    const int count = merge_pulses(b, beam);
    Pulse* pulses = pulses_of(b, beam);
    for (int k = 0; k < count; ++k) visit(beam, pulses[k], k);
  }
}

// Section 3: detector noise (plus the shot noise of ambient sunlight on the target) and the
// 3-sigma threshold, per merged return.
class ThresholdDetectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "detection.threshold"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kDetections; }
  void run(const BlockContext& b) const override {
    const auto& prm = b.params;
    const double sun = prm.weather.sun_irradiance_w_per_m2;
    const double noise2 = b.constants.noise_w * b.constants.noise_w;
    for_each_merged(b, [&](std::size_t beam, Pulse& p, int k) {
      double variance = noise2;
      if (sun > 0) {
        const Material* m = p.material ? b.materials.find(p.material) : nullptr;
        const double ambient = physics::ambient_power_w(sun, p.cos_sun, m ? m->reflectivity : 0.0,
                                                        prm.receiver_etendue_m2_sr);
        variance += physics::ambient_noise_variance_w2(ambient, prm.wavelength_nm, prm.bandwidth_hz,
                                                       prm.quantum_efficiency);
      }
      const double sigma = std::sqrt(variance);
      const double noise =
          rng_for(b, beam, StageId::kDetection).normal(static_cast<std::uint32_t>(k));
      const double out = p.power_w + sigma * noise;
      p.threshold_w = static_cast<float>(3.0 * sigma);
      if (out > 3.0 * sigma) {
        p.power_w = static_cast<float>(out);
      } else {
        p.kind = ReturnKind::kNone;
      }
    });
  }
};

// Seed 002's alternative: detected iff R_L(d) <= Gamma(theta); no noise.
class CapabilityDetectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "detection.capability"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kDetections; }
  void run(const BlockContext& b) const override {
    for_each_merged(b, [&](std::size_t, Pulse& p, int) {
      p.threshold_w = static_cast<float>(b.constants.threshold_w);
      if (!physics::capability_detects(p.lambertian, p.range_m, b.params.capability_max_range_m,
                                       b.params.capability_max_reflectance_limit)) {
        p.kind = ReturnKind::kNone;
      }
    });
  }
};

// Ideal mode: every candidate is detected with the power the surface returns.
class IdealDetectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "detection.ideal"; }
  [[nodiscard]] std::uint32_t reads() const override { return kPulses; }
  [[nodiscard]] std::uint32_t writes() const override { return kDetections; }
  void run(const BlockContext& b) const override {
    for_each_merged(b, [](std::size_t, Pulse& p, int) { p.threshold_w = 0; });
  }
};

// Section 8: which detected returns the sensor reports. Plane 0 holds the single-return mode's
// echo; dual adds the last (or, when the strongest is the last, the second strongest), triple the
// next strongest; a further echo must lie the minimum separation away from those kept.
class EchoSelectionStage final : public Stage {
 public:
  explicit EchoSelectionStage(EchoMode mode) : mode_(mode) {}
  [[nodiscard]] std::string_view name() const override {
    switch (mode_) {
      case EchoMode::kStrongest:
        return "echoes.strongest";
      case EchoMode::kLast:
        return "echoes.last";
      case EchoMode::kFirst:
        return "echoes.first";
      case EchoMode::kDual:
        return "echoes.dual";
      case EchoMode::kTriple:
        return "echoes.triple";
      case EchoMode::kTwoStrongest:
        return "echoes.two_strongest";
    }
    return "echoes";
  }
  [[nodiscard]] std::uint32_t reads() const override { return kDetections; }
  [[nodiscard]] std::uint32_t writes() const override { return kEchoesOut; }
  void run(const BlockContext& b) const override {
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      const Pulse* pulses = pulses_of(b, beam);
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
        case EchoMode::kStrongest:
          pick[0] = static_cast<std::int8_t>(strongest);
          break;
        case EchoMode::kLast:
          pick[0] = static_cast<std::int8_t>(last);
          break;
        case EchoMode::kFirst:
          pick[0] = static_cast<std::int8_t>(first);
          break;
        case EchoMode::kTwoStrongest:
          pick[0] = static_cast<std::int8_t>(strongest);
          pick[1] = static_cast<std::int8_t>(next_strongest(1));
          break;
        case EchoMode::kDual:
        case EchoMode::kTriple: {
          pick[0] = static_cast<std::int8_t>(strongest);
          const int second = last != strongest && separated(last, 1) ? last : next_strongest(1);
          pick[1] = static_cast<std::int8_t>(second);
          if (mode_ == EchoMode::kTriple && second >= 0) {
            pick[2] = static_cast<std::int8_t>(next_strongest(2));
          }
          break;
        }
      }
    }
  }

 private:
  EchoMode mode_;
};

// Section 3: Gaussian range noise on every reported echo.
class RangeNoiseStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "range.noise"; }
  [[nodiscard]] std::uint32_t reads() const override { return kEchoesOut; }
  [[nodiscard]] std::uint32_t writes() const override { return kEchoesOut; }
  void run(const BlockContext& b) const override {
    const double sigma = b.params.range_noise_sigma_m;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      Pulse* pulses = pulses_of(b, beam);
      const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
      const CounterRng rng = rng_for(b, beam, StageId::kRangeNoise);
      for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
        if (pick[e] < 0) continue;
        pulses[pick[e]].range_m +=
            static_cast<float>(sigma * rng.normal(static_cast<std::uint32_t>(e)));
      }
    }
  }
};

// Quantisation to the format's range unit, the calibrated reflectivity drivers read (from the
// received power, as the sensor computes it), pulse width, ground truth.
class ReportStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "report"; }
  [[nodiscard]] std::uint32_t reads() const override { return kEchoesOut; }
  [[nodiscard]] std::uint32_t writes() const override { return kEchoesOut; }
  void run(const BlockContext& b) const override {
    const auto& model = *b.geometry.pattern().model;
    const auto& c = b.constants;
    const double calibration_extinction =
        physics::extinction_from_visibility(kCalibrationVisibilityM, b.params.wavelength_nm);
    const double tau_h = b.params.pulse_half_width_ns * 1e-9;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      const Pulse* pulses = pulses_of(b, beam);
      const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
      for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
        const std::size_t slot = b.out.slot(beam, e);
        const Pulse* p = pick[e] >= 0 ? &pulses[pick[e]] : nullptr;
        const double range = p ? physics::quantise_range(p->range_m + b.work.range_offset_m[beam],
                                                         model.range_unit_m, model.max_range_m)
                               : 0.0;
        b.out.range_m[slot] = static_cast<float>(range);
        if (!p || range == 0.0) {
          b.out.power_w[slot] = 0;
          b.out.reflectivity[slot] = 0;
          b.out.signal_photons[slot] = 0;
          b.out.pulse_width_ns[slot] = 0;
          b.out.object_id[slot] = 0;
          b.out.kind[slot] = 0;
          continue;
        }
        const double r = p->range_m;
        const double expected_per_unit_brdf =
            physics::received_power(c.system_constant, 1.0 / std::numbers::pi, r,
                                    physics::two_way_transmission(calibration_extinction, r),
                                    physics::crossover(b.params.optics, r));
        const double equivalent = p->power_w / expected_per_unit_brdf;
        b.out.power_w[slot] = p->power_w;
        b.out.reflectivity[slot] =
            static_cast<std::uint8_t>(physics::calibrated_reflectivity(equivalent));
        b.out.signal_photons[slot] =
            static_cast<std::uint16_t>(std::clamp(std::lround(p->power_w / c.noise_w), 1L, 65535L));
        b.out.pulse_width_ns[slot] = static_cast<float>(
            physics::echo_pulse_width_s(p->power_w, p->threshold_w, tau_h, p->extent_m) * 1e9);
        b.out.object_id[slot] = p->object_id;
        b.out.kind[slot] = static_cast<std::uint8_t>(p->kind);
      }
    }
  }
};

void check_chain(const std::vector<std::unique_ptr<Stage>>& stages) {
  std::uint32_t available = kHitsIn;
  const auto describe = [](std::uint32_t mask) {
    std::string s;
    const std::array<std::pair<std::uint32_t, const char*>, 5> names{
        {{kHitsIn, "hits"},
         {kPulses, "candidate returns"},
         {kBloomed, "bloom contributions"},
         {kDetections, "detections"},
         {kEchoesOut, "selected echoes"}}};
    for (const auto& [bit, n] : names) {
      if (mask & bit) s += (s.empty() ? "" : ", ") + std::string(n);
    }
    return s;
  };
  for (const auto& stage : stages) {
    const std::uint32_t missing = stage->reads() & ~available;
    if (missing) {
      throw std::invalid_argument("physics stage '" + std::string(stage->name()) + "' needs " +
                                  describe(missing) + ", which no earlier stage provides");
    }
    available |= stage->writes();
  }
  if (!(available & kEchoesOut)) {
    throw std::invalid_argument("physics chain never selects echoes to report");
  }
}

}  // namespace

double RainDropTable::expected_within(double range_m) const {
  const double x = (range_m - start_m) / step_m;
  if (!(x > 0)) return 0.0;
  if (x >= kSteps) return cumulative.back();
  const auto i = static_cast<std::size_t>(x);
  return cumulative[i] + (x - static_cast<double>(i)) * (cumulative[i + 1] - cumulative[i]);
}

double RainDropTable::range_at(double expected) const {
  const auto above = std::upper_bound(cumulative.begin(), cumulative.end(), expected);
  if (above == cumulative.begin()) return start_m;
  if (above == cumulative.end()) return start_m + kSteps * step_m;
  const auto i = static_cast<std::size_t>(above - cumulative.begin()) - 1;
  const double span = cumulative[i + 1] - cumulative[i];
  const double f = span > 0 ? (expected - cumulative[i]) / span : 0.0;
  return start_m + (static_cast<double>(i) + f) * step_m;
}

PhysicsParams default_physics_params(const SensorModel& model) {
  PhysicsParams p;
  p.datasheet_range_m = model.optics.datasheet_range_m;
  p.datasheet_reflectivity = model.optics.datasheet_reflectivity;
  p.beam_exit_radius_m = model.optics.beam_exit_radius_m;
  p.beam_divergence_rad = model.optics.beam_divergence_rad;
  p.range_noise_sigma_m = model.optics.range_noise_sigma_m;
  p.optics = physics::BistaticOptics{.baseline_m = model.optics.bistatic_baseline_m,
                                     .full_overlap_m = model.optics.full_overlap_m,
                                     .tx_aperture_radius_m = model.optics.tx_aperture_radius_m,
                                     .rx_aperture_radius_m = model.optics.rx_aperture_radius_m,
                                     .tx_opening_rad = model.optics.tx_opening_rad,
                                     .rx_opening_rad = model.optics.rx_opening_rad};
  // The kernel core is the beam itself: its 1/e^2 half-angle is two standard deviations.
  p.bloom_core_sigma_deg = model.optics.beam_divergence_rad * 180.0 / std::numbers::pi / 2.0;
  return p;
}

void BeamWork::resize(std::size_t beams) {
  pulses.assign(beams * kMaxPulses, Pulse{});
  pulse_count.assign(beams, 0);
  range_offset_m.assign(beams, 0);
  drops_crossed.assign(beams, 0);
  bloom.assign(beams, Pulse{});
  echo_pick.assign(beams * FrameReturns::kMaxEchoes, -1);
}

Pipeline::Pipeline(const ScanPattern& pattern, const MaterialTable& materials,
                   PipelineSettings settings)
    : geometry_(pattern), materials_(materials), settings_(settings) {
  const PhysicsStages& s = settings_.stages;
  const PhysicsParams& p = settings_.params;
  const bool ideal = settings_.mode == PhysicsMode::kIdeal;
  stages_.push_back(std::make_unique<GeometryStage>());
  if (s.raster_correction) stages_.push_back(std::make_unique<RasterCorrectionStage>());
  if (s.multibounce) stages_.push_back(std::make_unique<MultiBounceStage>());
  if (s.surface == SurfaceModel::kBrdf) {
    stages_.push_back(std::make_unique<BrdfSurfaceStage>());
    system_constant_ = physics::system_constant_from_datasheet(
        p.threshold_w(), p.datasheet_range_m, p.datasheet_reflectivity,
        physics::two_way_transmission(
            physics::extinction_from_visibility(kCalibrationVisibilityM, p.wavelength_nm),
            p.datasheet_range_m),
        physics::crossover(p.optics, p.datasheet_range_m));
  } else {
    stages_.push_back(std::make_unique<IpspSurfaceStage>());
    // The seed's diffuse term, cos / (2 r^2) * P_peak * efficiency, is K Gamma / (pi r^2) with:
    system_constant_ = std::numbers::pi * p.peak_power_w * p.detector_efficiency / 2.0;
  }
  if (!ideal) {
    if (s.clear_air) stages_.push_back(std::make_unique<ClearAirStage>());
    if (s.rain) stages_.push_back(std::make_unique<RainStage>());
    if (s.blooming) stages_.push_back(std::make_unique<BloomingStage>(pattern, p));
  }
  if (ideal) {
    stages_.push_back(std::make_unique<IdealDetectionStage>());
  } else if (s.detection == DetectionModel::kCapability) {
    stages_.push_back(std::make_unique<CapabilityDetectionStage>());
  } else {
    stages_.push_back(std::make_unique<ThresholdDetectionStage>());
  }
  stages_.push_back(std::make_unique<EchoSelectionStage>(s.echoes));
  if (!ideal && s.range_noise) stages_.push_back(std::make_unique<RangeNoiseStage>());
  stages_.push_back(std::make_unique<ReportStage>());
  check_chain(stages_);
}

std::vector<std::string_view> Pipeline::stage_names() const {
  std::vector<std::string_view> names;
  for (const auto& s : stages_) names.push_back(s->name());
  return names;
}

FrameConstants Pipeline::constants_for(const Weather& weather) const {
  const PhysicsParams& p = settings_.params;
  FrameConstants c(physics::BeamCone(p.beam_exit_radius_m, p.beam_divergence_rad));
  c.system_constant = system_constant_;
  c.noise_w = p.noise_power_w();
  c.threshold_w = p.threshold_w();
  c.clear_extinction_per_m =
      physics::extinction_from_visibility(weather.visibility_m, p.wavelength_nm);
  c.rain_extinction_per_m = physics::rain_extinction_per_m(weather.rain_mm_per_h);
  c.rain_drops_per_m3 = physics::rain_drop_density_per_m3(weather.rain_mm_per_h);
  c.rain_slope_per_mm = weather.rain_mm_per_h > 0
                            ? physics::marshall_palmer_slope_per_mm(weather.rain_mm_per_h)
                            : 0.0;
  c.rain_drops = build_rain_drop_table(c, p);
  c.multibounce_resolution_deg = p.multibounce_resolution_deg > 0
                                     ? p.multibounce_resolution_deg
                                     : 360.0 / geometry_.pattern().columns_per_frame;
  const double el = physics::deg_to_rad(p.sun_elevation_deg);
  const double az = physics::deg_to_rad(p.sun_azimuth_deg);
  c.sun_direction[0] = std::cos(el) * std::cos(az);
  c.sun_direction[1] = std::cos(el) * std::sin(az);
  c.sun_direction[2] = std::sin(el);
  return c;
}

void Pipeline::process_stages(std::size_t first, std::size_t last_stage, const FrameHits& hits,
                              FrameReturns& out) {
  const std::size_t beams = hits.shape.beams();
  if (work_.pulse_count.size() != beams) work_.resize(beams);
  if (out.range_m.size() != beams * FrameReturns::kMaxEchoes) out.reshape(hits.shape);
  out.frame_number = hits.frame_number;
  PhysicsParams params = settings_.params;
  params.weather = hits.weather;
  const FrameConstants constants = constants_for(hits.weather);
  const DrawKey base{settings_.seed, settings_.sensor_index, hits.frame_number, 0, 0};
  constexpr std::size_t kBeamsPerBlock = 1024;
  // Runs consecutive per-beam stages fused over blocks; a frame stage runs alone between them.
  const auto context = [&](std::size_t begin, std::size_t end) {
    return BlockContext{begin,     end,        hits,   work_,     out,
                        geometry_, materials_, params, constants, settings_.stages,
                        base};
  };
  last_stage = std::min(last_stage, stages_.size());
  while (first < last_stage) {
    if (stages_[first]->whole_frame()) {
      stages_[first]->run(context(0, beams));
      ++first;
      continue;
    }
    std::size_t last = first;
    while (last < last_stage && !stages_[last]->whole_frame()) ++last;
    LIDAREMU_TSAN_RELEASE(&out);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, beams, kBeamsPerBlock),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        LIDAREMU_TSAN_ACQUIRE(&out);
                        const BlockContext block = context(r.begin(), r.end());
                        for (std::size_t s = first; s < last; ++s) stages_[s]->run(block);
                        LIDAREMU_TSAN_RELEASE(&out);
                      });
    LIDAREMU_TSAN_ACQUIRE(&out);
    first = last;
  }
}

}  // namespace lidaremu::core
