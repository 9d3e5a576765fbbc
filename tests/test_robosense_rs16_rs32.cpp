// RoboSense RS-LiDAR-16 and RS-LiDAR-32 (FORMATS-MORE.md section 3): their format rows against
// the sheet's offsets, their model rows against one real unit's angle files (tests/data/robosense),
// the spec decoder against packets built here byte by byte from the sheet (rs_driver's
// decoder_RS16 / decoder_RS32 rules), and the encoder's block layout read back.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/robosense.hpp"

using namespace lidaremu::core;

namespace {

constexpr double kRadPerCdeg = std::numbers::pi / 18000.0;
constexpr std::array<std::uint8_t, 8> kMsopId{0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0};

void put_be(std::vector<std::uint8_t>& p, std::size_t at, std::size_t bytes, std::uint64_t v) {
  for (std::size_t i = 0; i < bytes; ++i) {
    p[at + bytes - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
}

// ros_rslidar's angle.csv of one real unit, its source line skipped: (vertical, horizontal).
std::vector<std::pair<double, double>> angle_file(const std::string& name) {
  std::ifstream in(std::string(LIDAREMU_TEST_DATA) + "/robosense/" + name);
  REQUIRE(in);
  std::vector<std::pair<double, double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    double vertical = 0, horizontal = 0;
    char comma = 0;
    fields >> vertical >> comma >> horizontal;
    rows.emplace_back(vertical, horizontal);
  }
  return rows;
}

// A DIFOP with the sheet's common part: id, rpm 600, return mode, the tail.
std::vector<std::uint8_t> hand_made_difop(std::uint8_t return_mode) {
  std::vector<std::uint8_t> p(1248, 0);
  const std::array<std::uint8_t, 8> id{0xA5, 0xFF, 0x00, 0x5A, 0x11, 0x11, 0x55, 0x55};
  std::copy(id.begin(), id.end(), p.begin());
  put_be(p, 8, 2, 600);
  p[300] = return_mode;
  put_be(p, 1246, 2, 0x0FF0);
  return p;
}

// An MSOP packet: id, YMD time 2026-11-25 12:00:00.250007, twelve blocks `step` hundredths apart
// from `first` hundredths.
std::vector<std::uint8_t> hand_made_msop(int first, int step) {
  std::vector<std::uint8_t> p(1248, 0);
  std::copy(kMsopId.begin(), kMsopId.end(), p.begin());
  const std::array<std::uint8_t, 10> ymd{26, 11, 25, 12, 0, 0, 0, 250, 0, 7};
  std::copy(ymd.begin(), ymd.end(), p.begin() + 20);
  for (int block = 0; block < 12; ++block) {
    const std::size_t at = 42 + 100 * static_cast<std::size_t>(block);
    put_be(p, at, 2, 0xFFEE);
    put_be(p, at + 2, 2, static_cast<std::uint64_t>((first + step * block) % 36000));
  }
  return p;
}

constexpr double kPacketTime = 1795608000.250007;  // the YMD above

}  // namespace

TEST_CASE("RS-LiDAR-16 and -32 format rows: the sheet's offsets and values",
          "[format][robosense]") {
  using namespace robosense;
  for (const ModelFormat* f : {&kRs16, &kRs32}) {
    INFO(f->model);
    CHECK(f->msop.id == kMsopId);
    CHECK(f->msop.id_bytes == 8);
    CHECK(f->msop.time_form == TimeForm::kYmd);
    CHECK(f->difop.time_form == TimeForm::kYmd);
    CHECK(f->distance_unit_m == 0.005);  // rs_driver: 0.5 cm for both
    CHECK(f->difop.return_mode_at == 300);
    CHECK(f->msop.fixed[0].offset == 30);  // LiDAR model byte (the manual's table 4)
  }
  CHECK(kRs16.msop.fixed[0].value == 0x01);
  CHECK(kRs32.msop.fixed[0].value == 0x02);
  CHECK(kRs16.firings_per_block == 2);
  CHECK(kRs32.firings_per_block == 1);
  // RS-16: 16 x u24 pitch at 1165 (48 bytes), then 33 reserved bytes up to the tail at 1246.
  CHECK(kRs16.difop.angle_form == AngleForm::kPitch16);
  CHECK(kRs16.difop.vertical_at == 1165);
  CHECK(kRs16.difop.vertical_at + 16 * 3 + 33 == kTailAt);
  CHECK(kRs16.difop.horizontal_at == 0);
  // RS-32: 32 vertical then 32 horizontal angles, 3 bytes each, in 0.001 degree, at 468 and 564.
  CHECK(kRs32.difop.angle_form == AngleForm::kSignedMdeg);
  CHECK(kRs32.difop.vertical_at == 468);
  CHECK(kRs32.difop.horizontal_at == 564);
  CHECK(kRs32.difop.horizontal_at + 96 + 586 == kTailAt);
}

TEST_CASE("RS-LiDAR-16 and -32 model rows: one real unit's angles, the manuals' timing",
          "[format][robosense][registry]") {
  const SensorModel& rs16 = *find_sensor_model("rs16");
  const SensorModel& rs32 = *find_sensor_model("rs32");
  // RS-16: the real unit's pitch exactly (its DIFOP carries 0.0001 degree); lasers 0-7 down.
  const auto rs16_file = angle_file("rs16_angle_sample.csv");
  REQUIRE(rs16_file.size() == 16);
  REQUIRE(rs16.channels == 16);
  for (std::size_t c = 0; c < 16; ++c) {
    CHECK(rs16.elevation_deg[c] == rs16_file[c].first);
    CHECK(rs16.azimuth_offset_deg[c] == 0.0);
    CHECK((rs16.elevation_deg[c] < 0) == (c < 8));
  }
  // RS-32: the real unit's angles to the 0.001 degree its DIFOP carries.
  const auto rs32_file = angle_file("rs32_angle_sample.csv");
  REQUIRE(rs32_file.size() == 32);
  REQUIRE(rs32.channels == 32);
  for (std::size_t c = 0; c < 32; ++c) {
    INFO("channel " << c);
    CHECK(rs32.elevation_deg[c] == Approx(rs32_file[c].first).margin(0.0005));
    CHECK(rs32.azimuth_offset_deg[c] == Approx(rs32_file[c].second).margin(0.0005));
  }
  // Firing: 2.8 us apart, a 55.5 us cycle (RS-16); pairs 1.44 us apart, 55.52 us, with slots 15
  // and 31 at 44.64 and 46.08 us (rs_driver's RS-32 table).
  CHECK(rs16.robosense.block_period_us == 55.5);
  CHECK(rs16.robosense.firing_offset_us[15] == Approx(42.0));
  CHECK(rs32.robosense.block_period_us == 55.52);
  CHECK(rs32.robosense.firing_offset_us[14] == 40.32);
  CHECK(rs32.robosense.firing_offset_us[15] == 44.64);
  CHECK(rs32.robosense.firing_offset_us[16] == 1.44);
  CHECK(rs32.robosense.firing_offset_us[31] == 46.08);
  CHECK(rs16.robosense.lens_rx_m == 0.03825);
  CHECK(rs32.robosense.lens_rx_m == 0.03997);
  // Rates: rs_driver's unit test wants 1801 RS-32 blocks a frame at 600 rpm and 900 at 1200; the
  // sheet's 750.8 RS-16 packets a second (24 firings of 55.5 us) and 1501 RS-32 (12 of 55.52).
  CHECK(make_rpm_scan(rs32, 600).pattern->columns_per_frame == 1801);
  // At 1200 rpm a turn takes 900.6 firings: rs_driver's test counted a frame of 900, the
  // emulator's whole-column frames take the nearest, 901 (1199.4 rpm).
  const int at_1200 = make_rpm_scan(rs32, 1200).pattern->columns_per_frame;
  CHECK((at_1200 == 900 || at_1200 == 901));
  const auto rs16_encoder = make_encoder(*make_rpm_scan(rs16, 600).pattern, {});
  const auto rs32_encoder = make_encoder(*make_rpm_scan(rs32, 600).pattern, {});
  CHECK(1.0 / rs16_encoder->data_packet_period_s() == Approx(750.75).margin(0.01));
  CHECK(1.0 / rs32_encoder->data_packet_period_s() == Approx(1501.0).margin(0.1));
  const auto rs16_dual = make_encoder(*make_rpm_scan(rs16, 600).pattern, {}, ReturnMode::kDual);
  CHECK(1.0 / rs16_dual->data_packet_period_s() == Approx(1501.5).margin(0.01));
}

TEST_CASE("RS-LiDAR-16 and -32 DIFOP angles: the sheet's examples, as rs_driver keeps them",
          "[format][robosense]") {
  // RS-32: "01 28 29" is -10.281 degrees; rs_driver keeps round(v x 0.1) = -1028 hundredths.
  const SensorModel& rs32 = *find_sensor_model("rs32");
  auto rs32_difop = hand_made_difop(0x01);
  rs32_difop[468] = 0x01;
  rs32_difop[469] = 0x28;
  rs32_difop[470] = 0x29;
  put_be(rs32_difop, 564 + 3 * 5 + 1, 2, 3572);  // channel 5 horizontal +3.572: 357 hundredths
  robosense::DifopInfo info;
  REQUIRE(robosense::read_difop(rs32_difop, robosense::kRs32, info) ==
          robosense::DifopError::kNone);
  CHECK(info.vertical_cdeg[0] == -1028);
  CHECK(info.horizontal_cdeg[5] == 357);
  auto uncalibrated = rs32_difop;
  uncalibrated[468 + 3 * 31] = 0xFF;
  CHECK(robosense::read_difop(uncalibrated, robosense::kRs32, info) ==
        robosense::DifopError::kUncalibrated);
  // The emulated DIFOP: channel 0's -10.264 degrees as 01 28 18.
  const auto emitted = robosense::difop_packet(rs32, 600, 0x01, 0, {});
  CHECK(std::vector<int>(emitted.begin() + 468, emitted.begin() + 471) ==
        std::vector<int>{0x01, 0x28, 0x18});

  // RS-16: "00 27 10" is 1.0000 degree, "00 3A 98" 1.5; lasers 0-7 point down (negated);
  // rs_driver truncates to hundredths.
  const SensorModel& rs16 = *find_sensor_model("rs16");
  auto rs16_difop = hand_made_difop(0x01);
  const auto pitch_of = [](std::size_t channel) { return 1165 + 3 * channel; };
  put_be(rs16_difop, pitch_of(0), 3, 0x003A98);
  put_be(rs16_difop, pitch_of(8), 3, 0x002710);
  put_be(rs16_difop, pitch_of(9), 3, 149999);  // 14.9999 degrees: 1499 hundredths kept
  REQUIRE(robosense::read_difop(rs16_difop, robosense::kRs16, info) ==
          robosense::DifopError::kNone);
  CHECK(info.vertical_cdeg[0] == -150);
  CHECK(info.vertical_cdeg[8] == 100);
  CHECK(info.vertical_cdeg[9] == 1499);
  CHECK(info.horizontal_cdeg[0] == 0);
  // The emulated DIFOP: channel 0's -14.9994 degrees as the magnitude 149994 = 02 49 EA, and
  // nothing where the Helios and RS-32 keep their angle tables.
  const auto emitted16 = robosense::difop_packet(rs16, 600, 0x01, 0, {});
  CHECK(std::vector<int>(emitted16.begin() + 1165, emitted16.begin() + 1168) ==
        std::vector<int>{0x02, 0x49, 0xEA});
  CHECK(std::all_of(emitted16.begin() + 468, emitted16.begin() + 1165,
                    [](std::uint8_t b) { return b == 0; }));
  CHECK(emitted16[1246] == 0x0F);
  CHECK(emitted16[1247] == 0xF0);
}

TEST_CASE("RS-LiDAR-16 spec decoder: two firings a block, placed as rs_driver places them",
          "[format][robosense]") {
  const SensorModel& rs16 = *find_sensor_model("rs16");
  robosense::SpecDecoder decoder(rs16);
  auto difop = hand_made_difop(0x01);     // strongest
  put_be(difop, 1165 + 3 * 3, 3, 69734);  // channel 3: -6.9734 degrees, kept as -697 hundredths
  REQUIRE(decoder.on_difop(difop) == robosense::DifopError::kNone);
  CHECK_FALSE(decoder.dual());
  // Blocks 40 hundredths apart (two firings of about 0.2 degree); block 0's slot 19 is laser 3 of
  // its second firing, 2000 x 5 mm = 10 m.
  auto msop = hand_made_msop(1000, 40);
  put_be(msop, 42 + 4 + 3 * 19, 2, 2000);
  msop[42 + 4 + 3 * 19 + 2] = 99;
  put_be(msop, 42 + 100 * 11 + 4 + 3 * 3, 2, 2000);  // the last block's first firing, laser 3
  std::vector<robosense::Point> points;
  robosense::PacketInfo info;
  REQUIRE(decoder.decode(msop, points, &info) == robosense::DecodeError::kNone);
  CHECK(info.time_s == Approx(kPacketTime).margin(1e-7));
  REQUIRE(points.size() == 2);
  const auto& second = points[0];
  CHECK(second.channel == 3);
  CHECK(second.firing == 1);
  CHECK(second.echo == 0);
  CHECK(second.intensity == 99);
  CHECK(second.distance_m == Approx(10.0));
  // rs_driver: block_az + floor(delta x t_slot / 111.0 us), t_slot = 55.5 + 2.8 x 3 us:
  // 1000 + floor(40 x 63.9 / 111) = 1023 hundredths; its time the block's plus t_slot.
  const double h = 1023 * kRadPerCdeg, v = -697 * kRadPerCdeg;
  CHECK(second.x == Approx(10 * std::cos(v) * std::cos(h) + 0.03825 * std::cos(h)).margin(1e-5));
  CHECK(second.y == Approx(-10 * std::cos(v) * std::sin(h) - 0.03825 * std::sin(h)).margin(1e-5));
  CHECK(second.z == Approx(10 * std::sin(v)).margin(1e-5));
  CHECK(second.time_s == Approx(kPacketTime + 63.9e-6).margin(1e-7));
  // The last block: the nominal step, round(36000 x 10 x 55.5 us) x 2 = 40, turns laser 3 by
  // floor(40 x 8.4 / 111) = 3; eleven blocks of 111 us on.
  const auto& last = points[1];
  CHECK(last.block == 11);
  CHECK(last.firing == 0);
  // (No horizontal offset: the point and the lens centre lie along the same azimuth.)
  CHECK(std::atan2(-last.y, last.x) / kRadPerCdeg == Approx(1443).margin(0.02));
  CHECK(last.time_s == Approx(kPacketTime + 11 * 111e-6 + 8.4e-6).margin(1e-7));

  // Dual (0x00): slots 0-15 and 16-31 are the two echoes of one firing, same azimuth and time;
  // blocks 55.5 us apart, the turn floor(delta x t_laser / 55.5 us).
  robosense::SpecDecoder dual(rs16);
  REQUIRE(dual.on_difop(hand_made_difop(0x00)) == robosense::DifopError::kNone);
  CHECK(dual.dual());
  auto dual_msop = hand_made_msop(1000, 20);
  put_be(dual_msop, 42 + 100 * 2 + 4 + 3 * 3, 2, 2000);
  put_be(dual_msop, 42 + 100 * 2 + 4 + 3 * 19, 2, 3000);
  points.clear();
  REQUIRE(dual.decode(dual_msop, points) == robosense::DecodeError::kNone);
  REQUIRE(points.size() == 2);
  CHECK(points[0].echo == 0);
  CHECK(points[1].echo == 1);
  CHECK(points[0].channel == 3);
  CHECK(points[1].channel == 3);
  CHECK(points[0].time_s == points[1].time_s);
  CHECK(points[0].time_s == Approx(kPacketTime + 2 * 55.5e-6 + 8.4e-6).margin(1e-7));
  CHECK(points[1].distance_m == Approx(15.0));
}

TEST_CASE("RS-LiDAR-32 spec decoder: one firing a block, rs_driver's slot 15 and 31 times",
          "[format][robosense]") {
  const SensorModel& rs32 = *find_sensor_model("rs32");
  robosense::SpecDecoder decoder(rs32);
  REQUIRE(decoder.on_difop(robosense::difop_packet(rs32, 600, 0x02, 0, {})) ==
          robosense::DifopError::kNone);
  auto msop = hand_made_msop(0, 20);
  put_be(msop, 42 + 100 * 4 + 4 + 3 * 31, 2, 1000);  // block 4, slot 31: fires 46.08 us in
  std::vector<robosense::Point> points;
  REQUIRE(decoder.decode(msop, points) == robosense::DecodeError::kNone);
  REQUIRE(points.size() == 1);
  CHECK(points[0].channel == 31);
  CHECK(points[0].distance_m == Approx(5.0));
  CHECK(points[0].time_s == Approx(kPacketTime + 4 * 55.52e-6 + 46.08e-6).margin(1e-7));
}

TEST_CASE("RS-LiDAR-16 encoder: two columns a block in single return, two echoes in dual",
          "[format][robosense]") {
  const SensorModel& rs16 = *find_sensor_model("rs16");
  const auto pattern = *make_rpm_scan(rs16, 600).pattern;
  CHECK(pattern.columns_per_frame == 1802);  // 60 / 600 / 55.5 us
  FrameReturns returns;
  returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 16});
  // Column 0 at 10 m, column 1 at 20 m, every channel.
  for (std::uint16_t ch = 0; ch < 16; ++ch) {
    returns.range_m[returns.slot(returns.shape.beam(0, ch), 0)] = 10.0F;
    returns.range_m[returns.slot(returns.shape.beam(1, ch), 0)] = 20.0F;
  }
  struct Keep final : PacketSink {
    std::vector<std::vector<std::uint8_t>> data;
    void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes, double) override {
      if (channel == PacketChannel::kData) data.emplace_back(bytes.begin(), bytes.end());
    }
  };
  Keep single;
  robosense::RoboSenseEncoder encoder(pattern, {}, ReturnMode::kStrongest);
  encoder.encode_frame(returns, 1000.0, single);
  encoder.flush(single);
  REQUIRE(!single.data.empty());
  const auto& first = single.data[0];
  CHECK(first[30] == 0x01);
  CHECK(load_be(first, 42, 2) == 0xFFEE);
  CHECK(load_be(first, 44, 2) == 0);                    // column 0's azimuth heads block 0
  CHECK(load_be(first, 46 + 3 * 5, 2) == 2000);         // slot 5: column 0, 10 m in 5 mm
  CHECK(load_be(first, 46 + 3 * (16 + 5), 2) == 4000);  // slot 21: column 1, 20 m
  // Block 1 holds columns 2 and 3: azimuth 2 x 36000 / 1802, rounded.
  CHECK(load_be(first, 142 + 2, 2) == 40);
  CHECK(single.data.size() == (1802 + 23) / 24);

  Keep dual_sink;
  robosense::RoboSenseEncoder dual(pattern, {}, ReturnMode::kDual);
  dual.encode_frame(returns, 1000.0, dual_sink);
  dual.flush(dual_sink);
  REQUIRE(!dual_sink.data.empty());
  const auto& d = dual_sink.data[0];
  CHECK(load_be(d, 46 + 3 * 5, 2) == 2000);         // the strongest echo
  CHECK(load_be(d, 46 + 3 * (16 + 5), 2) == 2000);  // the other: the same, with one echo
  CHECK(load_be(d, 142 + 2, 2) == 20);              // block 1 is column 1
  CHECK(load_be(d, 142 + 4 + 3 * 5, 2) == 4000);
  CHECK(dual_sink.data.size() == (1802 + 11) / 12);
}
