#include "bench_outputs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "bench_scenes.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/simd.hpp"

namespace lidaremu::bench {
namespace {

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
      {"os1-128-2048x10 rain 10 mm/h", {"os1-128", "2048x10"}, core::ReturnMode::kStrongest, {}},
      {"os1-128-2048x10 5 rays", {"os1-128", "2048x10", 5}, core::ReturnMode::kStrongest, {}},
      {"os1-128-1024x10 rng19-dual",
       {"os1-128", "1024x10"},
       core::ReturnMode::kTwoStrongest,
       core::OusterProfile::kRng19Dual},
      {"os1-32-512x10 all retroreflector",
       {"os1-32", "512x10", 1, 10.0, true},
       core::ReturnMode::kStrongest,
       {}},
      {"vls128 dual", {"vls128", ""}, core::ReturnMode::kDual, {}},
      {"hdl64e strongest", {"hdl64e", ""}, core::ReturnMode::kStrongest, {}},
      {"vlp16 fog 300 m, sun 1000 W/m2, rain 25 mm/h",
       {"vlp16", "", 1, 25.0, false, 300.0, 1000.0},
       core::ReturnMode::kDual,
       {}},
      {"vlp32c 5 rays ipsp surface, capability detection, raster correction",
       {"vlp32c", "", 5, 0.0},
       core::ReturnMode::kLast,
       {},
       [](core::PipelineSettings& s) {
         core::use_stage(s.stages, "surface.ipsp");
         core::use_stage(s.stages, "detection.capability");
         core::use_stage(s.stages, "geometry.raster_correction");
       }},
      {"pandar-xt32 dual rain 10 mm/h", {"pandar-xt32", ""}, core::ReturnMode::kDual, {}},
      {"pandar-qt128 first", {"pandar-qt128", ""}, core::ReturnMode::kFirst, {}},
      {"pandar-40p last", {"pandar-40p", ""}, core::ReturnMode::kLast, {}},
      {"pandar-ot128 dual", {"pandar-ot128", ""}, core::ReturnMode::kDual, {}},
      {"pandar-at128 strongest", {"pandar-at128", ""}, core::ReturnMode::kStrongest, {}},
      {"rs16 strongest", {"rs16", ""}, core::ReturnMode::kStrongest, {}},
      {"rs32 dual", {"rs32", ""}, core::ReturnMode::kDual, {}},
      // A table scan: each frame's beams elsewhere (the built-in test pattern).
      {"livox-mid360 test pattern rain 10 mm/h",
       {"livox-mid360", ""},
       core::ReturnMode::kFirst,
       {}},
      {"os0-64-1024x10 ideal",
       {"os0-64", "1024x10"},
       core::ReturnMode::kStrongest,
       {},
       [](core::PipelineSettings& s) { s.stages = core::stage_chain(core::PhysicsMode::kIdeal); }},
  };
  std::vector<std::string> lines;
  for (const auto& c : cases) {
    const Scene& s = scene(c.key);
    core::OusterOutput ouster;
    ouster.profile = c.profile;
    auto settings = default_chain(s.pattern, c.return_mode);
    if (c.adjust) c.adjust(settings);
    core::Pipeline pipeline(s.pattern, materials(), settings);
    auto enc = core::make_encoder(s.pattern, {992200000001ull, 0x123456}, c.return_mode, ouster);
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

}  // namespace

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
                            default_chain(s.pattern, core::ReturnMode::kDual));
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

// Compares the digests with a baseline file (tests/data/output_digests.txt): the output bytes
// change only in a commit that re-baselines the file and says why.
int check_digests(const char* baseline_path, bool every_simd_target) {
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
  const auto targets = every_simd_target ? core::simd::available_targets()
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

}  // namespace lidaremu::bench
