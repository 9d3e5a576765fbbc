#include "lidaremu/core/pipeline.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

// Debian's libtbb is not built for ThreadSanitizer, so TSan cannot see that parallel_for's join
// orders the workers' writes before the caller's reads. Tell it, in TSan builds only.
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

DrawKey key_for(const BlockContext& block, std::size_t beam, StageId stage) {
  DrawKey k = block.key;
  k.beam = static_cast<std::uint32_t>(beam);
  k.stage = static_cast<std::uint16_t>(stage);
  return k;
}

// Section 1: range, incidence, back faces, the sensor's range window.
class GeometryStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "geometry"; }
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    const auto& model = *b.geometry.pattern().model;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      b.work.alive[i] = 0;
      if (h.material[i] == 0) continue;
      const Eigen::Vector3d p(h.x[i], h.y[i], h.z[i]);
      const double distance = p.norm();
      const auto column = static_cast<std::uint32_t>(i / h.shape.channels);
      const double range = b.geometry.reported_range(p, column);
      // The emitter sits within millimetres of the origin: -p/|p| is the way back.
      const double cos_theta = physics::cos_incidence(p.x() / distance, p.y() / distance,
                                                      p.z() / distance, h.nx[i], h.ny[i], h.nz[i]);
      if (!(cos_theta > 0.0) || range < model.min_range_m || range > model.max_range_m) continue;
      b.work.range_m[i] = static_cast<float>(range);
      b.work.cos_incidence[i] = static_cast<float>(cos_theta);
      b.work.transmission[i] = 1.0;
      b.work.alive[i] = 1;
    }
  }
};

// Section 2a: the seed-000 mixture.
class IpspSurfaceStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "surface.ipsp"; }
  void run(const BlockContext& b) const override {
    for (std::size_t i = b.begin; i < b.end; ++i) {
      if (!b.work.alive[i]) continue;
      const Material* m = b.materials.find(b.hits.material[i]);
      b.work.returned_fraction[i] =
          m ? physics::ipsp_returned_fraction(*m, b.work.range_m[i], b.work.cos_incidence[i]) : 0.0;
    }
  }
};

// Section 4a: two-way Beer-Lambert in clear air.
class ClearAirStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "atmosphere.clear_air"; }
  void run(const BlockContext& b) const override {
    const double extinction = b.params.extinction_per_m();
    for (std::size_t i = b.begin; i < b.end; ++i) {
      if (!b.work.alive[i]) continue;
      const double t = physics::two_way_transmission(extinction, b.work.range_m[i]);
      b.work.transmission[i] *= t;
      b.work.returned_fraction[i] *= t;
    }
  }
};

// Section 3: detector noise and the 3-sigma threshold.
class NoisyDetectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "detection.threshold"; }
  void run(const BlockContext& b) const override {
    const double p_noise = b.params.noise_power_w();
    for (std::size_t i = b.begin; i < b.end; ++i) {
      if (!b.work.alive[i]) continue;
      const double p_r = physics::detected_power(b.work.returned_fraction[i], b.params.peak_power_w,
                                                 b.params.detector_efficiency);
      const double p_out = p_r + p_noise * CounterRng(key_for(b, i, StageId::kDetection)).normal(0);
      b.work.power_w[i] = p_out;
      b.work.alive[i] = physics::beats_threshold(p_out, p_noise) ? 1 : 0;
    }
  }
};

// Ideal mode: the power is what the surface returns, and every valid hit is detected.
class IdealDetectionStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "detection.ideal"; }
  void run(const BlockContext& b) const override {
    for (std::size_t i = b.begin; i < b.end; ++i) {
      if (!b.work.alive[i]) continue;
      b.work.power_w[i] = physics::detected_power(
          b.work.returned_fraction[i], b.params.peak_power_w, b.params.detector_efficiency);
    }
  }
};

// Section 3: Gaussian range noise.
class RangeNoiseStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "range.noise"; }
  void run(const BlockContext& b) const override {
    const double sigma = b.params.range_noise_sigma_m;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      if (!b.work.alive[i]) continue;
      b.work.range_m[i] +=
          static_cast<float>(sigma * CounterRng(key_for(b, i, StageId::kRangeNoise)).normal(0));
    }
  }
};

// Quantisation to the format's range unit and the calibrated reflectivity drivers read.
class ReportStage final : public Stage {
 public:
  [[nodiscard]] std::string_view name() const override { return "report"; }
  void run(const BlockContext& b) const override {
    const auto& model = *b.geometry.pattern().model;
    const double p_noise = b.params.noise_power_w();
    const double gain = b.params.peak_power_w * b.params.detector_efficiency;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      const double range =
          b.work.alive[i]
              ? physics::quantise_range(b.work.range_m[i], model.range_unit_m, model.max_range_m)
              : 0.0;
      b.out.range_m[i] = static_cast<float>(range);
      if (range == 0.0) {
        b.out.power_w[i] = 0;
        b.out.reflectivity[i] = 0;
        b.out.signal_photons[i] = 0;
        continue;
      }
      const double power = b.work.power_w[i];
      const double equivalent =
          physics::lambertian_equivalent(power / gain, b.work.range_m[i], b.work.transmission[i]);
      b.out.power_w[i] = static_cast<float>(power);
      b.out.reflectivity[i] =
          static_cast<std::uint8_t>(physics::calibrated_reflectivity(equivalent));
      b.out.signal_photons[i] =
          static_cast<std::uint16_t>(std::clamp(std::lround(power / p_noise), 1L, 65535L));
    }
  }
};

}  // namespace

void BeamWork::resize(std::size_t beams) {
  range_m.assign(beams, 0);
  cos_incidence.assign(beams, 0);
  returned_fraction.assign(beams, 0);
  transmission.assign(beams, 1);
  power_w.assign(beams, 0);
  alive.assign(beams, 0);
}

Pipeline::Pipeline(const ScanPattern& pattern, const MaterialTable& materials,
                   PipelineSettings settings)
    : geometry_(pattern), materials_(materials), settings_(settings) {
  stages_.push_back(std::make_unique<GeometryStage>());
  stages_.push_back(std::make_unique<IpspSurfaceStage>());
  if (settings_.mode == PhysicsMode::kDefault) {
    stages_.push_back(std::make_unique<ClearAirStage>());
    stages_.push_back(std::make_unique<NoisyDetectionStage>());
    stages_.push_back(std::make_unique<RangeNoiseStage>());
  } else {
    stages_.push_back(std::make_unique<IdealDetectionStage>());
  }
  stages_.push_back(std::make_unique<ReportStage>());
}

std::vector<std::string_view> Pipeline::stage_names() const {
  std::vector<std::string_view> names;
  for (const auto& s : stages_) names.push_back(s->name());
  return names;
}

void Pipeline::process(const FrameHits& hits, FrameReturns& out) {
  const std::size_t beams = hits.shape.beams();
  if (work_.alive.size() != beams) work_.resize(beams);
  if (out.range_m.size() != beams) out.reshape(hits.shape);
  out.frame_number = hits.frame_number;
  const DrawKey base{settings_.seed, settings_.sensor_index, hits.frame_number, 0, 0};
  constexpr std::size_t kBeamsPerBlock = 1024;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, beams, kBeamsPerBlock),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      const BlockContext block{r.begin(), r.end(),   hits,       work_,
                                               out,       geometry_, materials_, settings_.params,
                                               base};
                      for (const auto& stage : stages_) stage->run(block);
                      LIDAREMU_TSAN_RELEASE(&out);
                    });
  LIDAREMU_TSAN_ACQUIRE(&out);
}

}  // namespace lidaremu::core
