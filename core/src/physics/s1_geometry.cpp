// PHYSICS.md section 1 (geometry) and 5 (several rays per beam): one candidate per ray from its
// first hit: range, incidence, back faces, the sensor's range window, the footprint's range
// extent at grazing incidence. The arithmetic runs in SIMD lanes (simd::hit_geometry) on runs of
// beams within one column and one 64-beam tile of the candidate planes.
#include <algorithm>
#include <array>
#include <memory>
#include <span>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

// What a surface sends of the sunlight into the channel (the receiver model, PHYSICS.md 3).
class Sunlight {
 public:
  explicit Sunlight(const BlockContext& b)
      : b_(b),
        sun_(b.constants.sun_direction[0], b.constants.sun_direction[1],
             b.constants.sun_direction[2]),
        sun_w_(b.params.weather.sun_irradiance_w_per_m2) {}
  [[nodiscard]] float sky_w() const { return static_cast<float>(b_.params.receiver.sky_w(sun_w_)); }
  [[nodiscard]] float from_hit(std::size_t hit) const {
    if (!(sun_w_ > 0)) return 0.0f;
    const Eigen::Vector3d n = stage_kit::hit_normal(b_.hits, hit);
    const Material* m = b_.materials.find(b_.hits.material[hit]);
    return static_cast<float>(
        b_.params.receiver.ambient_w(sun_w_, n.dot(sun_), n.z(), m ? m->reflectivity : 0.0));
  }

 private:
  const BlockContext& b_;
  Eigen::Vector3d sun_;
  double sun_w_;
};

class GeometryStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const Sunlight sunlight(b);
    const auto beams = [&](auto& per_beam) {
      return std::span(per_beam).subspan(b.begin, b.end - b.begin);
    };
    std::ranges::fill(beams(b.work.pulse_count), std::uint8_t{0});
    std::ranges::fill(beams(b.work.range_offset_m), 0.0f);
    std::ranges::fill(beams(b.work.drops_crossed), std::uint16_t{0});
    std::ranges::fill(beams(b.work.bloom), Bloom{});
    std::ranges::fill(beams(b.work.ambient_w), sunlight.sky_w());  // until a ray finds a surface
    const auto& model = *b.geometry.pattern().model;
    const simd::HitWindow window{.min_range_m = model.min_range_m,
                                 .max_range_m = model.max_range_m,
                                 .beam_exit_radius_m = b.constants.beam.exit_radius_m,
                                 .beam_tan_half_angle = b.constants.beam.tan_half_angle};
    const std::size_t channels = b.hits.shape.channels;
    const int rays = stage_kit::rays_used(b);
    // The slots this stage writes were last touched a frame ago: each run asks for the slots of
    // the tiles two runs on (their lines are written field by field, a pulse's thirteen fields
    // in thirteen lines, and each write waited for its line).
    const auto ask_ahead = [&](std::size_t from) {
      if (from < b.end) b.work.pulses.prefetch(from, std::min(from + kRunBeams, b.end), rays);
    };
    ask_ahead(b.begin);
    ask_ahead(b.begin + kRunBeams);
    for (std::size_t first = b.begin, last = 0; first < b.end; first = last) {
      const std::size_t column = first / channels;
      last = std::min({b.end, (column + 1) * channels, (first / kRunBeams + 1) * kRunBeams});
      if (last % kRunBeams == 0) ask_ahead(last + kRunBeams);
      const Run run{first, last - first, static_cast<std::uint32_t>(column),
                    static_cast<std::uint16_t>(first - column * channels)};
      centre_ray(b, window, run, sunlight);
      if (rays > 1) outer_rays(b, window, run, sunlight);
    }
  }

 private:
  static constexpr std::size_t kRunBeams = PulsePlanes::kTileBeams;
  struct Run {
    std::size_t first_beam;
    std::size_t beams;
    std::uint32_t column;
    std::uint16_t first_channel;
  };

  // The centre ray's candidate is each beam's first: its range, incidence and extent are
  // computed straight into slot 0 (where no candidate is, nothing reads them), and it sets the
  // format's range convention (Ouster: from the lidar origin, minus the beam-origin offset).
  static void centre_ray(const BlockContext& b, const simd::HitWindow& window, const Run& run,
                         const Sunlight& sunlight) {
    const auto& h = b.hits;
    const std::size_t stride = std::size_t{h.layout.rays_per_beam} * h.layout.segments_per_path;
    const std::size_t hit0 = h.hit(run.first_beam, 0, 0);
    const simd::HitPlanes hits{&h.x[hit0],  &h.y[hit0],  &h.z[hit0], &h.nx[hit0],
                               &h.ny[hit0], &h.nz[hit0], stride};
    const PulseRef slot0 = b.work.pulses.at(run.first_beam, 0);
    std::array<double, kRunBeams> distance;
    std::array<std::uint8_t, kRunBeams> kept;
    std::array<float, kRunBeams> offset;
    simd::hit_geometry(
        hits, run.beams, window,
        {distance.data(), &slot0.range_m, &slot0.cos_incidence, &slot0.extent_m, kept.data()});
    for (std::size_t i = 0; i < run.beams; ++i) {
      kept[i] = kept[i] != 0 && h.material[hit0 + i * stride] != 0;
    }
    b.geometry.range_offsets(run.column, run.first_channel, hits, distance.data(), kept.data(),
                             run.beams, offset.data());
    for (std::size_t i = 0; i < run.beams; ++i) {
      if (!kept[i]) continue;
      const std::size_t beam = run.first_beam + i;
      const std::size_t hit = hit0 + i * stride;
      const PulseRef p = b.work.pulses.at(beam, 0);
      p.power_w = 0;
      p.lambertian = 0;
      p.ambient_w = sunlight.from_hit(hit);
      p.gain = 1.0f;
      p.threshold_w = 0;
      p.noise_w = 0;
      p.object_id = h.object_id[hit];
      p.material = h.material[hit];
      p.ray = 0;
      p.kind = ReturnKind::kTarget;
      b.work.pulse_count[beam] = 1;
      b.work.range_offset_m[beam] = offset[i];
      b.work.ambient_w[beam] = p.ambient_w;
    }
  }

  // The rays round the centre (PHYSICS.md 5), beam by beam and ray by ray as their candidates
  // are added. A run's hits lie together (beam-major, a path's segments apart): they go through
  // the lanes as they lie, 64 at a time, centre rays included (done already; skipped), which
  // costs less than gathering the others.
  static void outer_rays(const BlockContext& b, const simd::HitWindow& window, const Run& run,
                         const Sunlight& sunlight) {
    const auto& h = b.hits;
    const std::size_t rays_per_beam = h.layout.rays_per_beam;
    const auto rays = static_cast<std::size_t>(stage_kit::rays_used(b));
    const std::size_t stride = h.layout.segments_per_path;
    const std::size_t hit0 = h.hit(run.first_beam, 0, 0);
    const std::size_t entries = run.beams * rays_per_beam;
    // Uninitialised: every element read was written first.
    std::array<double, kRunBeams> distance;
    std::array<float, kRunBeams> range;
    std::array<float, kRunBeams> cos_incidence;
    std::array<float, kRunBeams> extent;
    std::array<std::uint8_t, kRunBeams> accepted;
    // Entry first + j's beam and ray, counted along (a division each cost more than the lanes
    // saved).
    std::size_t beam_in_run = 0;
    std::size_t ray = 0;
    const auto next_entry = [&] {
      if (++ray == rays_per_beam) {
        ray = 0;
        ++beam_in_run;
      }
    };
    for (std::size_t first = 0; first < entries; first += kRunBeams) {
      const std::size_t count = std::min(kRunBeams, entries - first);
      const std::size_t at = hit0 + first * stride;
      simd::hit_geometry(
          {&h.x[at], &h.y[at], &h.z[at], &h.nx[at], &h.ny[at], &h.nz[at], stride}, count, window,
          {distance.data(), range.data(), cos_incidence.data(), extent.data(), accepted.data()});
      for (std::size_t j = 0; j < count; ++j, next_entry()) {
        const std::size_t hit = at + j * stride;
        if (ray == 0 || ray >= rays || !accepted[j] || h.material[hit] == 0) continue;
        const std::size_t beam = run.first_beam + beam_in_run;
        Pulse pulse;
        pulse.ambient_w = sunlight.from_hit(hit);
        // The centre ray missed: the first ray that hit sets the range convention.
        if (b.work.pulse_count[beam] == 0) {
          const auto channel = static_cast<std::uint16_t>(run.first_channel + beam_in_run);
          b.work.range_offset_m[beam] = static_cast<float>(
              b.geometry.reported_range(stage_kit::hit_point(h, hit), run.column, channel) -
              distance[j]);
          b.work.ambient_w[beam] = pulse.ambient_w;
        }
        pulse.range_m = range[j];
        pulse.extent_m = extent[j];
        pulse.cos_incidence = cos_incidence[j];
        pulse.object_id = h.object_id[hit];
        pulse.material = h.material[hit];
        pulse.ray = static_cast<std::uint8_t>(ray);
        pulse.kind = ReturnKind::kTarget;
        pulse.gain = 1.0f;
        stage_kit::add_pulse(b, beam, pulse);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Stage> make_geometry(const StageSetup& /*setup*/) {
  return std::make_unique<GeometryStage>();
}

}  // namespace lidaremu::core::stages
