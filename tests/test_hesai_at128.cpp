// Hesai AT128 (FORMATS-MORE.md section 2): the binary correction file nebula ships
// (tests/data/hesai/PandarAT128.dat) read as the sheet lays it out, and the angles both drivers
// compute from it checked against the sheet's test vectors.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "lidaremu/core/hesai.hpp"

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

namespace {

struct Keep final : PacketSink {
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<double> times;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes, double t) override {
    if (channel != PacketChannel::kData) return;
    data.emplace_back(bytes.begin(), bytes.end());
    times.push_back(t);
  }
};

// 2026-11-25 12:00:00 UTC.
constexpr double kTurnStart = 1795608000.0;

// One turn (three passes) of the AT128 with every beam at 20 m.
Keep one_turn(ReturnMode mode) {
  const SensorModel& model = *find_sensor_model("pandar-at128");
  const auto pattern = *make_rpm_scan(model, 200).pattern;
  FrameReturns returns;
  returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 128});
  for (std::size_t beam = 0; beam < returns.shape.beams(); ++beam) {
    returns.range_m[returns.slot(beam, 0)] = 20.0F;
    returns.reflectivity[returns.slot(beam, 0)] = 30;
  }
  Keep sink;
  auto encoder = make_encoder(pattern, {}, mode);
  REQUIRE(encoder);
  encoder->encode_frame(returns, kTurnStart, sink);
  encoder->flush(sink);
  return sink;
}

std::uint64_t le(std::span<const std::uint8_t> p, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::uint64_t{p[at + i]} << (8 * i);
  return v;
}

}  // namespace

TEST_CASE("AT128 packets: protocol 4.3 as FORMATS-MORE.md lays it out, three passes a turn",
          "[format][hesai]") {
  const SensorModel& model = *find_sensor_model("pandar-at128");
  const auto pattern = *make_rpm_scan(model, 200).pattern;
  // 200 rpm, a firing every 41.667 us, 0.05 degree of encoder angle: 7,200 a turn.
  CHECK(pattern.columns_per_frame == 7200);
  CHECK(pattern.frame_period_s == Approx(0.3));
  const MirrorCorrection& c = hesai::at128_default_correction();
  for (const ReturnMode mode : {ReturnMode::kStrongest, ReturnMode::kLast, ReturnMode::kDual}) {
    const bool dual = mode == ReturnMode::kDual;
    INFO(return_mode_name(mode));
    const auto turn = one_turn(mode);
    // 625 packets a pass single, 1,250 dual; three passes.
    REQUIRE(turn.data.size() == (dual ? 3750U : 1875U));
    std::vector<int> last_block_azimuths;
    for (std::size_t i = 0; i < turn.data.size(); ++i) {
      const auto& p = turn.data[i];
      REQUIRE(p.size() == 1118);
      CHECK(std::vector<int>(p.begin(), p.begin() + 4) == std::vector<int>{0xEE, 0xFF, 4, 3});
      CHECK(p[6] == 0x80);
      CHECK(p[7] == 2);
      CHECK(p[8] == (dual ? 1 : 0));
      CHECK(p[9] == 4);
      CHECK(p[10] == (dual ? 2 : 1));
      CHECK(p[11] == 0x09);
      CHECK(le(p, 1064, 2) == 200);
      CHECK(p[1070] == (mode == ReturnMode::kStrongest ? 0x37
                        : mode == ReturnMode::kLast    ? 0x38
                                                       : 0x39));
      CHECK(p[1071] == 0x42);
      // The date: two zero bytes, then UNIX seconds big-endian; the microseconds at 1066.
      CHECK(p[1072] == 0);
      CHECK(p[1073] == 0);
      const std::uint64_t seconds = (std::uint64_t{p[1074]} << 24) |
                                    (std::uint64_t{p[1075]} << 16) | (std::uint64_t{p[1076]} << 8) |
                                    p[1077];
      CHECK(static_cast<double>(seconds) + static_cast<double>(le(p, 1066, 4)) * 1e-6 ==
            Approx(turn.times[i]).margin(1.5e-6));
      CHECK(le(p, 1078, 4) == i);
      CHECK(le(p, 1042, 4) == hesai::crc32_mpeg2(std::span(p).subspan(12, 1042 - 12)));
      CHECK(le(p, 1082, 4) == hesai::crc32_mpeg2(std::span(p).subspan(1046, 1082 - 1046)));
      // Each block's encoder angle (azimuth and fine azimuth) inside a pass: 13.75 to 76.25
      // degrees past its facet's start, so every corrected azimuth is inside nebula's
      // 10-170-degree check.
      for (const std::size_t block : {std::size_t{12}, std::size_t{527}}) {
        const auto a = static_cast<std::int64_t>(le(p, block, 2)) * 256 + p[block + 2];
        const int field = c.field_of(a);
        REQUIRE(field >= 0);
        std::int64_t swept = a - c.field_start(field);
        if (swept < 0) swept += hesai::kUnitsPerTurn;
        CHECK(swept >= 1375 * hesai::kUnitsPerDegree / 100);
        CHECK(swept < 7625 * hesai::kUnitsPerDegree / 100);
        for (const int ch : {0, 31, 64, 127}) {
          const double az = c.angles(a, ch).azimuth_deg;
          CHECK(az >= 10.0);
          CHECK(az <= 170.0);
        }
        CHECK(le(p, block + 3, 2) == 5000);  // 20 m in 4 mm
      }
      last_block_azimuths.push_back(static_cast<int>(le(p, 527, 2)));
    }
    // The SDK's frame split: a new frame when the last block's azimuth moves by more than 10
    // degrees; inside a pass it never does, between passes it always does: three frames a turn.
    int splits = 0;
    for (std::size_t i = 1; i < last_block_azimuths.size(); ++i) {
      splits += std::abs(last_block_azimuths[i] - last_block_azimuths[i - 1]) > 1000;
    }
    CHECK(splits == 2);
    // nebula's timing: a point is the packet's time less 9.249 us less 41.666 us before the
    // second block in single return, for both blocks in dual, plus its channel's firing: so the
    // packet's time is 50.915 us after its first firing. The first pass's first firing: the first
    // column at or past 13.75 degrees beyond the first facet's start.
    const std::int64_t first_units = c.field_start(0) + 1375 * hesai::kUnitsPerDegree / 100;
    const std::int64_t first_column = (first_units + 1279) / 1280;
    CHECK(
        turn.times[0] ==
        Approx(kTurnStart + static_cast<double>(first_column) * pattern.column_period_s + 50.915e-6)
            .margin(1e-9));
  }
}
