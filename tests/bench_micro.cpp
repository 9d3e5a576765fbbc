// Micro-benchmarks: every physics stage of the default chain, the whole chain, and every encoder,
// in ns per ray (per beam for encoders) on the demo scene. Run by hand for numbers
// (`build/tests/lidaremu-microbench`), smoke-run once in the test suite so they never rot.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/cloud.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/daemon/live_view.hpp"
#include "lidaremu/protocol/raw_rows.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

#ifndef LIDAREMU_BENCH_MATERIALS
#define LIDAREMU_BENCH_MATERIALS "config/materials.toml"
#endif

namespace {
using namespace lidaremu;

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

const core::MaterialTable& materials() {
  static const auto table = core::MaterialTable::load(LIDAREMU_BENCH_MATERIALS);
  return table;
}

// Scenes are rendered once per process: rendering is not what is measured.
const Scene& scene(const SceneKey& key) {
  static std::map<SceneKey, std::unique_ptr<Scene>> cache;
  auto& slot = cache[key];
  if (slot) return *slot;
  slot = std::make_unique<Scene>();
  slot->pattern = clients::scan_for(key.model, 0, key.mode);
  std::vector<float> rows;
  std::vector<std::uint32_t> ids;
  const auto demo =
      key.all_returning ? clients::DemoScene::enclosing_sphere(20.0) : clients::DemoScene();
  demo.render(core::BeamGeometry(slot->pattern), rows, &ids, key.rays);
  auto& f = slot->hits;
  f.reshape({static_cast<std::uint32_t>(slot->pattern.columns_per_frame),
             static_cast<std::uint16_t>(slot->pattern.model->channels)},
            {static_cast<std::uint8_t>(key.rays), 1});
  f.clear(1);
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

// A scene through the default chain and one encoder.
struct OutputCase {
  const char* name;
  SceneKey key;
  core::EchoMode echoes;
  core::OusterProfile profile;
  // Changes to the default chain (digests only: every stage and model choice is fingerprinted).
  void (*adjust)(core::PipelineSettings&) = nullptr;
};

core::PipelineSettings default_chain(const core::ScanPattern& pattern, core::EchoMode echoes) {
  core::PipelineSettings s;
  s.params = core::default_physics_params(*pattern.model);
  s.echoes = echoes;
  s.seed = 1;
  return s;
}

// Wall nanoseconds per item, as a plain number (Google Benchmark's inverted rates print seconds).
double ns_per(double seconds, benchmark::IterationCount iterations, std::size_t items) {
  return seconds * 1e9 / (static_cast<double>(iterations) * static_cast<double>(items));
}

std::size_t rays_of(const Scene& s) { return s.hits.shape.beams() * s.hits.layout.rays_per_beam; }

// One stage of the default chain: the stages before it run untimed on each iteration, so the
// iteration count is fixed (Google Benchmark would size it by the timed part alone).
benchmark::IterationCount g_stage_iterations = 10;  // NOLINT: set once from the command line
bool g_every_simd_target = false;                   // NOLINT: set once from the command line

// One stage of the default chain: the stages before it run untimed on each iteration.
void stage(benchmark::State& state, const SceneKey& key, std::size_t index) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(),
                          default_chain(s.pattern, core::EchoMode::kStrongest));
  core::FrameReturns out;
  double stage_s = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    state.PauseTiming();
    pipeline.process_stages(0, index, s.hits, out);
    state.ResumeTiming();
    const auto begin = std::chrono::steady_clock::now();
    pipeline.process_stages(index, index + 1, s.hits, out);
    stage_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  state.counters["ns_per_ray"] = ns_per(stage_s, state.iterations(), rays_of(s));
}

void whole_chain(benchmark::State& state, const SceneKey& key, core::EchoMode echoes) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(), default_chain(s.pattern, echoes));
  core::FrameReturns out;
  pipeline.process(s.hits, out);  // first touch of the scratch memory is not the steady state
  const auto begin = std::chrono::steady_clock::now();
  // NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): Google Benchmark's idiom
  for (auto _ : state) pipeline.process(s.hits, out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  state.counters["ns_per_ray"] = ns_per(seconds, state.iterations(), rays_of(s));
  state.counters["rays_per_s"] = benchmark::Counter(static_cast<double>(rays_of(s)),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

// The input thread's work for one frame where every beam returns (the bench's all-returning
// scene): HitBatch datagrams (their columns named) or headerless raw7 rows (each beam found from
// its direction) stored into the frame the physics reads.
void input(benchmark::State& state, const std::string& model, const std::string& mode, bool raw) {
  const auto pattern = clients::scan_for(model, 0, mode);
  const core::BeamGeometry geometry(pattern);
  const auto channels = static_cast<std::uint16_t>(pattern.model->channels);
  std::vector<float> rows;
  clients::DemoScene::enclosing_sphere(20.0).render(geometry, rows);
  std::vector<std::vector<std::uint8_t>> datagrams;
  if (raw) {
    for (const auto& part : clients::raw_datagrams(rows, std::size_t{channels} * 7)) {
      datagrams.emplace_back(part.bytes.begin(), part.bytes.end());
    }
  } else {
    clients::BatchHeader h;
    h.frame = 1;
    h.column_count = static_cast<std::uint32_t>(pattern.columns_per_frame);
    h.sim_time_ns = 1'000'000'000;
    datagrams = clients::build_frame_batches(
        h, channels, rows, static_cast<std::uint64_t>(pattern.column_period_s * 1e9));
  }
  core::FrameHits frame;
  frame.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), channels}, {1, 1});
  const protocol::EngineConventions engine;
  protocol::RawRowAssembler assembler(geometry, 7, {1, 1});
  const auto begin = std::chrono::steady_clock::now();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    frame.clear(1);
    core::FrameHits* current = &frame;
    for (const auto& d : datagrams) {
      if (raw) {
        assembler.store(d, engine, materials(), current, [] {});
      } else {
        protocol::BatchView view;
        protocol::decode_hit_batch(d, view);
        protocol::store_batch(view, engine, materials(), frame);
      }
    }
    assembler.reset();
    benchmark::DoNotOptimize(frame.x.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  state.counters["ns_per_beam"] = ns_per(seconds, state.iterations(), frame.shape.beams());
  state.counters["columns"] = static_cast<double>(frame.columns_received);
}

// The vector kernel's samplers: ns per draw for a 1024-beam block, on the instruction set in use
// (--simd-target), beside the scalar generator's double-precision draws.
void draws(benchmark::State& state, const std::string& sampler) {
  constexpr std::size_t kBeams = 1024;
  const core::DrawKey key{1, 0, 7, 0, 2};
  std::vector<float> values(kBeams);
  std::vector<float> means(kBeams);
  for (std::size_t i = 0; i < kBeams; ++i) means[i] = 0.02f * static_cast<float>(i);  // 0..20
  std::vector<std::uint32_t> counts(kBeams);
  std::uint32_t draw = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    ++draw;
    if (sampler == "normal") {
      core::simd::normals(key, 0, draw, values);
    } else if (sampler == "uniform") {
      core::simd::uniforms(key, 0, draw, values);
    } else if (sampler == "poisson") {
      core::simd::poissons(key, 0, draw, means, counts);
    } else if (sampler == "normal-scalar-double") {
      for (std::size_t i = 0; i < kBeams; ++i) {
        core::DrawKey k = key;
        k.beam = static_cast<std::uint32_t>(i);
        values[i] = static_cast<float>(core::CounterRng(k).normal(draw));
      }
    } else {
      for (std::size_t i = 0; i < kBeams; ++i) {
        core::DrawKey k = key;
        k.beam = static_cast<std::uint32_t>(i);
        std::uint32_t d = draw;
        counts[i] = core::CounterRng(k).poisson(means[i], d);
      }
    }
    benchmark::DoNotOptimize(values.data());
    benchmark::DoNotOptimize(counts.data());
  }
  state.counters["ns_per_draw"] = benchmark::Counter(
      static_cast<double>(kBeams),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(sampler.find("scalar") == std::string::npos ? core::simd::current_target()
                                                             : "scalar double");
}

class DiscardingSink final : public core::PacketSink {
 public:
  void on_packet(core::PacketChannel, std::span<const std::uint8_t> bytes, double) override {
    bytes_ += bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  std::uint64_t bytes_ = 0;
};

void encoder(benchmark::State& state, const SceneKey& key, core::EchoMode echoes,
             core::OusterProfile profile) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(), default_chain(s.pattern, echoes));
  core::FrameReturns returns;
  pipeline.process(s.hits, returns);
  core::OusterOutput ouster;
  ouster.profile = profile;
  auto enc = core::make_encoder(s.pattern, {992200000001ull, 0x123456}, echoes, ouster);
  DiscardingSink sink;
  double start = 1000.0;
  const auto begin = std::chrono::steady_clock::now();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    enc->encode_frame(returns, start, sink);
    start += s.pattern.frame_period_s;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  state.counters["ns_per_beam"] = ns_per(seconds, state.iterations(), s.hits.shape.beams());
  state.counters["bytes_per_frame"] =
      static_cast<double>(sink.bytes_) / static_cast<double>(state.iterations());
}

class KeepingSink final : public core::PacketSink {
 public:
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double) override {
    if (channel == core::PacketChannel::kData) packets.emplace_back(bytes.begin(), bytes.end());
  }
  std::vector<std::vector<std::uint8_t>> packets;
};

// The live view's work for one frame on its own thread: the frame's packets decoded into a cloud
// with ground-truth ids, and (with_json) that cloud as the foxglove.PointCloud message.
void live_view(benchmark::State& state, const SceneKey& key, bool with_json) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(),
                          default_chain(s.pattern, core::EchoMode::kStrongest));
  core::FrameReturns returns;
  pipeline.process(s.hits, returns);
  const core::SensorIdentity identity{992200000001ull, 0x123456};
  auto enc = core::make_encoder(s.pattern, identity, core::EchoMode::kStrongest);
  KeepingSink sink;
  enc->encode_frame(returns, 1000.0, sink);
  enc->flush(sink);
  const std::vector<std::span<const std::uint8_t>> packets(sink.packets.begin(),
                                                           sink.packets.end());
  core::FrameTruth truth;
  truth.assign(returns);
  std::optional<core::ouster::Metadata> metadata;
  if (s.pattern.model->family == core::SensorFamily::kOuster) {
    metadata = core::ouster::parse_metadata(core::ouster::metadata_json(s.pattern, identity, {}));
  }
  core::CloudDecoder decoder(s.pattern, metadata);
  core::Cloud cloud;
  std::size_t json_bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    decoder.decode(packets, truth, truth, cloud);
    if (with_json) json_bytes = daemon::foxglove_point_cloud_json(cloud, "bench", 0).size();
    benchmark::DoNotOptimize(cloud.points.data());
  }
  state.counters["points"] = static_cast<double>(cloud.points.size());
  if (with_json) state.counters["json_MB"] = static_cast<double>(json_bytes) / 1e6;
}

void register_all() {
  const SceneKey os1{"os1-128", "2048x10"};
  SceneKey os1_rays5 = os1;
  os1_rays5.rays = 5;
  for (const SceneKey* key : std::initializer_list<const SceneKey*>{&os1, &os1_rays5}) {
    const Scene& s = scene(*key);
    core::Pipeline chain(s.pattern, materials(),
                         default_chain(s.pattern, core::EchoMode::kStrongest));
    const auto names = chain.stage_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string name =
          "stage/" + std::string(names[i]) + "/os1-128-2048x10/rays" + std::to_string(key->rays);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [key = *key, i](benchmark::State& st) { stage(st, key, i); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(g_stage_iterations);
    }
    benchmark::RegisterBenchmark(
        ("chain/os1-128-2048x10/rays" + std::to_string(key->rays)).c_str(),
        [key = *key](benchmark::State& st) { whole_chain(st, key, core::EchoMode::kStrongest); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const char* sampler :
       {"uniform", "normal", "poisson", "normal-scalar-double", "poisson-scalar-double"}) {
    benchmark::RegisterBenchmark((std::string("draws/") + sampler).c_str(),
                                 [sampler](benchmark::State& st) { draws(st, sampler); });
  }
  for (const bool raw : {false, true}) {
    benchmark::RegisterBenchmark(
        (std::string("input/") + (raw ? "raw7" : "framed") + "/os1-128-2048x10/all-returning")
            .c_str(),
        [raw](benchmark::State& st) { input(st, "os1-128", "2048x10", raw); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  // Seed 001's reference: a 16,384-beam frame (OS1-32 at 512x10), once on the demo scene and once
  // with every surface retroreflective, so that every beam blooms over the whole 3-degree skirt.
  for (const bool retro : {false, true}) {
    const SceneKey key{"os1-32", "512x10", 1, 10.0, retro};
    const std::string name =
        std::string("chain/os1-32-512x10/16384-beams/") + (retro ? "all-retroreflector" : "demo");
    benchmark::RegisterBenchmark(
        name.c_str(),
        [key](benchmark::State& st) { whole_chain(st, key, core::EchoMode::kStrongest); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    const Scene& s = scene(key);
    core::Pipeline chain(s.pattern, materials(),
                         default_chain(s.pattern, core::EchoMode::kStrongest));
    const auto names = chain.stage_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] != "blooming") continue;
      benchmark::RegisterBenchmark((std::string("stage/blooming/os1-32-512x10/16384-beams/") +
                                    (retro ? "all-retroreflector" : "demo"))
                                       .c_str(),
                                   [key, i](benchmark::State& st) { stage(st, key, i); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(g_stage_iterations);
    }
  }
  benchmark::RegisterBenchmark("chain/vls128-dual",
                               [](benchmark::State& st) {
                                 whole_chain(st, {"vls128", ""}, core::EchoMode::kDual);
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  // Encoders, one per packet layout.
  const OutputCase cases[] = {
      {"vlp16-strongest", {"vlp16", ""}, core::EchoMode::kStrongest, {}},
      {"vlp16-dual", {"vlp16", ""}, core::EchoMode::kDual, {}},
      {"vlp32c-strongest", {"vlp32c", ""}, core::EchoMode::kStrongest, {}},
      {"hdl32e-strongest", {"hdl32e", ""}, core::EchoMode::kStrongest, {}},
      {"hdl64e-strongest", {"hdl64e", ""}, core::EchoMode::kStrongest, {}},
      {"vls128-strongest", {"vls128", ""}, core::EchoMode::kStrongest, {}},
      {"vls128-dual", {"vls128", ""}, core::EchoMode::kDual, {}},
      {"os1-128-2048x10-legacy", os1, core::EchoMode::kStrongest, core::OusterProfile::kLegacy},
      {"os1-128-2048x10-rng19", os1, core::EchoMode::kStrongest, core::OusterProfile::kRng19},
      {"os1-128-2048x10-rng19-dual", os1, core::EchoMode::kTwoStrongest,
       core::OusterProfile::kRng19Dual},
      {"os1-128-2048x10-rng15", os1, core::EchoMode::kStrongest, core::OusterProfile::kRng15},
  };
  for (const auto& [name, key] :
       {std::pair{"os1-128-2048x10", os1}, std::pair{"vls128", SceneKey{"vls128", ""}}}) {
    for (const bool json : {false, true}) {
      benchmark::RegisterBenchmark(
          (std::string("view/") + (json ? "decode+foxglove-json/" : "decode/") + name).c_str(),
          [scene_key = key, json](benchmark::State& st) { live_view(st, scene_key, json); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  for (const auto& c : cases) {
    benchmark::RegisterBenchmark(
        (std::string("encoder/") + c.name).c_str(),
        [c](benchmark::State& st) { encoder(st, c.key, c.echoes, c.profile); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

// FNV-1a over every byte every packet carries, in order: equal digests before and after an
// optimisation mean the same output (with 1 thread and with many).
class DigestSink final : public core::PacketSink {
 public:
  void on_packet(core::PacketChannel, std::span<const std::uint8_t> bytes, double) override {
    for (const auto b : bytes) digest = (digest ^ b) * 0x100000001b3ull;
    ++packets;
  }
  std::uint64_t digest = 0xcbf29ce484222325ull;
  std::uint64_t packets = 0;
};

// The digest of each busy configuration, one line each: "DIGEST  PACKETS packets  NAME".
std::vector<std::string> digest_lines() {
  const OutputCase cases[] = {
      {"os1-128-2048x10 rain 10 mm/h", {"os1-128", "2048x10"}, core::EchoMode::kStrongest, {}},
      {"os1-128-2048x10 5 rays", {"os1-128", "2048x10", 5}, core::EchoMode::kStrongest, {}},
      {"os1-128-1024x10 rng19-dual",
       {"os1-128", "1024x10"},
       core::EchoMode::kTwoStrongest,
       core::OusterProfile::kRng19Dual},
      {"os1-32-512x10 all retroreflector",
       {"os1-32", "512x10", 1, 10.0, true},
       core::EchoMode::kStrongest,
       {}},
      {"vls128 dual", {"vls128", ""}, core::EchoMode::kDual, {}},
      {"hdl64e strongest", {"hdl64e", ""}, core::EchoMode::kStrongest, {}},
      {"vlp16 fog 300 m, sun 1000 W/m2, rain 25 mm/h",
       {"vlp16", "", 1, 25.0, false, 300.0, 1000.0},
       core::EchoMode::kDual,
       {}},
      {"vlp32c 5 rays ipsp surface, capability detection, raster correction",
       {"vlp32c", "", 5, 0.0},
       core::EchoMode::kLast,
       {},
       [](core::PipelineSettings& s) {
         core::use_stage(s.stages, "surface.ipsp");
         core::use_stage(s.stages, "detection.capability");
         core::use_stage(s.stages, "geometry.raster_correction");
       }},
      {"os0-64-1024x10 ideal",
       {"os0-64", "1024x10"},
       core::EchoMode::kStrongest,
       {},
       [](core::PipelineSettings& s) { s.stages = core::stage_chain(core::PhysicsMode::kIdeal); }},
  };
  std::vector<std::string> lines;
  for (const auto& c : cases) {
    const Scene& s = scene(c.key);
    core::OusterOutput ouster;
    ouster.profile = c.profile;
    auto settings = default_chain(s.pattern, c.echoes);
    if (c.adjust) c.adjust(settings);
    core::Pipeline pipeline(s.pattern, materials(), settings);
    auto enc = core::make_encoder(s.pattern, {992200000001ull, 0x123456}, c.echoes, ouster);
    DigestSink sink;
    core::FrameReturns returns;
    core::FrameHits hits = s.hits;
    for (std::uint32_t frame = 1; frame <= 3; ++frame) {
      hits.frame_number = frame;
      pipeline.process(hits, returns);
      enc->encode_frame(returns, 1000.0 + frame * s.pattern.frame_period_s, sink);
    }
    char line[256];
    std::snprintf(line, sizeof line, "%016llx  %6llu packets  %s",
                  static_cast<unsigned long long>(sink.digest),
                  static_cast<unsigned long long>(sink.packets), c.name);
    lines.emplace_back(line);
  }
  return lines;
}

// Every echo of a few frames through the default chain in rain, on the demo scene, where every
// beam returns, and in heavy rain (rain-drop echoes are rare at 10 mm/h), as CSV
// (scene,frame,beam,echo,range_m,reflectivity,kind): the samples scripts/compare_returns.py
// compares before and after a change of the output's bytes.
int write_returns_csv(const char* path) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path);
    return 2;
  }
  std::fprintf(f, "scene,frame,beam,echo,range_m,reflectivity,kind\n");
  struct Case {
    const char* name;
    bool sphere;
    double rain_mm_per_h;
  };
  for (const auto& [name, sphere, rain] :
       {Case{"demo", false, 10.0}, Case{"all-returning", true, 10.0},
        Case{"demo rain 50 mm/h", false, 50.0}}) {
    SceneKey key{"os1-128", "2048x10"};
    key.all_returning = sphere;
    key.rain_mm_per_h = rain;
    const Scene& s = scene(key);
    core::Pipeline pipeline(s.pattern, materials(),
                            default_chain(s.pattern, core::EchoMode::kDual));
    core::FrameReturns out;
    core::FrameHits hits = s.hits;
    for (std::uint32_t frame = 1; frame <= 4; ++frame) {
      hits.frame_number = frame;
      pipeline.process(hits, out);
      for (int echo = 0; echo < core::FrameReturns::kMaxEchoes; ++echo) {
        for (std::size_t beam = 0; beam < out.shape.beams(); ++beam) {
          const std::size_t i = out.slot(beam, echo);
          if (!(out.range_m[i] > 0)) continue;
          std::fprintf(f, "%s,%u,%zu,%d,%.4f,%u,%u\n", name, frame, beam, echo,
                       static_cast<double>(out.range_m[i]), out.reflectivity[i], out.kind[i]);
        }
      }
    }
  }
  std::fclose(f);
  return 0;
}

int print_digests() {
  for (const auto& line : digest_lines()) std::printf("%s\n", line.c_str());
  return 0;
}

// The differences between this build's digests (on the instruction set in use) and the expected
// lines, each printed.
int compare_digests(const std::vector<std::string>& expected, const std::string& target) {
  const auto actual = digest_lines();
  int differences = 0;
  for (std::size_t i = 0; i < std::max(actual.size(), expected.size()); ++i) {
    const std::string a = i < actual.size() ? actual[i] : "(none)";
    const std::string e = i < expected.size() ? expected[i] : "(none)";
    if (a != e) {
      std::printf("differs on %s:\n  baseline %s\n  now      %s\n", target.c_str(), e.c_str(),
                  a.c_str());
      ++differences;
    }
  }
  return differences;
}

// Compares the digests with a baseline file (tests/data/output_digests.txt): the output bytes
// change only in a commit that re-baselines the file and says why.
int check_digests(const char* baseline_path) {
  std::FILE* f = std::fopen(baseline_path, "r");
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", baseline_path);
    return 2;
  }
  std::vector<std::string> expected;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, f)) {
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty() && line[0] != '#') expected.push_back(line);
  }
  std::fclose(f);
  // Every instruction set the build dispatches to must give the baseline's bytes.
  const auto targets = g_every_simd_target ? core::simd::available_targets()
                                           : std::vector<std::string>{core::simd::current_target()};
  int differences = 0;
  for (const auto& target : targets) {
    core::simd::use_target(target);
    differences += compare_digests(expected, target);
  }
  std::printf("%d output digests differ from %s (instruction sets: %zu)\n", differences,
              baseline_path, targets.size());
  return differences == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // --digest: the output's fingerprint instead of timings; --digest-check FILE: compared with a
  // baseline. --threads N: TBB threads.
  // --stage-iterations N: iterations of each one-stage benchmark (default 10).
  // --simd-target NAME: the vector kernel's instruction set ("every": the digest check on each).
  // --returns-csv FILE: every echo of a few frames in rain, for scripts/compare_returns.py.
  // --list-simd-targets: the instruction sets this build runs on this CPU, best first.
  int threads = 0;
  bool digest = false;
  const char* digest_baseline = nullptr;
  const char* returns_csv = nullptr;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--digest") {
      digest = true;
    } else if (arg == "--digest-check" && i + 1 < argc) {
      digest_baseline = argv[++i];
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--list-simd-targets") {
      for (const auto& t : core::simd::available_targets()) std::printf("%s\n", t.c_str());
      return 0;
    } else if (arg == "--returns-csv" && i + 1 < argc) {
      returns_csv = argv[++i];
    } else if (arg == "--simd-target" && i + 1 < argc) {
      const std::string target = argv[++i];
      g_every_simd_target = target == "every";
      if (!g_every_simd_target) core::simd::use_target(target);
    } else if (arg == "--stage-iterations" && i + 1 < argc) {
      g_stage_iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      argv[kept++] = argv[i];  // Google Benchmark's own flags
    }
  }
  argc = kept;
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);
  if (digest_baseline) return check_digests(digest_baseline);
  if (digest) return print_digests();
  if (returns_csv) return write_returns_csv(returns_csv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
