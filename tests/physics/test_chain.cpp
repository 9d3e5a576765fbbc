// PHYSICS.md 10 and the chain as a whole: the registry, names, weather through the frame.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("The chain names its stages; weather reaches the stages through the frame",
          "[physics][pipeline]") {
  Bench bench("vlp16");
  const MaterialTable materials = test_materials();
  auto s = bench.settings();
  Pipeline pipeline(bench.pattern(), materials, s);
  const auto names = pipeline.stage_names();
  const std::vector<std::string_view> expected{
      "geometry",        "paths.multibounce", "surface.brdf", "atmosphere.clear_air",
      "atmosphere.rain", "atmosphere.fog",    "blooming",     "detection.threshold",
      "echoes",          "range.noise",       "report"};
  CHECK(names == expected);
  use_stage(s.stages, "surface.ipsp");
  use_stage(s.stages, "detection.capability");
  use_stage(s.stages, "geometry.raster_correction");
  s.return_mode = ReturnMode::kDual;
  const auto other = Pipeline(bench.pattern(), materials, s).stage_names();
  CHECK(std::find(other.begin(), other.end(), "surface.ipsp") != other.end());
  CHECK(std::find(other.begin(), other.end(), "detection.capability") != other.end());
  CHECK(std::find(other.begin(), other.end(), "geometry.raster_correction") != other.end());
  CHECK(std::find(other.begin(), other.end(), "surface.brdf") == other.end());
  CHECK(std::find(other.begin(), other.end(), "detection.threshold") == other.end());

  bench.target_facing_every_beam(60, kTenPercent);
  const auto clear = bench.run(bench.settings());
  bench.hits().weather.rain_mm_per_h = 50;
  const auto rainy = bench.run(bench.settings());
  CHECK(detected_share(rainy) < detected_share(clear));
  bench.hits().weather = Weather{.visibility_m = 100};  // thick fog
  CHECK(detected_share(bench.run(bench.settings())) < 0.01);
}
