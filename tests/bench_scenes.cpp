#include "bench_scenes.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/scan_table.hpp"

#ifndef LIDAREMU_BENCH_MATERIALS
#define LIDAREMU_BENCH_MATERIALS "config/materials.toml"
#endif

namespace lidaremu::bench {

const core::MaterialTable& materials() {
  static const auto table = core::MaterialTable::load(LIDAREMU_BENCH_MATERIALS);
  return table;
}

namespace {

// The registry's models on their default scans; the Livox Mid-360 (no pattern of its own among
// the facts) on the built-in test pattern.
core::ScanPattern pattern_of(const SceneKey& key) {
  if (key.model == "livox-mid360") {
    return clients::scan_for(key.model, 0, "", std::string(core::kTestPatternName));
  }
  return clients::scan_for(key.model, 0, key.mode);
}

}  // namespace

const Scene& scene(const SceneKey& key) {
  static std::map<SceneKey, std::unique_ptr<Scene>> cache;
  auto& slot = cache[key];
  if (slot) return *slot;
  slot = std::make_unique<Scene>();
  slot->pattern = pattern_of(key);
  std::vector<float> rows;
  std::vector<std::uint32_t> ids;
  const auto demo =
      key.all_returning ? clients::DemoScene::enclosing_sphere(20.0) : clients::DemoScene();
  constexpr std::uint32_t kFrame = 1;  // a table scan's beams depend on it
  demo.render(core::BeamGeometry(slot->pattern), rows, &ids, key.rays, 0.001, kFrame);
  auto& f = slot->hits;
  f.reshape({static_cast<std::uint32_t>(slot->pattern.columns_per_frame),
             static_cast<std::uint16_t>(slot->pattern.model->channels)},
            {static_cast<std::uint8_t>(key.rays), 1});
  f.clear(kFrame);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const float* r = &rows[i * 7];
    f.x[i] = r[0], f.y[i] = r[1], f.z[i] = r[2], f.nx[i] = r[3], f.ny[i] = r[4], f.nz[i] = r[5];
    f.material[i] = static_cast<std::uint16_t>(r[6]);
    if (key.all_retroreflector && f.material[i] != 0) {
      f.material[i] = clients::material::kRetroreflector;
    }
    f.object_id[i] = ids[i];
  }
  f.columns_received = f.shape.columns;
  f.weather.rain_mm_per_h = key.rain_mm_per_h;
  f.weather.visibility_m = key.visibility_m;
  f.weather.sun_irradiance_w_per_m2 = key.sun_w_per_m2;
  return *slot;
}

core::PipelineSettings default_chain(const core::ScanPattern& pattern, core::ReturnMode echoes) {
  core::PipelineSettings s;
  s.params = core::default_physics_params(*pattern.model);
  s.return_mode = echoes;
  s.seed = 1;
  return s;
}

}  // namespace lidaremu::bench
