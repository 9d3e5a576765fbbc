// The small runner: builds the chain from its names, derives the frame's constants, runs
// consecutive per-beam stages fused over blocks of beams and each frame stage alone.
#include "lidaremu/core/pipeline.hpp"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <cmath>

#include "lidaremu/core/parallel_blocks.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core {

Pipeline::Pipeline(const ScanPattern& pattern, const MaterialTable& materials,
                   PipelineSettings settings)
    : geometry_(pattern), materials_(materials), settings_(std::move(settings)) {
  const StageSetup setup{pattern, settings_.params, settings_.return_mode};
  for (const StageRow* row : check_chain(settings_.stages)) {
    stages_.push_back({row, row->make(setup)});
    system_constant_ = std::max(system_constant_, stages_.back().stage->system_constant());
  }
  frame_stage_ = static_cast<std::size_t>(
      std::find_if(stages_.begin(), stages_.end(),
                   [](const ChainLink& link) { return link.row->whole_frame; }) -
      stages_.begin());
  // A frame stage's per-beam part (prepare_beams) runs at the end of the per-beam stages before
  // it: check_chain puts some there, since every frame stage reads what only they write
  // (test_pipeline holds the registry to it).
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
  if (work_.pulse_count.size() == shape.beams()) return;
  work_.resize(shape.beams());
  work_.pulses.fault_in();  // before the engine sends: no page faults in the first frames
}

void Pipeline::begin_frame(const FrameHits& hits, FrameReturns& out) {
  begin_stages(0, stages_.size(), hits, out);
}

void Pipeline::begin_stages(std::size_t first, std::size_t last, const FrameHits& hits,
                            FrameReturns& out) {
  const std::size_t beams = hits.shape.beams();
  warm_up(hits.shape);
  if (out.range_m.size() != beams * FrameReturns::kMaxEchoes) out.reshape(hits.shape);
  // The report writes the mode's planes only; the others stay empty (a write each beam and
  // frame saved per plane: most modes fill one of three).
  out.keep_planes(echo_planes(settings_.return_mode));
  out.frame_number = hits.frame_number;
  Streamed& s = streamed_;
  s.params = settings_.params;
  s.params.weather = hits.weather;
  s.constants = constants_for(hits.weather);
  s.base = DrawKey{settings_.seed, settings_.sensor_index, hits.frame_number, 0, 0};
  for (std::size_t k = first; k < last; ++k) {
    stages_[k].stage->begin_frame(hits, s.constants, s.params, s.base);
  }
  const bool pattern_sized =
      hits.shape.columns == static_cast<std::uint32_t>(geometry_.pattern().columns_per_frame);
  s.reach = frame_stage_ < stages_.size() && pattern_sized
                ? stages_[frame_stage_].stage->column_reach()
                : -1;
  s.frame_run =
      frame_stage_ < stages_.size()
          ? std::max<std::uint32_t>(1, stages_[frame_stage_].stage->streaming_run_columns())
          : 1;
  const auto reach = static_cast<std::uint32_t>(std::max(s.reach, 0));
  s.before_done = 0;
  s.frame_done = reach;
  s.after_done = 2 * reach;
  s.finished = false;
}

std::uint32_t Pipeline::advance(const FrameHits& hits, std::uint32_t received, FrameReturns& out) {
  Streamed& s = streamed_;
  const std::uint32_t columns = hits.shape.columns;
  if (s.finished) return columns;
  received = std::min(received, columns);
  const std::size_t all = stages_.size();
  const std::size_t fs = frame_stage_;
  if (fs == all) {  // no frame stage: every stage as the columns come
    if (received > s.after_done) {
      run_columns(0, all, s.after_done, received, hits, out);
      s.after_done = received;
    }
    s.finished = received == columns;
    return s.after_done;
  }
  if (received > s.before_done) {
    run_columns(0, fs, s.before_done, received, hits, out);
    s.before_done = received;
  }
  if (received < columns) {
    if (s.reach < 0) return 0;
    const auto reach = static_cast<std::uint32_t>(s.reach);
    if (s.before_done >= s.frame_done + reach + s.frame_run) {
      run_columns(fs, fs + 1, s.frame_done, s.before_done - reach, hits, out);
      s.frame_done = s.before_done - reach;
    }
    if (s.frame_done > s.after_done + reach) {
      run_columns(fs + 1, all, s.after_done, s.frame_done - reach, hits, out);
      s.after_done = s.frame_done - reach;
    }
    return 0;
  }
  // The frame is in: the frame stage on the columns left and round the seam (the first columns
  // read the last ones), then the stages after it on theirs.
  const auto head = static_cast<std::uint32_t>(std::max(s.reach, 0));
  run_columns(fs, fs + 1, s.frame_done, columns, hits, out);
  run_columns(fs, fs + 1, 0, head, hits, out);
  run_columns(fs + 1, all, s.after_done, columns, hits, out);
  run_columns(fs + 1, all, 0, 2 * head, hits, out);
  s.finished = true;
  return columns;
}

void Pipeline::process_stages(std::size_t first, std::size_t last_stage, const FrameHits& hits,
                              FrameReturns& out) {
  last_stage = std::min(last_stage, stages_.size());
  begin_stages(first, last_stage, hits, out);
  run_columns(first, last_stage, 0, hits.shape.columns, hits, out);
  streamed_.finished = true;
}

void Pipeline::run_columns(std::size_t first, std::size_t last, std::uint32_t begin,
                           std::uint32_t end, const FrameHits& hits, FrameReturns& out) {
  if (begin >= end) return;
  const std::size_t beam_begin = std::size_t{begin} * hits.shape.channels;
  const std::size_t beam_end = std::size_t{end} * hits.shape.channels;
  const Streamed& s = streamed_;
  constexpr std::size_t kBeamsPerBlock = 1024;
  const auto context = [&](std::size_t b, std::size_t e) {
    return BlockContext{b,         e,          hits,     work_,       out,
                        geometry_, materials_, s.params, s.constants, s.base};
  };
  while (first < last) {
    if (stages_[first].row->whole_frame) {
      stages_[first].stage->run(context(beam_begin, beam_end));
      ++first;
      continue;
    }
    std::size_t fused_end = first;
    while (fused_end < last && !stages_[fused_end].row->whole_frame) ++fused_end;
    // After a frame stage, the candidates were last written a whole range ago.
    const bool after_frame_stage = first > 0 && stages_[first - 1].row->whole_frame;
    parallel_blocks(tbb::blocked_range<std::size_t>(beam_begin, beam_end, kBeamsPerBlock), &out,
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      BlockContext block = context(r.begin(), r.end());
                      block.candidates_cold = after_frame_stage;
                      stages_[first].stage->run(block);
                      block.candidates_cold = false;
                      for (std::size_t k = first + 1; k < fused_end; ++k) {
                        stages_[k].stage->run(block);
                      }
                      if (fused_end < stages_.size())
                        stages_[fused_end].stage->prepare_beams(block);
                    });
    first = fused_end;
  }
}

}  // namespace lidaremu::core
