#include "pipeline_run.hpp"

#include <tbb/task_arena.h>

#include <catch2/catch.hpp>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/materials.hpp"

namespace lidaremu::test {

using namespace lidaremu::core;

std::vector<CollectingSink::Packet> CollectingSink::data() const {
  std::vector<Packet> out;
  for (const auto& p : packets)
    if (p.channel == PacketChannel::kData) out.push_back(p);
  return out;
}

ScanPattern pattern_for(const char* name) {
  const SensorModel& m = *find_sensor_model(name);
  return rpm_driven(m) ? *make_rpm_scan(m, 600).pattern : *make_ouster_scan(m, 1024, 10).pattern;
}

FrameHits scene_frame(const ScanPattern& pattern, std::uint32_t number) {
  const BeamGeometry g(pattern);
  std::vector<float> rows;
  clients::DemoScene().render(g, rows);
  FrameHits f;
  f.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
             static_cast<std::uint16_t>(pattern.model->channels)});
  f.clear(number);
  for (std::size_t i = 0; i < f.shape.beams(); ++i) {
    const float* r = &rows[i * 7];
    f.x[i] = r[0], f.y[i] = r[1], f.z[i] = r[2], f.nx[i] = r[3], f.ny[i] = r[4], f.nz[i] = r[5];
    f.material[i] = static_cast<std::uint16_t>(r[6]);
  }
  f.columns_received = f.shape.columns;
  return f;
}

PipelineSettings settings_for(const ScanPattern& pattern, PhysicsMode mode, std::uint64_t seed) {
  PipelineSettings s;
  s.stages = stage_chain(mode);
  s.params = default_physics_params(*pattern.model);
  s.seed = seed;
  return s;
}

std::vector<CollectingSink::Packet> run(const char* model, PhysicsMode mode, int threads,
                                        int frames, FrameReturns* last) {
  const auto pattern = pattern_for(model);
  const auto materials = MaterialTable::load(materials_path());
  Pipeline pipeline(pattern, materials, settings_for(pattern, mode, 1234));
  auto encoder = make_encoder(pattern, {992200000001ull, 0x123456});
  CollectingSink sink;
  FrameReturns returns;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    for (int f = 0; f < frames; ++f) {
      const auto hits = scene_frame(pattern, static_cast<std::uint32_t>(f));
      pipeline.process(hits, returns);
      encoder->encode_frame(returns, 1000.0 + f * pattern.frame_period_s, sink);
    }
  });
  if (last) *last = returns;
  return sink.packets;
}

void require_same_returns(const core::FrameReturns& a, const core::FrameReturns& b) {
  REQUIRE(a.range_m == b.range_m);
  REQUIRE(a.power_w == b.power_w);
  REQUIRE(a.reflectivity == b.reflectivity);
  REQUIRE(a.signal_photons == b.signal_photons);
  REQUIRE(a.pulse_width_ns == b.pulse_width_ns);
  REQUIRE(a.object_id == b.object_id);
  REQUIRE(a.kind == b.kind);
  REQUIRE(a.near_ir == b.near_ir);
}

}  // namespace lidaremu::test
