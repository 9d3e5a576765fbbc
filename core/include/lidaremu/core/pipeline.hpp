#pragma once
// The physics chain: the stages a list of names selects (physics/stage_registry.hpp), run on one
// frame. Consecutive per-beam stages run fused over blocks of beams under tbb::parallel_for; a
// frame stage (blooming) sees the whole frame between two such passes. Every random draw is keyed
// by (seed, sensor, frame, beam, stage, draw), so the result never depends on scheduling.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/physics/stage.hpp"
#include "lidaremu/core/physics/stage_registry.hpp"
#include "lidaremu/core/physics_params.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

struct PipelineSettings {
  std::vector<std::string> stages = stage_chain(PhysicsMode::kDefault);
  ReturnMode return_mode = ReturnMode::kStrongest;  // what the echo stage reports
  PhysicsParams params;
  std::uint64_t seed = 0;
  std::uint32_t sensor_index = 0;
  bool operator==(const PipelineSettings&) const = default;
};

class Pipeline {
 public:
  // Throws std::invalid_argument naming the stage when the chain is inconsistent.
  Pipeline(const ScanPattern& pattern, const MaterialTable& materials, PipelineSettings settings);

  // Sizes and first-touches the scratch for the pattern's frames (138 MB for an OS1-128 2048x10,
  // in huge pages: faulting them in can stall for a few hundred milliseconds while the kernel
  // compacts memory), so that no frame waits for it. The daemon calls it at start-up, before the
  // engine can send (SensorRuntime::warm_up).
  void warm_up(FrameShape shape);
  // Turns one frame of hits into returns. Reuses its scratch; does not allocate once warm.
  void process(const FrameHits& hits, FrameReturns& out) {
    begin_frame(hits, out);
    advance(hits, hits.shape.columns, out);
  }
  // A frame streamed in columns, as its datagrams arrive: begin_frame takes what the frame's
  // physics depends on (its number, its weather), then each advance runs every stage that the
  // columns [0, received) allow. Those columns of `hits` must not change any more; received ==
  // hits.shape.columns finishes the frame. Returns how many leading columns of `out` are final
  // (the encoder may send them). The returns are the same bytes as process() gives, whatever
  // the steps. A frame stage that reads neighbouring columns (blooming) runs on a column once
  // its neighbours are in; round the seam it reads the frame's last columns, so the first
  // columns are final only with the whole frame.
  void begin_frame(const FrameHits& hits, FrameReturns& out);
  std::uint32_t advance(const FrameHits& hits, std::uint32_t received, FrameReturns& out);
  // Runs stages [first, last) of the chain (stage_names() order) on the frame: the stages before
  // `first` must have run on it. For measuring one stage at a time.
  void process_stages(std::size_t first, std::size_t last, const FrameHits& hits,
                      FrameReturns& out);
  [[nodiscard]] std::vector<std::string_view> stage_names() const;
  [[nodiscard]] const BeamGeometry& geometry() const { return geometry_; }
  [[nodiscard]] const PipelineSettings& settings() const { return settings_; }
  // The system constant K of the range equation this pipeline uses (W m^2 sr).
  [[nodiscard]] double system_constant() const { return system_constant_; }

 private:
  struct ChainLink {
    const StageRow* row;
    std::unique_ptr<Stage> stage;
  };
  [[nodiscard]] FrameConstants constants_for(const Weather& weather) const;
  // begin_frame, calling only the stages [first, last) (process_stages measures those).
  void begin_stages(std::size_t first, std::size_t last, const FrameHits& hits, FrameReturns& out);
  // Runs stages [first, last) on the columns [begin, end): per-beam stages fused over blocks of
  // beams in parallel, a frame stage on the columns as one range.
  void run_columns(std::size_t first, std::size_t last, std::uint32_t begin, std::uint32_t end,
                   const FrameHits& hits, FrameReturns& out);

  // The frame being streamed: what begin_frame fixed, and how far each part of the chain got.
  // The chain is split at its frame stage (if any): `before` runs on columns as they arrive,
  // the frame stage on columns whose neighbours are in, `after` on columns whose neighbours the
  // frame stage is done with.
  struct Streamed {
    PhysicsParams params;
    FrameConstants constants{physics::BeamCone(0, 0)};
    DrawKey base;
    int reach = -1;                 // the frame stage's column reach (-1: the whole frame)
    std::uint32_t frame_run = 1;    // the fewest columns the frame stage runs on until it is in
    std::uint32_t before_done = 0;  // columns [0, before_done) went through the stages before
    // Until the frame is in, the frame stage runs on [reach, frame_done) and the stages after it
    // on [2 reach, after_done): the first columns wait for the last (round the seam).
    std::uint32_t frame_done = 0;
    std::uint32_t after_done = 0;
    bool finished = false;
  };
  Streamed streamed_;
  std::size_t frame_stage_ = 0;  // the chain's frame stage; stages_.size() when it has none
  BeamGeometry geometry_;
  const MaterialTable& materials_;
  PipelineSettings settings_;
  double system_constant_ = 0;
  std::vector<ChainLink> stages_;
  BeamWork work_;
};

}  // namespace lidaremu::core
