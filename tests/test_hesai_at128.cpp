// Hesai AT128 (FORMATS-MORE.md section 2): the binary correction file nebula ships
// (tests/data/hesai/PandarAT128.dat) read as the sheet lays it out, and the angles both drivers
// compute from it checked against the sheet's test vectors.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "lidaremu/core/hesai/mirror_correction.hpp"

using namespace lidaremu::core;
using hesai::AdjustRounding;
using hesai::MirrorCorrection;

namespace {

std::vector<std::uint8_t> dat_file() {
  std::ifstream in(std::string(LIDAREMU_TEST_DATA) + "/hesai/PandarAT128.dat", std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A block's encoder angle from its azimuth (0.01 degree) and fine azimuth (1/256 of that).
std::int64_t encoder_units(int azimuth, int fine) { return std::int64_t{azimuth} * 256 + fine; }

}  // namespace

TEST_CASE("AT128 correction: nebula's file, version 1.5, as the sheet lays it out",
          "[format][hesai]") {
  const auto bytes = dat_file();
  REQUIRE(bytes.size() == 47176);
  // The built-in copy is the file, byte for byte (PTC 0x05 serves it as it is).
  const MirrorCorrection& built_in = hesai::at128_default_correction();
  CHECK(std::vector<std::uint8_t>(built_in.bytes().begin(), built_in.bytes().end()) == bytes);
  std::string error;
  const auto c = MirrorCorrection::parse(bytes, &error);
  REQUIRE(c);
  CHECK(c->channels() == 128);
  CHECK(c->fields() == 3);
  // Fields start at encoder 23.331, 143.205 and 263.149 degrees (resolution 2).
  CHECK(c->field_start(0) / 25600.0 == Approx(23.331).margin(0.001));
  CHECK(c->field_start(1) / 25600.0 == Approx(143.205).margin(0.001));
  CHECK(c->field_start(2) / 25600.0 == Approx(263.149).margin(0.001));
  // The four columns of lasers: offsets -2.4, +0.65, +2.4, -0.65 degrees; elevations from
  // +12.915 down to -12.455.
  CHECK(c->azimuth_offset_deg(0) == Approx(-2.4));
  CHECK(c->elevation_deg(0) == Approx(12.915).margin(0.001));
  CHECK(c->elevation_deg(127) == Approx(-12.455).margin(0.001));
  // What the drivers refuse, refused: another version, a short file, no header.
  auto v13 = bytes;
  v13[3] = 3;
  CHECK_FALSE(MirrorCorrection::parse(v13, &error));
  CHECK(error.find("1.3") != std::string::npos);
  CHECK_FALSE(MirrorCorrection::parse(std::span(bytes).first(40000), &error));
  CHECK(error.find("needed") != std::string::npos);
  auto headless = bytes;
  headless[0] = 0;
  CHECK_FALSE(MirrorCorrection::parse(headless, &error));
}

TEST_CASE("AT128 angles: the sheet's test vectors, nebula's and the SDK's", "[format][hesai]") {
  const MirrorCorrection& c = hesai::at128_default_correction();
  struct Vector {
    int azimuth, fine, channel, field;
    double nebula_az, sdk_az, elevation;
  };
  const Vector vectors[] = {
      {6833, 0, 0, 0, 92.3977, 92.3944, 13.0153},
      {6833, 0, 63, 0, 90.6477, 90.6444, 0.4300},
      {6833, 128, 127, 0, 90.6577, 90.6543, -12.3551},
      {20000, 0, 1, 1, 112.8597, 112.8597, 12.9355},
      {30000, 0, 0, 2, 76.2228, 76.2228, 12.9953},
  };
  for (const Vector& v : vectors) {
    INFO(v.azimuth << " + " << v.fine << "/256, channel " << v.channel);
    const auto a = encoder_units(v.azimuth, v.fine);
    const auto nebula = c.angles(a, v.channel, AdjustRounding::kNebula);
    const auto sdk = c.angles(a, v.channel, AdjustRounding::kSdk);
    CHECK(nebula.field == v.field);
    CHECK(sdk.field == v.field);
    CHECK(nebula.azimuth_deg == Approx(v.nebula_az).margin(0.0001));
    CHECK(sdk.azimuth_deg == Approx(v.sdk_az).margin(0.0001));
    CHECK(nebula.elevation_deg == Approx(v.elevation).margin(0.0001));
    CHECK(sdk.elevation_deg == Approx(v.elevation).margin(0.0001));
  }
  // Field 2 ends where field 0 starts, across 0 degrees.
  CHECK(c.field_of(encoder_units(1000, 0)) == 2);
  CHECK(c.field_of(encoder_units(35999, 255)) == 2);
}
