#pragma once
// The micro-benchmarks' scenes: the demo scene (or the all-returning sphere) rendered once per
// sensor, ray count and weather, the material table, and the default chain they run through.
#include <string>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::bench {

// The demo scene for one sensor, with every ray of every beam.
struct Scene {
  core::ScanPattern pattern;
  core::FrameHits hits;
};

// What the micro-benchmarks vary: the sensor, rays per beam, the weather, retroreflectors.
struct SceneKey {
  std::string model;
  std::string mode;
  int rays = 1;
  double rain_mm_per_h = 10.0;
  bool all_retroreflector = false;
  double visibility_m = 23000.0;
  double sun_w_per_m2 = 0.0;
  bool all_returning = false;  // a 20 m concrete sphere instead of the demo scene
  auto operator<=>(const SceneKey&) const = default;  // NOLINT(modernize-use-nullptr)
};

// A scene through the default chain and one encoder.
struct OutputCase {
  const char* name;
  SceneKey key;
  core::ReturnMode return_mode;
  core::OusterProfile profile;
  // Changes to the default chain (digests only: every stage and model choice is fingerprinted).
  void (*adjust)(core::PipelineSettings&) = nullptr;
};

const core::MaterialTable& materials();
// Rendered once per process: rendering is not what is measured.
const Scene& scene(const SceneKey& key);
core::PipelineSettings default_chain(const core::ScanPattern& pattern, core::ReturnMode echoes);

}  // namespace lidaremu::bench
