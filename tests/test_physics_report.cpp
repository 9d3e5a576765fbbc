// The physics report: its curves show what PHYSICS.md says they must, and the tool draws them.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "daemon_process.hpp"
#include "lidaremu/clients/physics_report.hpp"

using namespace lidaremu;
namespace report = lidaremu::clients::report;

namespace {

// x where column `series` first falls below `level`.
double crossing(const report::Table& t, std::size_t series, double level) {
  for (const auto& row : t.rows) {
    if (row[series] < level) return row[0];
  }
  return -1;
}

}  // namespace

TEST_CASE("Detection curve: a 10 % target is seen half the time at the datasheet range",
          "[report]") {
  const auto setup = report::default_setup("vlp16");
  const auto t = report::detection_vs_range(setup, {0.10, 0.40}, 130, 2);
  REQUIRE(t.columns.size() == 3);
  CHECK(crossing(t, 1, 0.5) == Approx(100).margin(2.5));
  // 40 % reaches twice as far before extinction; the VLP-16's 131 m range field cuts it first.
  CHECK(t.rows.back()[0] == Approx(130));
  CHECK(t.rows.back()[2] > 0.5);
  CHECK(t.rows.front()[1] == 1.0);
}

TEST_CASE("Rain curves: losses and false positives grow with the rate, nothing when dry",
          "[report][rain]") {
  const auto setup = report::default_setup("vlp16");
  const auto lost = report::rain_drop_rate(setup, {40, 80}, {5, 25, 100});
  REQUIRE(lost.rows.size() == 4);  // the dry reference is added
  CHECK(lost.rows[0][2] == 0.0);
  for (std::size_t i = 1; i < lost.rows.size(); ++i) CHECK(lost.rows[i][2] > lost.rows[i - 1][2]);
  CHECK(lost.rows[3][2] > lost.rows[3][1]);  // further is worse
  // Drops reported instead of a 10 % target at 60 m: none dry or in light rain, a few in heavy.
  const auto fp = report::rain_false_positive_rate(setup, {60}, {5, 100});
  CHECK(fp.rows[0][1] == 0.0);
  CHECK(fp.rows[1][1] == 0.0);
  CHECK(fp.rows[2][1] > fp.rows[1][1]);
  CHECK(fp.rows[2][1] < 1e-3);
}

TEST_CASE("Blooming curve: diffuse signs keep their width, bright retroreflectors widen",
          "[report][blooming]") {
  const auto setup = report::default_setup("vlp16");
  const auto t = report::blooming_width(setup, {0.3, 1, 30, 300, 3000});
  for (std::size_t i = 0; i < 3; ++i) CHECK(t.rows[i][2] == Approx(t.rows[i][1]));
  CHECK(t.rows[3][2] > t.rows[3][1] + 0.5);
  CHECK(t.rows[4][2] > t.rows[3][2]);
}

TEST_CASE("Incidence curve: Lambertian surfaces fall as cos(theta)", "[report]") {
  const auto setup = report::default_setup("vlp16");
  const auto materials = core::MaterialTable::load(test::materials_path());
  const auto t = report::power_vs_incidence(setup, materials, {6});  // asphalt, no lobe at 60 deg
  REQUIRE(t.rows.size() == 90);
  CHECK(t.rows[60][1] / t.rows[40][1] ==
        Approx(std::cos(60 * M_PI / 180) / std::cos(40 * M_PI / 180)).epsilon(0.01));
}

TEST_CASE("Seed 004 validation metrics on the demo scene, dry and in rain", "[report][rain]") {
  const auto setup = report::default_setup("vlp16");
  const auto materials = core::MaterialTable::load(test::materials_path());
  const auto m = report::validate_rain(setup, materials, {10, 100}, 2);
  REQUIRE(m.size() == 3);
  // Seed 004: point density falls as the rain grows (drops are weak; extinction takes the far
  // field).
  CHECK(m[1].points_per_frame < m[0].points_per_frame);
  CHECK(m[2].points_per_frame < m[1].points_per_frame);
  CHECK(m[0].detection_rate_pct > 99);
  CHECK(m[0].detection_rate_pct + m[0].false_detection_rate_pct == Approx(100));
  CHECK(m[1].false_detection_rate_pct > m[0].false_detection_rate_pct);
  CHECK(m[2].false_detection_rate_pct > m[1].false_detection_rate_pct);
  CHECK(m[2].snr_db < m[0].snr_db);
  CHECK(m[1].mean_abs_range_error_m > 0);
  CHECK(m[0].points_per_frame > 15000);
}

TEST_CASE("lidaremu-physics draws a PNG with gnuplot", "[report][tool]") {
  const auto dir = std::filesystem::temp_directory_path() / "lidaremu-physics-test";
  std::filesystem::create_directories(dir);
  const auto png = dir / "blooming.png";
  std::filesystem::remove(png);
  const std::string command = std::string(LIDAREMU_TEST_PHYSICS_TOOL) + " --materials " +
                              test::materials_path() + " blooming --png " + png.string() + " > " +
                              (dir / "out.txt").string();
  REQUIRE(std::system(command.c_str()) == 0);  // NOLINT(cert-env33-c)
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
  CHECK(std::filesystem::file_size(png) > 5000);
  // A bad option is a clear error, not a crash.
  const std::string bad = std::string(LIDAREMU_TEST_PHYSICS_TOOL) + " --surface nope detection > " +
                          (dir / "bad.txt").string() + " 2>&1";
  CHECK(std::system(bad.c_str()) != 0);  // NOLINT(cert-env33-c)
}

TEST_CASE("The curves a perception engineer checks: reflectivity, sun, range noise, fog, density",
          "[report]") {
  const auto setup = report::default_setup("vlp16");
  const auto materials = core::MaterialTable::load(test::materials_path());
  // Columns: angle, then concrete (8), opaque metal (2), asphalt (6).
  const auto r = report::reflectivity_vs_incidence(setup, materials, {8, 2, 6}, 10);
  REQUIRE(r.rows.size() == 18);
  CHECK(r.rows[0][1] == Approx(34).margin(2));   // concrete head-on: 30 % + its gloss
  CHECK(r.rows[12][1] == Approx(15).margin(2));  // 60 deg: 30 % x cos 60
  CHECK(r.rows[0][2] > 100);                     // metal flashes head-on...
  CHECK(r.rows[3][2] < 10);                      // ...and not 15 deg off
  CHECK(r.rows[0][3] == Approx(10).margin(1));   // asphalt 10 %
  const auto sun = report::sun_detection_vs_range(setup, 0.1, {0, 1000}, 120, 5);
  std::size_t night_longer = 0;
  for (const auto& row : sun.rows) night_longer += row[1] >= row[2];
  CHECK(night_longer == sun.rows.size());
  CHECK(sun.rows[16][1] > sun.rows[16][2] + 0.3);  // 85 m: night far above full sun
  const auto noise = report::range_sigma_vs_range(setup, {0.1}, 100, 20);
  CHECK(noise.rows.front()[1] < noise.rows.back()[1] / 2);  // weaker echoes, more range noise
  const auto fog = report::fog_clutter_vs_visibility(setup, {15, 30, 100, 1000});
  CHECK(fog.rows[0][1] > fog.rows[1][1]);
  CHECK(fog.rows[1][1] > fog.rows[2][1]);
  CHECK(fog.rows[3][1] == 0.0);
  const auto density = report::rain_density(report::validate_rain(setup, materials, {100}, 1));
  CHECK(density.rows[1][1] < 1.0);
}
