#include "demo_frame.hpp"

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/pipeline.hpp"

namespace lidaremu::test {

using namespace lidaremu::core;

DemoFrame demo_frame(const ScanPattern& pattern, ReturnMode echoes, std::uint32_t frame) {
  const SensorModel& model = *pattern.model;
  const BeamGeometry geometry(pattern);
  std::vector<float> rows;
  lidaremu::clients::DemoScene().render(geometry, rows, nullptr, 1, 0.001, frame);
  FrameHits hits;
  hits.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
                static_cast<std::uint16_t>(model.channels)});
  hits.clear(frame);
  hits.columns_received = hits.shape.columns;
  DemoFrame out;
  for (std::size_t i = 0; i < hits.shape.beams(); ++i) {
    const float* r = &rows[i * 7];
    hits.x[i] = r[0], hits.y[i] = r[1], hits.z[i] = r[2];
    hits.nx[i] = r[3], hits.ny[i] = r[4], hits.nz[i] = r[5];
    hits.material[i] = static_cast<std::uint16_t>(r[6]);
    if (r[6] != 0) out.hits.push_back({r[0], r[1], r[2]});
    out.hit_by_beam.push_back(r[6] != 0 ? XYZ{r[0], r[1], r[2]} : XYZ{0, 0, 0});
  }
  static const auto materials = MaterialTable::load(materials_path());
  PipelineSettings settings;
  settings.stages = stage_chain(PhysicsMode::kIdeal);
  settings.params = default_physics_params(model);
  settings.return_mode = echoes;
  Pipeline pipeline(pattern, materials, settings);
  pipeline.process(hits, out.returns);
  return out;
}

}  // namespace lidaremu::test
