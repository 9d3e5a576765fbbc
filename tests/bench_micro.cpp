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
#include <optional>
#include <string>
#include <vector>

#include "bench_outputs.hpp"
#include "bench_scenes.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/cloud.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/core/streaming_step.hpp"
#include "lidaremu/daemon/view/live_view.hpp"
#include "lidaremu/protocol/raw_rows.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

namespace {
using namespace lidaremu;
using bench::default_chain;
using bench::materials;
using bench::OutputCase;
using bench::Scene;
using bench::scene;
using bench::SceneKey;

// Wall nanoseconds per item, as a plain number (Google Benchmark's inverted rates print seconds).
double ns_per(double seconds, benchmark::IterationCount iterations, std::size_t items) {
  return seconds * 1e9 / (static_cast<double>(iterations) * static_cast<double>(items));
}

std::size_t rays_of(const Scene& s) { return s.hits.shape.beams() * s.hits.layout.rays_per_beam; }

// One stage of the default chain: the stages before it run untimed on each iteration, so the
// iteration count is fixed (Google Benchmark would size it by the timed part alone).
benchmark::IterationCount g_stage_iterations = 10;  // NOLINT: set once from the command line

// One stage of the default chain: the stages before it run untimed on each iteration.
void stage(benchmark::State& state, const SceneKey& key, std::size_t index) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(),
                          default_chain(s.pattern, core::ReturnMode::kStrongest));
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

void whole_chain(benchmark::State& state, const SceneKey& key, core::ReturnMode echoes) {
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

// The chain as the daemon runs a frame that streams in: Pipeline::advance a step of
// core::streaming_step_columns at a time, every column already there. Against
// whole_chain: what streaming costs (short runs, a frame stage's reach read per run).
void streamed_chain(benchmark::State& state, const SceneKey& key, core::ReturnMode echoes) {
  const Scene& s = scene(key);
  core::Pipeline pipeline(s.pattern, materials(), default_chain(s.pattern, echoes));
  core::FrameReturns out;
  const std::uint32_t columns = s.hits.shape.columns;
  const std::uint32_t step = core::streaming_step_columns(s.hits.shape);
  const auto run = [&] {
    pipeline.begin_frame(s.hits, out);
    for (std::uint32_t ready = step; ready < columns; ready += step) {
      (void)pipeline.advance(s.hits, ready, out);
    }
    (void)pipeline.advance(s.hits, columns, out);
  };
  run();  // first touch of the scratch memory is not the steady state
  const auto begin = std::chrono::steady_clock::now();
  // NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): Google Benchmark's idiom
  for (auto _ : state) run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  state.counters["ns_per_ray"] = ns_per(seconds, state.iterations(), rays_of(s));
}

// The input thread's work for one frame where every beam returns (the bench's all-returning
// scene): HitBatch datagrams (their columns named) or headerless raw7 rows (each beam found from
// its direction) stored into the frame the physics reads. Raw rows are located `at_once`
// datagrams together, as the daemon locates a receive's (32 datagrams a receive at most).
void input(benchmark::State& state, const std::string& model, const std::string& mode, bool raw,
           std::size_t at_once) {
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
  protocol::RawRowAssembler assembler(geometry, 7, {1, 1}, at_once);
  std::vector<std::span<const std::uint8_t>> group;
  const auto begin = std::chrono::steady_clock::now();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    frame.clear(1);
    core::FrameHits* current = &frame;
    for (std::size_t i = 0; raw && i < datagrams.size(); i += at_once) {
      group.assign(
          datagrams.begin() + static_cast<std::ptrdiff_t>(i),
          datagrams.begin() + static_cast<std::ptrdiff_t>(std::min(datagrams.size(), i + at_once)));
      assembler.convert_and_locate(group, engine, materials());
      for (std::size_t slot = 0; slot < group.size(); ++slot) {
        assembler.store_located(slot, current, [] {});
      }
    }
    for (std::size_t i = 0; !raw && i < datagrams.size(); ++i) {
      protocol::BatchView view;
      protocol::decode_hit_batch(datagrams[i], view);
      protocol::store_batch(view, engine, materials(), frame);
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

void encoder(benchmark::State& state, const SceneKey& key, core::ReturnMode echoes,
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
                          default_chain(s.pattern, core::ReturnMode::kStrongest));
  core::FrameReturns returns;
  pipeline.process(s.hits, returns);
  const core::SensorIdentity identity{992200000001ull, 0x123456};
  auto enc = core::make_encoder(s.pattern, identity, core::ReturnMode::kStrongest);
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
                         default_chain(s.pattern, core::ReturnMode::kStrongest));
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
        [key = *key](benchmark::State& st) { whole_chain(st, key, core::ReturnMode::kStrongest); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const char* sampler :
       {"uniform", "normal", "poisson", "normal-scalar-double", "poisson-scalar-double"}) {
    benchmark::RegisterBenchmark((std::string("draws/") + sampler).c_str(),
                                 [sampler](benchmark::State& st) { draws(st, sampler); });
  }
  const struct {
    const char* name;
    bool raw;
    std::size_t at_once;
  } inputs[] = {{"framed", false, 1}, {"raw7", true, 1}, {"raw7-receive", true, 32}};
  for (const auto& in : inputs) {
    benchmark::RegisterBenchmark(
        (std::string("input/") + in.name + "/os1-128-2048x10/all-returning").c_str(),
        [in](benchmark::State& st) { input(st, "os1-128", "2048x10", in.raw, in.at_once); })
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
        [key](benchmark::State& st) { whole_chain(st, key, core::ReturnMode::kStrongest); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    const Scene& s = scene(key);
    core::Pipeline chain(s.pattern, materials(),
                         default_chain(s.pattern, core::ReturnMode::kStrongest));
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
  // A dense head: 128 channels a tenth of a degree apart in elevation, so a source reaches three
  // times the channels an OS1-128's does (blooming was a fifth of its chain).
  {
    const SceneKey vls128{"vls128", ""};
    const Scene& s = scene(vls128);
    core::Pipeline chain(s.pattern, materials(),
                         default_chain(s.pattern, core::ReturnMode::kStrongest));
    const auto names = chain.stage_names();
    const auto at = std::find(names.begin(), names.end(), "blooming");
    const auto i = static_cast<std::size_t>(at - names.begin());
    if (at != names.end())
      benchmark::RegisterBenchmark("stage/blooming/vls128",
                                   [vls128, i](benchmark::State& st) { stage(st, vls128, i); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(g_stage_iterations);
  }
  // A small sensor, as a vehicle carries many: its frame's fixed costs weigh more per ray.
  benchmark::RegisterBenchmark("chain/vlp16",
                               [](benchmark::State& st) {
                                 whole_chain(st, {"vlp16", ""}, core::ReturnMode::kStrongest);
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("chain/vls128-dual",
                               [](benchmark::State& st) {
                                 whole_chain(st, {"vls128", ""}, core::ReturnMode::kDual);
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark(
      "chain-streamed/os1-128-2048x10/rays1",
      [os1](benchmark::State& st) { streamed_chain(st, os1, core::ReturnMode::kStrongest); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("chain-streamed/vls128-dual",
                               [](benchmark::State& st) {
                                 streamed_chain(st, {"vls128", ""}, core::ReturnMode::kDual);
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  // Encoders, one per packet layout.
  const OutputCase cases[] = {
      {"vlp16-strongest", {"vlp16", ""}, core::ReturnMode::kStrongest, {}},
      {"vlp16-dual", {"vlp16", ""}, core::ReturnMode::kDual, {}},
      {"vlp32c-strongest", {"vlp32c", ""}, core::ReturnMode::kStrongest, {}},
      {"hdl32e-strongest", {"hdl32e", ""}, core::ReturnMode::kStrongest, {}},
      {"hdl64e-strongest", {"hdl64e", ""}, core::ReturnMode::kStrongest, {}},
      {"vls128-strongest", {"vls128", ""}, core::ReturnMode::kStrongest, {}},
      {"vls128-dual", {"vls128", ""}, core::ReturnMode::kDual, {}},
      {"pandar-ot128-dual", {"pandar-ot128", ""}, core::ReturnMode::kDual, {}},
      {"pandar-at128-strongest", {"pandar-at128", ""}, core::ReturnMode::kStrongest, {}},
      {"rs16-strongest", {"rs16", ""}, core::ReturnMode::kStrongest, {}},
      {"rs32-dual", {"rs32", ""}, core::ReturnMode::kDual, {}},
      {"os1-128-2048x10-legacy", os1, core::ReturnMode::kStrongest, core::OusterProfile::kLegacy},
      {"os1-128-2048x10-rng19", os1, core::ReturnMode::kStrongest, core::OusterProfile::kRng19},
      {"os1-128-2048x10-rng19-dual", os1, core::ReturnMode::kTwoStrongest,
       core::OusterProfile::kRng19Dual},
      {"os1-128-2048x10-rng15", os1, core::ReturnMode::kStrongest, core::OusterProfile::kRng15},
      // On a test pattern (bench_scenes.cpp): the Mid-360 has none of its own here.
      {"livox-mid360-test-pattern", {"livox-mid360", ""}, core::ReturnMode::kFirst, {}},
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
        [c](benchmark::State& st) { encoder(st, c.key, c.return_mode, c.profile); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
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
  bool every_simd_target = false;
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
      every_simd_target = target == "every";
      if (!every_simd_target) core::simd::use_target(target);
    } else if (arg == "--stage-iterations" && i + 1 < argc) {
      g_stage_iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      argv[kept++] = argv[i];  // Google Benchmark's own flags
    }
  }
  argc = kept;
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);
  if (digest_baseline) return bench::check_digests(digest_baseline, every_simd_target);
  if (digest) return bench::print_digests();
  if (returns_csv) return bench::write_returns_csv(returns_csv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
