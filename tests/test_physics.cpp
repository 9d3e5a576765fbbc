// PHYSICS.md sections 1-4a: each model against the document's own numbers, not against itself.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>

#include "daemon_process.hpp"
#include "lidaremu/core/counter_rng.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/motion.hpp"
#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/pipeline.hpp"

using namespace lidaremu::core;

TEST_CASE("Section 1: range and incidence of a wall", "[physics]") {
  // A wall 10 m ahead facing the sensor: r = 10, theta = 0.
  const double r = std::sqrt(10.0 * 10.0);
  CHECK(r == Approx(10.0));
  CHECK(std::acos(physics::cos_incidence(1, 0, 0, -1, 0, 0)) == Approx(0.0).margin(1e-12));
  // Tilted 60 degrees: theta = pi / 3.
  const double tilt = std::numbers::pi / 3;
  CHECK(std::acos(physics::cos_incidence(1, 0, 0, -std::cos(tilt), std::sin(tilt), 0)) ==
        Approx(std::numbers::pi / 3));
  // A normal facing away is a back face.
  CHECK(physics::cos_incidence(1, 0, 0, 1, 0, 0) < 0);
}

TEST_CASE("Section 2a: material table matches seed 000 table 1.3", "[physics]") {
  const auto table = MaterialTable::load(lidaremu::test::materials_path());
  struct Row {
    int id;
    const char* name;
    double a, b, g, s;
  };
  // Typed from PHYSICS.md, independently of config/materials.toml.
  const Row expected[] = {{1, "retroreflector", 0, 0, 1, 1},
                          {2, "opaque metal", 0.01, 0.85, 0, 5},
                          {3, "lucid metal", 0.01, 0.98, 0, 5},
                          {4, "glass", 0, 0.01, 0, 2},
                          {5, "rubber", 0.17, 0.10, 0, 15},
                          {6, "asphalt", 0.09, 0.01, 0, 30},
                          {7, "stripes (road paint)", 0.30, 0.10, 0.5, 30},
                          {8, "concrete", 0.15, 0.10, 0, 10},
                          {9, "wood", 0.06, 0.20, 0, 30},
                          {10, "rock", 0.13, 0.05, 0, 30},
                          {11, "green vegetation", 0.04, 0.20, 0, 40},
                          {12, "non-green vegetation", 0.05, 0.10, 0, 40}};
  for (const auto& row : expected) {
    INFO("material " << row.id);
    const Material* m = table.find(static_cast<std::uint16_t>(row.id));
    REQUIRE(m);
    CHECK(m->name == row.name);
    CHECK(m->diffuse == row.a);
    CHECK(m->specular == row.b);
    CHECK(m->retroreflective == row.g);
    CHECK(m->lobe_width_deg == row.s);
  }
  CHECK(table.find(0) == nullptr);
  CHECK(table.find(13) == nullptr);
}

TEST_CASE("Section 2a: concrete at 10 m, normal incidence returns 0.004739", "[physics]") {
  const Material concrete{8, "concrete", 0.15, 0.10, 0.0, 10.0};
  const double i = physics::ipsp_returned_fraction(concrete, 10.0, 1.0);
  CHECK(i == Approx(0.00075 + 0.003989).epsilon(1e-3));
  CHECK(i == Approx(0.004739).epsilon(1e-3));
  // The specular term has no 1/r^2 falloff (the seed's known weakness, kept on purpose).
  CHECK(physics::ipsp_returned_fraction(concrete, 100.0, 1.0) ==
        Approx(0.003989 + 0.15 / 20000).epsilon(1e-3));
  // A retroreflector returns everything, at any range.
  const Material retro{1, "retroreflector", 0, 0, 1, 1};
  CHECK(physics::ipsp_returned_fraction(retro, 3.0, 0.5) == Approx(1.0).epsilon(1e-9));
}

TEST_CASE("Material table loading refuses bad files with the key and the fix",
          "[physics][config]") {
  CHECK_THROWS_WITH(MaterialTable::from_toml_text("[[material]]\nid = 0\nalpha = 2\n", "m.toml"),
                    Catch::Contains("m.toml:2: material[0].id") &&
                        Catch::Contains("0 means 'no hit'") &&
                        Catch::Contains("material[0].alpha must be between 0 and 1"));
  CHECK_THROWS_WITH(MaterialTable::from_toml_text("[[material]]\nid = 5\ncolour = 1\n", "m.toml"),
                    Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(
      MaterialTable::from_toml_text("[[material]]\nid = 5\nalpha=0.6\nbeta=0.6\n", "m.toml"),
      Catch::Contains("must not exceed 1"));
  CHECK_THROWS_WITH(
      MaterialTable::from_toml_text("[[material]]\nid = 5\n[[material]]\nid = 5\n", "m.toml"),
      Catch::Contains("defined twice"));
  CHECK_THROWS_WITH(MaterialTable::from_toml_text("[[material]\n", "m.toml"),
                    Catch::Contains("not valid TOML"));
  CHECK_THROWS_WITH(MaterialTable::load("/nonexistent/materials.toml"),
                    Catch::Contains("cannot open") && Catch::Contains("--materials"));
  // The gloss and transmission keys, range-checked like the others.
  CHECK_THROWS_WITH(MaterialTable::from_toml_text("[[material]]\nid = 5\nfresnel_f0 = 1.5\n"
                                                  "roughness = 0\ntransmittance = -0.1\n",
                                                  "m.toml"),
                    Catch::Contains("material[0].fresnel_f0 must be between 0 and 1") &&
                        Catch::Contains("material[0].roughness must be from 0.005 to 2") &&
                        Catch::Contains("material[0].transmittance must be between 0 and 1"));
  const auto glass = MaterialTable::from_toml_text(
      "[[material]]\nid = 5\nfresnel_f0 = 0.04\nroughness = 0.01\ntransmittance = 0.92\n",
      "m.toml");
  CHECK(glass.find(5)->fresnel_f0 == 0.04);
  CHECK(glass.find(5)->roughness == 0.01);
  CHECK(glass.find(5)->transmittance == 0.92);
}

TEST_CASE("Section 3: noise floor is about 0.2 uW with the seed's detector", "[physics]") {
  const PhysicsParams p;
  CHECK(p.noise_power_w() == Approx(6.6e-12 * std::sqrt(1e9)));
  CHECK(p.noise_power_w() == Approx(0.2e-6).epsilon(0.05));
}

TEST_CASE("Section 3: detection at the threshold is a coin toss, far below it never", "[physics]") {
  const double p_noise = PhysicsParams{}.noise_power_w();
  CHECK(physics::detection_probability(3 * p_noise, p_noise) == Approx(0.5));
  // Sample the actual detector draw: P_r = 3 P_noise beats the threshold half the time.
  constexpr int kTrials = 20000;
  int detected = 0, detected_far = 0;
  for (int i = 0; i < kTrials; ++i) {
    const double n = CounterRng({42, 0, 7, static_cast<std::uint32_t>(i), 1}).normal(0);
    detected += physics::beats_threshold(3 * p_noise + p_noise * n, p_noise);
    detected_far += physics::beats_threshold(0.1 * p_noise + p_noise * n, p_noise);
  }
  const double share = double(detected) / kTrials;
  const double standard_error = std::sqrt(0.25 / kTrials);
  CHECK(std::fabs(share - 0.5) < 4 * standard_error);
  // Phi(0.1 - 3) = 0.19 %: nearly all trials dropped.
  CHECK(double(detected_far) / kTrials < 0.005);
}

TEST_CASE("Section 3: concrete wall at 10 m is detected; far and tilted it is dropped",
          "[physics]") {
  const PhysicsParams p;
  const Material concrete{8, "concrete", 0.15, 0.10, 0.0, 10.0};
  auto p_r = [&](double range, double cos_theta) {
    return physics::detected_power(
        physics::ipsp_returned_fraction(concrete, range, cos_theta) *
            physics::two_way_transmission(
                physics::extinction_from_visibility(p.weather.visibility_m, p.wavelength_nm),
                range),
        p.peak_power_w, p.detector_efficiency);
  };
  CHECK(physics::detection_probability(p_r(10, 1.0), p.noise_power_w()) > 0.999999);
  // Tilted 60 degrees the specular lobe is gone; at 150 m P_r < 3 P_noise.
  const double far = p_r(150, 0.5);
  CHECK(far < 3 * p.noise_power_w());
  CHECK(physics::detection_probability(far, p.noise_power_w()) < 0.02);
}

TEST_CASE("Section 3: Gaussian range noise has the configured sigma", "[physics]") {
  double sum = 0, sum2 = 0;
  constexpr int kN = 50000;
  for (int i = 0; i < kN; ++i) {
    const double n = 0.02 * CounterRng({9, 1, 3, static_cast<std::uint32_t>(i), 2}).normal(0);
    sum += n;
    sum2 += n * n;
  }
  const double mean = sum / kN;
  const double sd = std::sqrt(sum2 / kN - mean * mean);
  CHECK(std::fabs(mean) < 4 * 0.02 / std::sqrt(double(kN)));
  CHECK(sd == Approx(0.02).epsilon(0.02));
}

TEST_CASE("Section 3: quantisation to the format's range unit", "[physics]") {
  CHECK(physics::quantise_range(10.0031, 0.002, 131.07) == Approx(10.004));
  CHECK(physics::quantise_range(10.0029, 0.001, 1048.575) == Approx(10.003));
  CHECK(physics::quantise_range(200.0, 0.002, 131.07) == 0.0);  // does not fit: no return
}

TEST_CASE("Section 4a: two-way Beer-Lambert and fog from visibility", "[physics]") {
  CHECK(physics::two_way_transmission(1e-4, 100) == Approx(std::exp(-0.02)));
  // Kim: 23 km visibility at 905 nm, q = 1.3: 3.912/23000 * (905/550)^-1.3 = 8.90e-5 /m.
  CHECK(physics::extinction_from_visibility(23000, 905) == Approx(8.90e-5).epsilon(2e-3));
  // Fog at 200 m visibility (q = 0): 3.912 / 200 = 0.01956 /m, about 200 times clear air.
  const double fog = physics::extinction_from_visibility(200, 905);
  CHECK(fog == Approx(0.01956));
  CHECK(fog / physics::extinction_from_visibility(23000, 905) == Approx(220).epsilon(0.1));
}

TEST_CASE("Calibrated reflectivity follows the Velodyne/Ouster convention", "[physics]") {
  // A 10 % Lambertian target at normal incidence reads 10, at any range.
  for (double r : {5.0, 20.0, 80.0}) {
    const double fraction = 0.10 * physics::ipsp_diffuse(r, 1.0);
    CHECK(physics::calibrated_reflectivity(physics::lambertian_equivalent(fraction, r, 1.0)) == 10);
  }
  CHECK(physics::calibrated_reflectivity(1.0) == 100);
  CHECK(physics::calibrated_reflectivity(2.0) > 100);  // retroreflectors above 100
  CHECK(physics::calibrated_reflectivity(1e6) == 255);
  CHECK(physics::calibrated_reflectivity(0.0) == 0);
}

TEST_CASE("Section 10: Philox-4x32-10 known answers and key separation", "[physics][rng]") {
  // Random123 known-answer test: counter 0, key 0.
  const auto w = CounterRng(DrawKey{}).words(0);
  CHECK(w[0] == 0x6627e8d5u);
  CHECK(w[1] == 0xe169c58du);
  CHECK(w[2] == 0xbc57ac4cu);
  CHECK(w[3] == 0x9b00dbd8u);
  // Any field of the key changes the draw.
  const double base = CounterRng({1, 2, 3, 4, 5}).uniform(0);
  CHECK(CounterRng({2, 2, 3, 4, 5}).uniform(0) != base);
  CHECK(CounterRng({1, 3, 3, 4, 5}).uniform(0) != base);
  CHECK(CounterRng({1, 2, 4, 4, 5}).uniform(0) != base);
  CHECK(CounterRng({1, 2, 3, 5, 5}).uniform(0) != base);
  CHECK(CounterRng({1, 2, 3, 4, 6}).uniform(0) != base);
  CHECK(CounterRng({1, 2, 3, 4, 5}).uniform(1) != base);
  CHECK(CounterRng({1, 2, 3, 4, 5}).uniform(0) == base);
}

TEST_CASE("IMU from engine poses: specific force and angular rate by kinematics",
          "[physics][imu]") {
  using lidaremu::core::MotionEstimator;
  SECTION("at rest, upright: one g up; tilted 90 degrees about x: one g along sensor y") {
    MotionEstimator still;
    for (int i = 0; i < 3; ++i) still.add(0.1 * i, Eigen::Isometry3d::Identity());
    const auto r = still.reading();
    CHECK(r.accel_g[0] == Approx(0).margin(1e-6));
    CHECK(r.accel_g[2] == Approx(1.0));
    CHECK(r.gyro_deg_s[2] == Approx(0).margin(1e-6));
    MotionEstimator tilted;
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    pose.linear() = Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitX()).toRotationMatrix();
    for (int i = 0; i < 3; ++i) tilted.add(0.1 * i, pose);
    // The sensor's y axis now points up (world z): gravity's support reads along +y.
    CHECK(tilted.reading().accel_g[1] == Approx(1.0));
    CHECK(tilted.reading().accel_g[2] == Approx(0).margin(1e-6));
  }
  SECTION("accelerating at 2 m/s^2 forward: 0.204 g along x, one g up") {
    MotionEstimator m;
    for (int i = 0; i < 3; ++i) {
      const double t = 0.1 * i;
      Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
      pose.translation() = Eigen::Vector3d(3.0 * t + 0.5 * 2.0 * t * t, 0, 0);
      m.add(t, pose);
    }
    CHECK(m.reading().accel_g[0] == Approx(2.0 / 9.80665));
    CHECK(m.reading().accel_g[2] == Approx(1.0));
  }
  SECTION("yawing at 90 degrees per second: the gyro reads 90 about z") {
    MotionEstimator m;
    for (int i = 0; i < 3; ++i) {
      Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
      pose.linear() =
          Eigen::AngleAxisd(M_PI / 2 * 0.1 * i, Eigen::Vector3d::UnitZ()).toRotationMatrix();
      m.add(0.1 * i, pose);
    }
    CHECK(m.reading().gyro_deg_s[2] == Approx(90.0));
    CHECK(m.reading().gyro_deg_s[0] == Approx(0).margin(1e-4));
  }
}
