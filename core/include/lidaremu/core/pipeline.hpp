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
  EchoMode echoes = EchoMode::kStrongest;  // what the echo stage reports
  PhysicsParams params;
  std::uint64_t seed = 0;
  std::uint32_t sensor_index = 0;
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
    process_stages(0, stages_.size(), hits, out);
  }
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

  BeamGeometry geometry_;
  const MaterialTable& materials_;
  PipelineSettings settings_;
  double system_constant_ = 0;
  std::vector<ChainLink> stages_;
  BeamWork work_;
};

}  // namespace lidaremu::core
