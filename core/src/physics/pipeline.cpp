// The small runner: builds the chain from its names, derives the frame's constants, runs
// consecutive per-beam stages fused over blocks of beams and each frame stage alone.
#include "lidaremu/core/pipeline.hpp"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <cmath>

#include "parallel_blocks.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core {

Pipeline::Pipeline(const ScanPattern& pattern, const MaterialTable& materials,
                   PipelineSettings settings)
    : geometry_(pattern), materials_(materials), settings_(std::move(settings)) {
  const StageSetup setup{pattern, settings_.params, settings_.echoes};
  for (const StageRow* row : check_chain(settings_.stages)) {
    stages_.push_back({row, row->make(setup)});
    system_constant_ = std::max(system_constant_, stages_.back().stage->system_constant());
  }
}

std::vector<std::string_view> Pipeline::stage_names() const {
  std::vector<std::string_view> names;
  for (const auto& link : stages_) names.push_back(link.row->name);
  return names;
}

FrameConstants Pipeline::constants_for(const Weather& weather) const {
  const PhysicsParams& p = settings_.params;
  FrameConstants c(physics::BeamCone(p.beam_exit_radius_m, p.beam_divergence_rad));
  c.system_constant = system_constant_;
  c.noise_w = p.noise_power_w();
  c.threshold_sigmas = p.threshold_sigmas();
  c.threshold_w = c.threshold_sigmas * c.noise_w;
  c.clear_extinction_per_m =
      physics::extinction_from_visibility(weather.visibility_m, p.wavelength_nm);
  c.rain_extinction_per_m = physics::rain_extinction_per_m(weather.rain_mm_per_h);
  c.rain_drops_per_m3 = physics::rain_drop_density_per_m3(weather.rain_mm_per_h);
  c.rain_slope_per_mm = weather.rain_mm_per_h > 0
                            ? physics::marshall_palmer_slope_per_mm(weather.rain_mm_per_h)
                            : 0.0;
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

void Pipeline::warm_up(FrameShape shape) {
  if (work_.pulse_count.size() != shape.beams()) work_.resize(shape.beams());
}

void Pipeline::process_stages(std::size_t first, std::size_t last_stage, const FrameHits& hits,
                              FrameReturns& out) {
  const std::size_t beams = hits.shape.beams();
  warm_up(hits.shape);
  if (out.range_m.size() != beams * FrameReturns::kMaxEchoes) out.reshape(hits.shape);
  out.frame_number = hits.frame_number;
  PhysicsParams params = settings_.params;
  params.weather = hits.weather;
  const FrameConstants constants = constants_for(hits.weather);
  last_stage = std::min(last_stage, stages_.size());
  const DrawKey base{settings_.seed, settings_.sensor_index, hits.frame_number, 0, 0};
  for (std::size_t s = first; s < last_stage; ++s) {
    stages_[s].stage->begin_frame(hits, constants, params, base);
  }
  constexpr std::size_t kBeamsPerBlock = 1024;
  const auto context = [&](std::size_t begin, std::size_t end) {
    return BlockContext{begin,     end,        hits,   work_,     out,
                        geometry_, materials_, params, constants, base};
  };
  while (first < last_stage) {
    if (stages_[first].row->whole_frame) {
      stages_[first].stage->run(context(0, beams));
      ++first;
      continue;
    }
    std::size_t last = first;
    while (last < last_stage && !stages_[last].row->whole_frame) ++last;
    parallel_blocks(tbb::blocked_range<std::size_t>(0, beams, kBeamsPerBlock), &out,
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      const BlockContext block = context(r.begin(), r.end());
                      for (std::size_t s = first; s < last; ++s) stages_[s].stage->run(block);
                    });
    first = last;
  }
}

}  // namespace lidaremu::core
