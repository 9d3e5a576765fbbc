// Each stage of the physics chain against the numbers of PHYSICS.md and the seeds: closed forms
// first, then the stage running in a real Pipeline on synthetic frames built for the oracle.
#include <Eigen/Geometry>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "daemon_process.hpp"
#include "lidaremu/core/pipeline.hpp"

using namespace lidaremu;
using namespace lidaremu::core;

namespace {

constexpr std::uint16_t kConcrete = 8;    // Gamma 0.30
constexpr std::uint16_t kLucidMetal = 3;  // beta 0.98, mirror-like
constexpr std::uint16_t kRetro = 1;
constexpr std::uint16_t kTenPercent = 103;  // "test": Gamma 0.10
constexpr std::uint16_t kEightyPercent = 200;
constexpr std::uint16_t kFortyPercent = 201;
constexpr std::uint16_t kThirtyPercent = 202;
constexpr std::uint16_t kFivePointTwoPercent = 203;  // 30 % x cos(80 deg)

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The project's material table plus two Lambertian calibration targets.
MaterialTable test_materials() {
  return MaterialTable::from_toml_text(file_text(test::materials_path()) + R"(
[[material]]
id = 200
name = "80 % Lambertian"
alpha = 0.8
reflectivity = 0.8
[[material]]
id = 201
name = "40 % Lambertian"
alpha = 0.4
reflectivity = 0.4
[[material]]
id = 202
name = "30 % Lambertian"
alpha = 0.3
reflectivity = 0.3
[[material]]
id = 203
name = "5.2 % Lambertian"
alpha = 0.0521
reflectivity = 0.0521
)",
                                       "test materials");
}

// A frame of synthetic hits for one sensor, and the pipeline to run it through.
class Bench {
 public:
  explicit Bench(const char* model, HitLayout layout = {})
      : pattern_(pattern_for(model)), geometry_(pattern_), materials_(test_materials()) {
    hits_.reshape({static_cast<std::uint32_t>(pattern_.columns_per_frame),
                   static_cast<std::uint16_t>(pattern_.model->channels)},
                  layout);
    hits_.clear(7);
    hits_.columns_received = hits_.shape.columns;
  }

  [[nodiscard]] PipelineSettings settings(PhysicsMode mode = PhysicsMode::kDefault) const {
    PipelineSettings s;
    s.stages = stage_chain(mode);
    s.params = default_physics_params(*pattern_.model);
    s.seed = 42;
    return s;
  }

  void set(std::size_t beam, int ray, int segment, const Eigen::Vector3d& p,
           const Eigen::Vector3d& n, std::uint16_t material, float angle_deg = 0,
           std::uint32_t object = 0) {
    const std::size_t i = hits_.hit(beam, ray, segment);
    hits_.x[i] = static_cast<float>(p.x());
    hits_.y[i] = static_cast<float>(p.y());
    hits_.z[i] = static_cast<float>(p.z());
    hits_.nx[i] = static_cast<float>(n.x());
    hits_.ny[i] = static_cast<float>(n.y());
    hits_.nz[i] = static_cast<float>(n.z());
    hits_.material[i] = material;
    hits_.angle_deg[i] = angle_deg;
    hits_.object_id[i] = object;
  }

  [[nodiscard]] Eigen::Vector3d direction(std::size_t beam) const {
    return geometry_
        .ray(static_cast<std::uint32_t>(beam / hits_.shape.channels),
             static_cast<std::uint16_t>(beam % hits_.shape.channels))
        .direction;
  }

  // Every beam (centre ray) meets a target facing it at `distance`.
  void target_facing_every_beam(double distance, std::uint16_t material) {
    for (std::size_t b = 0; b < beams(); ++b) {
      const Eigen::Vector3d d = direction(b);
      set(b, 0, 0, d * distance, -d, material);
    }
  }

  FrameReturns run(const PipelineSettings& s) {
    Pipeline pipeline(pattern_, materials_, s);
    FrameReturns out;
    pipeline.process(hits_, out);
    return out;
  }

  [[nodiscard]] std::size_t beams() const { return hits_.shape.beams(); }
  FrameHits& hits() { return hits_; }
  [[nodiscard]] const ScanPattern& pattern() const { return pattern_; }

 private:
  static ScanPattern pattern_for(const char* name) {
    const SensorModel& m = *find_sensor_model(name);
    return m.family == SensorFamily::kVelodyne ? *make_velodyne_scan(m, 600).pattern
                                               : *make_ouster_scan(m, 1024, 10).pattern;
  }

  ScanPattern pattern_;
  BeamGeometry geometry_;
  MaterialTable materials_;
  FrameHits hits_;
};

double detected_share(const FrameReturns& out) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) n += out.range_m[b] > 0;
  return double(n) / double(out.shape.beams());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Section 2b: range equation, BRDF, crossover, datasheet calibration.

TEST_CASE("2b: Lambertian, specular and retroreflective BRDFs", "[physics][brdf]") {
  // Gamma(theta) = Gamma(0) cos(theta), beta_0 = Gamma / pi (seeds 002, 003).
  CHECK(physics::lambertian_brdf(0.5, 0.5) == Approx(0.25 / std::numbers::pi));
  CHECK(physics::lambertian_brdf(0.5, -0.2) == 0.0);
  // Retroreflector peak about three orders of magnitude above the diffuse maximum 1/pi.
  const Material retro{1, "retro", 0, 0, 1, 1, 0.0, 500, 0.5, 40};
  const double peak = physics::material_brdf(retro, 1.0, 0.0);
  CHECK(peak == Approx(500));
  CHECK(std::log10(peak / (1 / std::numbers::pi)) == Approx(3.2).margin(0.1));
  // It falls steeply with the observation angle and gently with the entrance angle.
  CHECK(physics::material_brdf(retro, 1.0, physics::deg_to_rad(1.0)) < peak / 40);
  CHECK(physics::material_brdf(retro, std::cos(physics::deg_to_rad(20)), 0.0) > peak * 0.7);
  // A specular lobe is seen at 2 theta from the mirror direction: head-on it flashes, at 10
  // degrees (30 off the mirror, six lobe widths) a 5-degree lobe is gone.
  const Material metal{2, "metal", 0.0, 0.85, 0, 5.0, 0.0};
  CHECK(physics::material_brdf(metal, 1.0, 0) ==
        Approx(0.85 / (2 * std::numbers::pi * std::pow(physics::deg_to_rad(5), 2))));
  CHECK(physics::material_brdf(metal, std::cos(physics::deg_to_rad(15)), 0) < 1e-6);
}

TEST_CASE("2b: crossover function of bistatic optics (seed 003)", "[physics][brdf]") {
  physics::BistaticOptics coaxial;
  CHECK(physics::crossover(coaxial, 0.1) == 1.0);  // seed 003: constant for coaxial optics
  // With a full-overlap range, the geometric form factor (R / R_full)^2 below it.
  coaxial.full_overlap_m = 20;
  CHECK(physics::crossover(coaxial, 5) == Approx(0.0625));
  CHECK(physics::crossover(coaxial, 20) == 1.0);
  CHECK(physics::crossover(coaxial, 200) == 1.0);
  physics::BistaticOptics o{.baseline_m = 0.05,
                            .tx_aperture_radius_m = 0.005,
                            .rx_aperture_radius_m = 0.01,
                            .tx_opening_rad = 0.003,
                            .rx_opening_rad = 0.02};
  const double r1 = physics::crossover_start_m(o);
  const double r2 = physics::crossover_full_m(o);
  // R_1 = (d - rho_T - rho_R) / (tan(g_T/2) + tan(g_R/2)), R_2 likewise, by hand:
  CHECK(r1 == Approx(0.035 / (std::tan(0.0015) + std::tan(0.01))));
  CHECK(r2 == Approx(0.045 / (std::tan(0.01) - std::tan(0.0015))));
  CHECK(physics::crossover(o, r1 * 0.99) == 0.0);
  CHECK(physics::crossover(o, r2 * 1.01) == 1.0);
  // Continuous at both ends and rising in between.
  CHECK(physics::crossover(o, r1 * 1.0001) < 1e-3);
  CHECK(physics::crossover(o, r2 * 0.9999) > 0.999);
  double previous = 0;
  for (int i = 1; i < 100; ++i) {
    const double x = physics::crossover(o, r1 + (r2 - r1) * i / 100.0);
    CHECK(x >= previous);
    previous = x;
  }
}

TEST_CASE("2b: datasheet calibration reproduces the datasheet range by construction",
          "[physics][brdf][datasheet]") {
  const PhysicsParams p;
  const double k = physics::system_constant_from_datasheet(p.threshold_w(), 100, 0.10, 1, 1);
  CHECK(physics::received_power(k, physics::lambertian_brdf(0.10, 1), 100, 1, 1) ==
        Approx(p.threshold_w()));
  // A 40 % target reaches twice as far (before extinction).
  CHECK(physics::lambertian_reach_m(k, 0.40, p.threshold_w()) == Approx(200));

  SECTION("VLP-16: a 10 % target at the datasheet's 100 m is detected half the time") {
    Bench bench("vlp16");
    bench.target_facing_every_beam(100.0, kTenPercent);
    const double share = detected_share(bench.run(bench.settings()));
    const double standard_error = std::sqrt(0.25 / double(bench.beams()));
    INFO("share " << share);
    CHECK(std::fabs(share - 0.5) < 4 * standard_error);
  }
  SECTION("OS1-64: 80 % at 120 m is at the threshold; a 40 % target reaches twice a 10 % one") {
    Bench bench("os1-64");
    bench.target_facing_every_beam(120.0, kEightyPercent);
    const double standard_error = std::sqrt(0.25 / double(bench.beams()));
    const double at_datasheet = detected_share(bench.run(bench.settings()));
    INFO("80 % at 120 m: " << at_datasheet);
    CHECK(std::fabs(at_datasheet - 0.5) < 4 * standard_error);
    // Without extinction the reach follows sqrt(Gamma): 10 % reaches 120 sqrt(1/8) = 42.4 m
    // divided by the clear-air transmission folded into the calibration (a 1 % effect).
    auto no_air = bench.settings();
    drop_stage(no_air.stages, "atmosphere.clear_air");
    const MaterialTable materials = test_materials();
    const Pipeline pipeline(bench.pattern(), materials, no_air);
    const double reach_10 =
        physics::lambertian_reach_m(pipeline.system_constant(), 0.10, no_air.params.threshold_w());
    const double reach_40 =
        physics::lambertian_reach_m(pipeline.system_constant(), 0.40, no_air.params.threshold_w());
    CHECK(reach_10 == Approx(42.43).epsilon(0.015));
    CHECK(reach_40 == Approx(2 * reach_10));
    bench.target_facing_every_beam(reach_10, kTenPercent);
    CHECK(std::fabs(detected_share(bench.run(no_air)) - 0.5) < 4 * standard_error);
    bench.target_facing_every_beam(reach_40, kFortyPercent);
    CHECK(std::fabs(detected_share(bench.run(no_air)) - 0.5) < 4 * standard_error);
    // Closer than the reach, nearly always (Phi(3.1)); far beyond it, nearly never (Phi(-2.7)).
    bench.target_facing_every_beam(0.7 * reach_10, kTenPercent);
    CHECK(detected_share(bench.run(no_air)) > 0.99);
    bench.target_facing_every_beam(3 * reach_10, kTenPercent);
    CHECK(detected_share(bench.run(no_air)) < 0.01);
  }
}

TEST_CASE("Calibrated reflectivity: a diffuse target's percent, above 100 for retroreflectors",
          "[physics][report]") {
  Bench bench("vlp16");
  for (const double range : {5.0, 20.0, 60.0}) {
    INFO("range " << range);
    bench.target_facing_every_beam(range, kThirtyPercent);
    const auto out = bench.run(bench.settings());
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t b = 0; b < bench.beams(); ++b) {
      if (out.range_m[b] > 0) sum += out.reflectivity[b], ++n;
    }
    REQUIRE(n > bench.beams() * 0.99);
    CHECK(sum / double(n) == Approx(30).margin(0.6));
  }
  // Tilted 60 degrees, Gamma(theta) = 0.30 cos(60) = 15 %.
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    const Eigen::Vector3d d = bench.direction(b);
    const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
    const double t = std::numbers::pi / 3;
    bench.set(b, 0, 0, d * 10, -d * std::cos(t) + side * std::sin(t), kThirtyPercent);
  }
  const auto tilted = bench.run(bench.settings());
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    if (tilted.range_m[b] > 0) sum += tilted.reflectivity[b], ++n;
  }
  CHECK(sum / double(n) == Approx(15).margin(0.6));
  bench.target_facing_every_beam(30, kRetro);
  const auto retro = bench.run(bench.settings());
  CHECK(retro.reflectivity[100] > 200);
}

// ---------------------------------------------------------------------------------------------
// Section 3: detection models.

TEST_CASE("3: capability model of seed 002 (OS0-128: d_max 50 m at R_L,max 0.8)",
          "[physics][detection]") {
  CHECK(physics::capability_detects(0.8, 49.9, 50, 0.8));
  CHECK_FALSE(physics::capability_detects(0.8, 50.1, 50, 0.8));
  // A 10 % target: R_L(d) <= 0.1 up to d = 6.25 m.
  CHECK(physics::capability_detects(0.1, 6.2, 50, 0.8));
  CHECK_FALSE(physics::capability_detects(0.1, 6.3, 50, 0.8));
  Bench bench("os1-64");
  auto s = bench.settings();
  use_stage(s.stages, "detection.capability");
  bench.target_facing_every_beam(48.0, kEightyPercent);
  CHECK(detected_share(bench.run(s)) == 1.0);
  bench.target_facing_every_beam(51.0, kEightyPercent);
  CHECK(detected_share(bench.run(s)) == 0.0);
  bench.target_facing_every_beam(6.0, kTenPercent);
  CHECK(detected_share(bench.run(s)) == 1.0);
  bench.target_facing_every_beam(6.6, kTenPercent);
  CHECK(detected_share(bench.run(s)) == 0.0);
}

TEST_CASE("3: ambient sunlight raises the noise floor", "[physics][detection]") {
  const double ambient = physics::ambient_power_w(1000, 1.0, 0.1, 1e-6);
  CHECK(ambient == Approx(1000 * 0.1 / std::numbers::pi * 1e-6));
  CHECK(physics::ambient_power_w(1000, -0.5, 0.1, 1e-6) == 0.0);  // the sun behind the surface
  // Shot noise: 2 h nu P B / QE.
  const double h_nu = 6.62607015e-34 * physics::kSpeedOfLight / 905e-9;
  CHECK(physics::ambient_noise_variance_w2(ambient, 905, 1e9, 0.8) ==
        Approx(2 * h_nu * ambient * 1e9 / 0.8));
  Bench bench("vlp16");
  bench.target_facing_every_beam(100.0, kTenPercent);
  auto s = bench.settings();
  s.params.sun_elevation_deg = 0;  // the sun behind the sensor, lighting the target head-on
  s.params.receiver_etendue_m2_sr = 1e-6;
  const double dark = detected_share(bench.run(s));
  bench.hits().weather.sun_irradiance_w_per_m2 = 1000;
  const double sunny = detected_share(bench.run(s));
  INFO("dark " << dark << ", sunny " << sunny);
  CHECK(sunny < dark - 0.03);  // 20 standard errors
}

// ---------------------------------------------------------------------------------------------
// Section 4b: rain.

TEST_CASE("4b: seed 004's extinction table to 3 significant digits, power law outside",
          "[physics][rain]") {
  CHECK(physics::rain_extinction_per_m(5.0) == Approx(0.00132).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(12.5) == Approx(0.00244).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(25.0) == Approx(0.00387).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(100.0) == Approx(0.00991).epsilon(5e-4));
  CHECK(physics::rain_extinction_per_m(0.0) == 0.0);
  // The fitted exponent is close to the classic 0.67.
  CHECK(physics::rain_extinction_exponent() == Approx(0.67).margin(0.04));
  // Continuous at the table's ends, rising everywhere.
  CHECK(physics::rain_extinction_per_m(100.0001) == Approx(0.00991).epsilon(1e-4));
  CHECK(physics::rain_extinction_per_m(4.9999) == Approx(0.00132).epsilon(1e-4));
  double previous = 0;
  for (int step = 0; step < 25; ++step) {
    const double r = 0.5 * std::pow(1.3, step);  // 0.5 to 270 mm/h
    CHECK(physics::rain_extinction_per_m(r) > previous);
    previous = physics::rain_extinction_per_m(r);
  }
}

TEST_CASE("4b: Marshall-Palmer drops, beam volume and the Poisson count", "[physics][rain]") {
  // Lambda = 4.1 R^-0.21 per mm (the seed's 41 is per cm); N_total = N_0 / Lambda.
  CHECK(physics::marshall_palmer_slope_per_mm(10) == Approx(4.1 * std::pow(10, -0.21)));
  CHECK(physics::rain_drop_density_per_m3(10) == Approx(3164).margin(1));
  CHECK(physics::rain_drop_density_per_m3(0) == 0.0);
  // V_beam = pi r^2 distance without divergence (seed 004, eq. 3.5); a cone with it.
  CHECK(physics::beam_volume_m3(0.01, 0, 0, 50) == Approx(std::numbers::pi * 1e-4 * 50));
  const double w1 = 0.01 + 50 * std::tan(0.002);
  CHECK(physics::beam_volume_m3(0.01, 0.002, 0, 50) ==
        Approx(std::numbers::pi / 3 * 50 * (1e-4 + 0.01 * w1 + w1 * w1)));
  // The sampled counts have mean mu within its standard error, for small and large mu.
  for (const double mu : {0.3, 4.5, 29.0, 31.0, 250.0}) {
    INFO("mu " << mu);
    constexpr int kBeams = 40000;
    double sum = 0, sum2 = 0;
    for (int b = 0; b < kBeams; ++b) {
      std::uint32_t draw = 0;
      const double n = CounterRng({5, 1, 2, static_cast<std::uint32_t>(b), 3}).poisson(mu, draw);
      sum += n;
      sum2 += n * n;
    }
    const double mean = sum / kBeams;
    const double variance = sum2 / kBeams - mean * mean;
    CHECK(std::fabs(mean - mu) < 4 * std::sqrt(mu / kBeams));
    CHECK(variance == Approx(mu).epsilon(0.05));
  }
}

TEST_CASE("4b: rain drops returns with rate and range, adds false positives, nothing at 0",
          "[physics][rain]") {
  Bench bench("vlp16");
  auto s = bench.settings();
  const auto share_at = [&](double range, double rain) {
    bench.target_facing_every_beam(range, kTenPercent);
    bench.hits().weather.rain_mm_per_h = rain;
    return detected_share(bench.run(s));
  };
  // At 0 mm/h the rain stage changes nothing, byte for byte.
  bench.target_facing_every_beam(60, kTenPercent);
  bench.hits().weather.rain_mm_per_h = 0;
  const auto with_stage = bench.run(s);
  auto without = s;
  drop_stage(without.stages, "atmosphere.rain");
  const auto without_stage = bench.run(without);
  CHECK(with_stage.range_m == without_stage.range_m);
  CHECK(with_stage.reflectivity == without_stage.reflectivity);
  // Dropped returns grow with the rain rate...
  const double r0 = share_at(60, 0), r10 = share_at(60, 10), r50 = share_at(60, 50),
               r100 = share_at(60, 100);
  INFO("60 m: " << r0 << " " << r10 << " " << r50 << " " << r100);
  CHECK(r0 > r10);
  CHECK(r10 > r50);
  CHECK(r50 > r100);
  // ...and with range.
  CHECK(share_at(40, 50) > share_at(60, 50));
  CHECK(share_at(60, 50) > share_at(80, 50));
  // False positives: the first echo comes from a drop more often as the rain grows.
  s.echoes = EchoMode::kFirst;
  const auto drops_at = [&](double rain) {
    bench.target_facing_every_beam(60, kTenPercent);
    bench.hits().weather.rain_mm_per_h = rain;
    const auto out = bench.run(s);
    std::size_t n = 0;
    for (std::size_t b = 0; b < bench.beams(); ++b) {
      n += out.kind[b] == static_cast<std::uint8_t>(ReturnKind::kRainDrop);
    }
    return double(n) / double(bench.beams());
  };
  const double fp0 = drops_at(0), fp10 = drops_at(10), fp100 = drops_at(100);
  INFO("false positives: " << fp0 << " " << fp10 << " " << fp100);
  CHECK(fp0 == 0.0);
  CHECK(fp10 > 0.0);
  CHECK(fp100 > fp10);
  CHECK(fp10 < 0.2);  // a light rain does not blind the sensor
}

// ---------------------------------------------------------------------------------------------
// Section 5: beam divergence.

TEST_CASE("5: several rays per beam merge, and mixed pixels give two echoes",
          "[physics][divergence]") {
  SECTION("a beam wholly on one wall returns what a single ray does") {
    Bench one("vlp16");
    Bench five("vlp16", {5, 1});
    one.target_facing_every_beam(20, kConcrete);
    for (std::size_t b = 0; b < five.beams(); ++b) {
      const Eigen::Vector3d d = five.direction(b);
      for (int r = 0; r < 5; ++r) five.set(b, r, 0, d * 20, -d, kConcrete);
    }
    const auto a = one.run(one.settings(PhysicsMode::kIdeal));
    const auto b = five.run(five.settings(PhysicsMode::kIdeal));
    CHECK(b.power_w[10] == Approx(a.power_w[10]).epsilon(1e-6));
    CHECK(b.range_m[10] == a.range_m[10]);
  }
  SECTION(
      "Ouster: a beam whose centre ray missed reports the ring ray's hit in the format's "
      "range convention") {
    Bench bench("os1-64", {3, 1});
    const std::size_t beam = 300 * 64 + 20;
    const Eigen::Vector3d d = bench.direction(beam);
    bench.set(beam, 1, 0, d * 12.0, -d, kConcrete);  // ray 0 (centre) hit nothing
    const auto out = bench.run(bench.settings(PhysicsMode::kIdeal));
    const double expected = BeamGeometry(bench.pattern()).reported_range(d * 12.0, 300, 20);
    CHECK(out.range_m[beam] == Approx(expected).margin(0.0006));
    CHECK(std::fabs(expected - 12.0) > 0.002);  // the convention differs from |p| here
  }
  SECTION("returns closer than the range resolution merge into one, powers add") {
    Bench bench("vlp16", {2, 1});
    const Eigen::Vector3d d = bench.direction(10);
    bench.set(10, 0, 0, d * 20.00, -d, kConcrete);
    bench.set(10, 1, 0, d * 20.05, -d, kConcrete);
    auto s = bench.settings(PhysicsMode::kIdeal);
    s.echoes = EchoMode::kDual;
    const auto out = bench.run(s);
    CHECK(out.range_m[out.slot(10, 0)] == Approx(20.0).margin(0.002));
    CHECK(out.range_m[out.slot(10, 1)] == 0);  // one return, not two
  }
  SECTION("an object edge: near object in the centre, far wall on two ring rays") {
    Bench bench("vlp16", {5, 1});
    const std::size_t beam = 10;
    const Eigen::Vector3d d = bench.direction(beam);
    for (int r : {0, 3, 4}) bench.set(beam, r, 0, d * 10, -d, kConcrete, 0, 7);
    for (int r : {1, 2}) bench.set(beam, r, 0, d * 30, -d, kConcrete, 0, 9);
    auto s = bench.settings();
    s.echoes = EchoMode::kDual;
    const auto dual = bench.run(s);
    CHECK(dual.range_m[dual.slot(beam, 0)] == Approx(10).margin(0.1));  // strongest: the object
    CHECK(dual.object_id[dual.slot(beam, 0)] == 7);
    CHECK(dual.range_m[dual.slot(beam, 1)] == Approx(30).margin(0.1));  // last: the wall
    CHECK(dual.object_id[dual.slot(beam, 1)] == 9);
    s.echoes = EchoMode::kLast;
    CHECK(bench.run(s).range_m[beam] == Approx(30).margin(0.1));
    s.echoes = EchoMode::kStrongest;
    CHECK(bench.run(s).range_m[beam] == Approx(10).margin(0.1));
  }
}

// ---------------------------------------------------------------------------------------------
// Section 6: multi-bounce paths.

TEST_CASE("6: a mirror shows the wall it reflects as a ghost at half the optical path",
          "[physics][multibounce]") {
  Bench bench("vlp16", {1, 3});
  const std::size_t beam = 8 * 16 + 7;  // a beam near the horizon
  const Eigen::Vector3d d = bench.direction(beam);
  // Metal 10 m ahead, tilted 30 degrees: the ray turns 60 degrees and meets a wall 5 m on.
  const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
  const double tilt = std::numbers::pi / 6;
  const Eigen::Vector3d n = -d * std::cos(tilt) + side * std::sin(tilt);
  const Eigen::Vector3d p1 = d * 10;
  const Eigen::Vector3d reflected = d - 2 * d.dot(n) * n;
  const Eigen::Vector3d p2 = p1 + reflected * 5;
  const auto angle = static_cast<float>(std::acos(p2.normalized().dot(d)) * 180 / std::numbers::pi);
  bench.set(beam, 0, 0, p1, n, kLucidMetal, 0, 1);
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, angle, 2);

  // The return comes back along the mirror: R = (10 + 5 + 5 + 10) / 2 = 15 m.
  auto ideal = bench.settings(PhysicsMode::kIdeal);
  ideal.echoes = EchoMode::kDual;
  auto out = bench.run(ideal);
  CHECK(out.range_m[beam] == Approx(15.0).margin(0.002));
  CHECK(out.object_id[beam] == 2);
  CHECK(out.kind[beam] == static_cast<std::uint8_t>(ReturnKind::kGhost));
  CHECK(out.range_m[out.slot(beam, 1)] == 0);  // one point per path
  // Within the receiver's angular resolution it enters directly: R = (L1 + L2 + |p2|) / 2.
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, 0.0f, 2);
  out = bench.run(ideal);
  CHECK(out.range_m[beam] == Approx((10 + 5 + p2.norm()) / 2).margin(0.002));
  // With the realistic chain the ghost beats the threshold (0.98^2 of a 30 % wall at 15 m).
  bench.set(beam, 0, 1, p2, -reflected, kConcrete, angle, 2);
  out = bench.run(bench.settings());
  CHECK(out.range_m[beam] == Approx(15.0).margin(0.1));
  // Without the stage, the metal's own faint diffuse return at 10 m is all there is.
  auto no_paths = bench.settings();
  drop_stage(no_paths.stages, "paths.multibounce");
  CHECK(bench.run(no_paths).range_m[beam] == Approx(10.0).margin(0.1));
}

// ---------------------------------------------------------------------------------------------
// Section 7: blooming.

namespace {

struct SignScene {
  std::size_t geometric = 0;  // beams that hit the sign
  double max_azimuth_deg = 0;
};

// A sign 20 m ahead (|azimuth| < 2 deg, |elevation| < 4 deg) in front of a concrete wall at 40 m.
SignScene place_sign(Bench& bench, std::uint16_t sign_material) {
  SignScene scene;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    const Eigen::Vector3d d = bench.direction(b);
    if (d.x() < 0.5) continue;
    const double az = std::atan2(d.y(), d.x()) * 180 / std::numbers::pi;
    const double el = std::asin(d.z()) * 180 / std::numbers::pi;
    const bool on_sign = std::fabs(az) < 2 && std::fabs(el) < 4;
    const double plane = on_sign ? 20.0 : 40.0;
    bench.set(b, 0, 0, d * (plane / d.x()), -Eigen::Vector3d::UnitX(),
              on_sign ? sign_material : kConcrete);
    if (on_sign)
      scene.geometric++, scene.max_azimuth_deg = std::max(scene.max_azimuth_deg, std::fabs(az));
  }
  return scene;
}

SignScene near_returns(Bench& bench, const FrameReturns& out) {
  SignScene seen;
  for (std::size_t b = 0; b < bench.beams(); ++b) {
    if (out.range_m[b] > 0 && out.range_m[b] < 25) {
      const Eigen::Vector3d d = bench.direction(b);
      ++seen.geometric;
      seen.max_azimuth_deg = std::max(seen.max_azimuth_deg,
                                      std::fabs(std::atan2(d.y(), d.x()) * 180 / std::numbers::pi));
      CHECK(out.range_m[b] == Approx(20.0 / d.x()).margin(0.3));  // at the sign's range
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("7: a retroreflective sign blooms wider than it is; a diffuse one does not",
          "[physics][blooming]") {
  Bench bench("vlp16");
  const auto retro = place_sign(bench, kRetro);
  const auto bloomed = near_returns(bench, bench.run(bench.settings()));
  INFO("retro sign: " << retro.geometric << " beams, seen on " << bloomed.geometric
                      << ", half-width " << retro.max_azimuth_deg << " -> "
                      << bloomed.max_azimuth_deg << " deg");
  CHECK(bloomed.geometric > retro.geometric * 1.3);
  CHECK(bloomed.max_azimuth_deg > retro.max_azimuth_deg + 0.5);
  CHECK(bloomed.max_azimuth_deg < retro.max_azimuth_deg + 3.5);  // "up to several degrees"
  auto off = bench.settings();
  drop_stage(off.stages, "blooming");
  CHECK(near_returns(bench, bench.run(off)).geometric == retro.geometric);

  const auto diffuse = place_sign(bench, kConcrete);
  const auto seen = near_returns(bench, bench.run(bench.settings()));
  CHECK(seen.geometric == diffuse.geometric);
  CHECK(seen.max_azimuth_deg == Approx(diffuse.max_azimuth_deg));
}

// ---------------------------------------------------------------------------------------------
// Section 8: echoes and pulse width.

TEST_CASE("8: echo pulse width grows with amplitude and with grazing incidence",
          "[physics][echoes]") {
  const double tau = 5e-9;
  CHECK(physics::echo_pulse_width_s(1.0, 2.0, tau, 0) == 0.0);  // below the threshold
  // At twice the threshold: 2 tau (1 - (2/pi) asin(sqrt(1/2))) = tau.
  CHECK(physics::echo_pulse_width_s(2.0, 1.0, tau, 0) == Approx(tau));
  CHECK(physics::echo_pulse_width_s(100.0, 1.0, tau, 0) >
        physics::echo_pulse_width_s(10.0, 1.0, tau, 0));
  CHECK(physics::echo_pulse_width_s(10.0, 1.0, tau, 0.3) ==
        Approx(physics::echo_pulse_width_s(10.0, 1.0, tau, 0) + 2 * 0.3 / physics::kSpeedOfLight));
  Bench bench("vlp16");
  const std::size_t beam = 8 * 16 + 7;
  const Eigen::Vector3d d = bench.direction(beam);
  const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
  // Same amplitude (30 % at 80 degrees vs 5.2 % head-on): only the footprint's range extent
  // on the tilted surface differs.
  bench.set(beam, 0, 0, d * 30, -d, kFivePointTwoPercent);
  const double head_on = bench.run(bench.settings()).pulse_width_ns[beam];
  const double t = physics::deg_to_rad(80);
  bench.set(beam, 0, 0, d * 30, -d * std::cos(t) + side * std::sin(t), kThirtyPercent);
  const double grazing = bench.run(bench.settings()).pulse_width_ns[beam];
  const double footprint = 2 * physics::beam_radius_m(0.0055, 0.00106, 30);
  INFO("head-on " << head_on << " ns, grazing " << grazing << " ns");
  CHECK(grazing - head_on ==
        Approx(2 * footprint * std::tan(t) / physics::kSpeedOfLight * 1e9).margin(0.3));
  CHECK(head_on > 0);
  CHECK(grazing > head_on);
}

TEST_CASE("8: strongest, last, first, dual and triple echo selection", "[physics][echoes]") {
  Bench bench("vlp16", {3, 1});
  const std::size_t beam = 20;
  const Eigen::Vector3d d = bench.direction(beam);
  bench.set(beam, 0, 0, d * 10, -d, kTenPercent, 0, 1);  // weak near (centre ray)
  bench.set(beam, 1, 0, d * 20, -d, kRetro, 0, 2);       // retroreflector on a ring ray
  bench.set(beam, 2, 0, d * 40, -d, kConcrete, 0, 3);    // far wall
  auto s = bench.settings(PhysicsMode::kIdeal);
  const auto ids = [&](EchoMode mode) {
    s.echoes = mode;
    const auto out = bench.run(s);
    return std::array<std::uint32_t, 3>{out.object_id[out.slot(beam, 0)],
                                        out.object_id[out.slot(beam, 1)],
                                        out.object_id[out.slot(beam, 2)]};
  };
  CHECK(ids(EchoMode::kStrongest) == std::array<std::uint32_t, 3>{2, 0, 0});
  CHECK(ids(EchoMode::kFirst) == std::array<std::uint32_t, 3>{1, 0, 0});
  CHECK(ids(EchoMode::kLast) == std::array<std::uint32_t, 3>{3, 0, 0});
  CHECK(ids(EchoMode::kDual) == std::array<std::uint32_t, 3>{2, 3, 0});
  CHECK(ids(EchoMode::kTriple)[0] == 2);
  CHECK(ids(EchoMode::kTriple)[1] == 3);
  CHECK(ids(EchoMode::kTriple)[2] == 1);
}

// ---------------------------------------------------------------------------------------------
// Section 9: raster correction.

TEST_CASE("9: a depth-image hit is moved onto the true beam direction", "[physics][raster]") {
  Bench bench("vlp16");
  const std::size_t beam = std::size_t{100} * 16;  // laser 0: -15 degrees
  const Eigen::Vector3d v = bench.direction(beam);
  // The pixel looks 0.2 degrees lower than the beam; the road is 1.8 m below.
  const Eigen::Vector3d axis = v.cross(Eigen::Vector3d::UnitZ()).normalized();
  const Eigen::Vector3d pixel = Eigen::AngleAxisd(-physics::deg_to_rad(0.2), axis) * v;
  const Eigen::Vector3d hit = pixel * (-1.8 / pixel.z());
  bench.set(beam, 0, 0, hit, Eigen::Vector3d::UnitZ(), kConcrete);
  const double true_range = -1.8 / v.z();
  auto s = bench.settings(PhysicsMode::kIdeal);
  CHECK(std::fabs(bench.run(s).range_m[beam] - true_range) > 0.05);  // uncorrected: off
  use_stage(s.stages, "geometry.raster_correction");
  CHECK(bench.run(s).range_m[beam] == Approx(true_range).margin(0.002));
  CHECK(physics::raster_corrected_range(0.5, 0.25, 10) == Approx(20));
}

// ---------------------------------------------------------------------------------------------
// Section 10 and the chain as a whole.

TEST_CASE("The chain names its stages; weather reaches the stages through the frame",
          "[physics][pipeline]") {
  Bench bench("vlp16");
  const MaterialTable materials = test_materials();
  auto s = bench.settings();
  Pipeline pipeline(bench.pattern(), materials, s);
  const auto names = pipeline.stage_names();
  const std::vector<std::string_view> expected{
      "geometry", "paths.multibounce",   "surface.brdf", "atmosphere.clear_air", "atmosphere.rain",
      "blooming", "detection.threshold", "echoes",       "range.noise",          "report"};
  CHECK(names == expected);
  use_stage(s.stages, "surface.ipsp");
  use_stage(s.stages, "detection.capability");
  use_stage(s.stages, "geometry.raster_correction");
  s.echoes = EchoMode::kDual;
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
