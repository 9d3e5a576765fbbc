// RoboSense: the format tables against the offsets the facts state, the spec decoder against
// packets built here byte by byte from those facts (no RoboSense capture is among the data), the
// DIFOP gate rs_driver keeps, and the encoder checked by decoding what it emits.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>

#include "cloud_match.hpp"
#include "demo_frame.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/utc.hpp"

using namespace lidaremu::core;
using lidaremu::test::median;
using lidaremu::test::XYZ;

namespace {

class KeepingSink final : public PacketSink {
 public:
  std::vector<std::vector<std::uint8_t>> data, difop;
  std::vector<double> data_times, difop_times;
  std::vector<PacketChannel> order;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    order.push_back(channel);
    auto& kept = channel == PacketChannel::kData ? data : difop;
    kept.emplace_back(bytes.begin(), bytes.end());
    (channel == PacketChannel::kData ? data_times : difop_times).push_back(sensor_time_s);
  }
};

// 2026-11-25 12:00:00 UTC.
constexpr double kFrameStart = 1795608000.0;
constexpr double kRadPerCdeg = std::numbers::pi / 18000.0;

void put_be(std::vector<std::uint8_t>& p, std::size_t at, std::size_t bytes, std::uint64_t v) {
  for (std::size_t i = 0; i < bytes; ++i) {
    p[at + bytes - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
}

// A Helios DIFOP written from the facts sheet's table: every angle 0 but channel 3's, vertical
// -5.33 degrees (sign byte 1), horizontal +0.50.
std::vector<std::uint8_t> hand_made_helios_difop(std::uint8_t return_mode) {
  std::vector<std::uint8_t> p(1248, 0);
  const std::array<std::uint8_t, 8> id{0xA5, 0xFF, 0x00, 0x5A, 0x11, 0x11, 0x55, 0x55};
  std::copy(id.begin(), id.end(), p.begin());
  put_be(p, 8, 2, 600);  // rpm
  put_be(p, 34, 2, 36000);
  p[300] = return_mode;
  p[468 + 3 * 3] = 1;
  put_be(p, 468 + 3 * 3 + 1, 2, 533);
  put_be(p, 564 + 3 * 3 + 1, 2, 50);
  return p;
}

}  // namespace

TEST_CASE("RoboSense tables: the offsets FORMATS-HESAI-ROBOSENSE.md and rs_driver state",
          "[format][robosense]") {
  using namespace robosense;
  CHECK(kPacketSize == 1248);
  CHECK(block_at(0) == 42);
  CHECK(block_at(1) - block_at(0) == 100);
  CHECK(record_at(0, 0) == 46);
  CHECK(record_at(11, 31) + 3 == 1242);
  CHECK(kTailAt == 1246);
  CHECK(kDifopId == std::array<std::uint8_t, 8>{0xA5, 0xFF, 0x00, 0x5A, 0x11, 0x11, 0x55, 0x55});
  for (const ModelFormat* f : kModelFormats) {
    INFO(f->model);
    const DifopFormat& d = f->difop;
    CHECK(d.rpm_at == 8);
    CHECK(d.lidar_ip_at == 10);
    CHECK(d.fov_start_at == 32);
    CHECK(d.fov_end_at == 34);
    CHECK(d.phase_lock_at == 38);
    CHECK(d.serial_at == 292);
    CHECK(d.zero_angle_at == 298);
    CHECK(d.return_mode_at == 300);
    CHECK(d.time_at == 303);
    CHECK(d.gprmc_at == 382);
    CHECK(d.gprmc_at + d.gprmc_bytes == 468);
    if (d.angle_form != AngleForm::kPitch16) {  // RS-LiDAR-16: test_robosense_rs16_rs32
      CHECK(d.vertical_at == 468);
      CHECK(d.horizontal_at == 564);
      CHECK(d.horizontal_at + 32 * kAngleBytes + 586 == kTailAt);  // 586 reserved bytes
    }
    CHECK(f->msop.time_at == 20);
    CHECK(f->msop.temperature_at == 38);
  }
  CHECK(kHelios.distance_unit_m == 0.0025);
  CHECK(kBpearl.distance_unit_m == 0.0025);
  CHECK(kBpearlV3.distance_unit_m == 0.005);  // rs_driver's v3: 0.5 cm
  // Helios: 4-byte MSOP id, nebula's range-resolution byte 17 = 1 (2.5 mm), time-sync bytes.
  CHECK(kHelios.msop.id_bytes == 4);
  CHECK(std::equal(kHelios.msop.id.begin(), kHelios.msop.id.begin() + 4,
                   std::array<std::uint8_t, 4>{0x55, 0xAA, 0x05, 0x5A}.begin()));
  CHECK(kHelios.msop.fixed[0].offset == 17);
  CHECK(kHelios.msop.fixed[0].value == 1);
  CHECK(kHelios.difop.sync_mode_at == 301);
  CHECK(kHelios.difop.sync_status_at == 302);
  // Bpearl v4: the 8-byte id, lidar type 0x03 at 31 and model 0x04 at 32 (rs_driver's v4 test).
  CHECK(kBpearl.msop.id_bytes == 8);
  CHECK(kBpearl.msop.id ==
        std::array<std::uint8_t, 8>{0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0});
  CHECK(kBpearl.msop.fixed[0].offset == 31);
  CHECK(kBpearl.msop.fixed[0].value == 0x03);
  CHECK(kBpearl.msop.fixed[1].offset == 32);
  CHECK(kBpearl.msop.fixed[1].value == 0x04);
  CHECK(kBpearl.difop.time_form == TimeForm::kYmd);
  // Bpearl v3: the same id, neither v4 byte (so both drivers take it for a v3), YMD time.
  CHECK(kBpearlV3.msop.id == kBpearl.msop.id);
  CHECK(kBpearlV3.msop.fixed[0].offset == 0);
  CHECK(kBpearlV3.msop.time_form == TimeForm::kYmd);
}

TEST_CASE("RoboSense spec decoder: a packet built from the facts, placed as rs_driver places it",
          "[format][robosense]") {
  const SensorModel& helios = *find_sensor_model("rs-helios");
  robosense::SpecDecoder decoder(helios);
  // MSOP: id, time 1700000000 s + 123456 us, temperature 45 degC, 12 blocks 20 hundredths apart
  // from 123.45 degrees; channel 3 of block 5 at 4000 x 2.5 mm = 10 m, intensity 77.
  std::vector<std::uint8_t> msop(1248, 0);
  const std::array<std::uint8_t, 4> id{0x55, 0xAA, 0x05, 0x5A};
  std::copy(id.begin(), id.end(), msop.begin());
  put_be(msop, 20, 6, 1700000000);
  put_be(msop, 26, 4, 123456);
  msop[38] = 0x80;  // 45 degC = 720 x 0.0625: low 5 bits (16) << 3, then 720 >> 5 = 22
  msop[39] = 22;
  for (int block = 0; block < 12; ++block) {
    const std::size_t at = 42 + 100 * static_cast<std::size_t>(block);
    msop[at] = 0xFF;
    msop[at + 1] = 0xEE;
    put_be(msop, at + 2, 2, 12345 + 20 * static_cast<std::uint64_t>(block));
  }
  const std::size_t record = 42 + 100 * 5 + 4 + 3 * 3;
  put_be(msop, record, 2, 4000);
  msop[record + 2] = 77;

  std::vector<robosense::Point> points;
  // Nothing before a DIFOP, as rs_driver with wait_for_difop.
  CHECK(decoder.decode(msop, points) == robosense::DecodeError::kNoDifop);
  CHECK(points.empty());
  // DIFOPs rs_driver refuses leave the decoder waiting.
  auto difop = hand_made_helios_difop(0x04);
  auto short_difop = difop;
  short_difop.pop_back();
  CHECK(decoder.on_difop(short_difop) == robosense::DifopError::kWrongSize);
  auto bad_id = difop;
  bad_id[3] = 0x5B;
  CHECK(decoder.on_difop(bad_id) == robosense::DifopError::kBadId);
  auto uncalibrated = difop;
  uncalibrated[564 + 3 * 7] = 0xFF;
  CHECK(decoder.on_difop(uncalibrated) == robosense::DifopError::kUncalibrated);
  auto out_of_range = difop;
  put_be(out_of_range, 468 + 1, 2, 18000);  // +180 degrees: past rs_driver's [-90, 180)
  CHECK(decoder.on_difop(out_of_range) == robosense::DifopError::kAngleOutOfRange);
  CHECK(decoder.decode(msop, points) == robosense::DecodeError::kNoDifop);

  REQUIRE(decoder.on_difop(difop) == robosense::DifopError::kNone);
  CHECK_FALSE(decoder.dual());
  robosense::PacketInfo info;
  REQUIRE(decoder.decode(msop, points, &info) == robosense::DecodeError::kNone);
  CHECK(info.time_s == Approx(1700000000.123456).margin(1e-7));
  CHECK(info.temperature_c == 45.0);
  REQUIRE(points.size() == 1);
  const auto& p = points[0];
  CHECK(p.channel == 3);
  CHECK(p.block == 5);
  CHECK(p.intensity == 77);
  CHECK(p.distance_m == Approx(10.0));
  // rs_driver: the block azimuth 12445 moved on by trunc(20 x 5.19 / 55.56) = 1 hundredth
  // (channel 3 fires 5.19 us into its block), then the horizontal +0.50 added; the lens centre
  // (RX 34.98 mm) out along the unturned-by-calibration azimuth.
  const double h = 12446 * kRadPerCdeg, hf = 12496 * kRadPerCdeg, v = -533 * kRadPerCdeg;
  CHECK(p.x == Approx(10 * std::cos(v) * std::cos(hf) + 0.03498 * std::cos(h)).margin(1e-5));
  CHECK(p.y == Approx(-10 * std::cos(v) * std::sin(hf) - 0.03498 * std::sin(h)).margin(1e-5));
  CHECK(p.z == Approx(10 * std::sin(v)).margin(1e-5));
  // Its time: the header's, five blocks of 55.56 us, and the channel's 5.19 us.
  CHECK(p.time_s == Approx(1700000000.123456 + 5 * 55.56e-6 + 5.19e-6).margin(1e-7));

  // Malformed MSOP packets are errors, never points.
  auto wrong_id = msop;
  wrong_id[2] = 0x06;
  CHECK(decoder.decode(wrong_id, points) == robosense::DecodeError::kBadId);
  auto wrong_size = msop;
  wrong_size.resize(1247);
  CHECK(decoder.decode(wrong_size, points) == robosense::DecodeError::kWrongSize);
  auto wrong_flag = msop;
  wrong_flag[42 + 100 * 7] = 0xFE;
  CHECK(decoder.decode(wrong_flag, points) == robosense::DecodeError::kBadBlockFlag);
  auto wrong_time = msop;
  put_be(wrong_time, 26, 4, 1'000'000);
  CHECK(decoder.decode(wrong_time, points) == robosense::DecodeError::kBadTime);

  // In dual mode (return mode 0x00) blocks pair up: both of a pair at the pair's time.
  robosense::SpecDecoder dual_decoder(helios);
  REQUIRE(dual_decoder.on_difop(hand_made_helios_difop(0x00)) == robosense::DifopError::kNone);
  CHECK(dual_decoder.dual());
  points.clear();
  REQUIRE(dual_decoder.decode(msop, points) == robosense::DecodeError::kNone);
  REQUIRE(points.size() == 1);
  CHECK(points[0].time_s == Approx(1700000000.123456 + 2 * 55.56e-6 + 5.19e-6).margin(1e-7));
}

TEST_CASE("RoboSense Bpearl v3: the YMD time and 5 mm distances rs_driver reads",
          "[format][robosense]") {
  const SensorModel& v3 = *find_sensor_model("rs-bpearl-v3");
  robosense::SpecDecoder decoder(v3);
  auto difop = robosense::difop_packet(v3, 600, 0x01, 0, {});
  REQUIRE(decoder.on_difop(difop) == robosense::DifopError::kNone);
  // 2026-11-25 12:00:00, 250 ms, 7 us, as year-2000, month, day, hour, minute, second, ms, us.
  std::vector<std::uint8_t> msop(1248, 0);
  const std::array<std::uint8_t, 8> id{0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0};
  std::copy(id.begin(), id.end(), msop.begin());
  const std::array<std::uint8_t, 10> ymd{26, 11, 25, 12, 0, 0, 0, 250, 0, 7};
  std::copy(ymd.begin(), ymd.end(), msop.begin() + 20);
  for (int block = 0; block < 12; ++block) {
    const std::size_t at = 42 + 100 * static_cast<std::size_t>(block);
    msop[at] = 0xFF;
    msop[at + 1] = 0xEE;
    put_be(msop, at + 2, 2, 20 * static_cast<std::uint64_t>(block));
  }
  put_be(msop, 42 + 4 + 3 * 16, 2, 2000);  // block 0, channel 16: 2000 x 5 mm = 10 m
  std::vector<robosense::Point> points;
  robosense::PacketInfo info;
  REQUIRE(decoder.decode(msop, points, &info) == robosense::DecodeError::kNone);
  CHECK(info.time_s == Approx(kFrameStart + 0.250007).margin(1e-7));
  REQUIRE(points.size() == 1);
  CHECK(points[0].distance_m == Approx(10.0));
  // Channel 16 fires 1.28 us into the block (the second interleaved group).
  CHECK(points[0].time_s == Approx(kFrameStart + 0.250007 + 1.28e-6).margin(1e-7));
  auto month_13 = msop;
  month_13[21] = 13;
  CHECK(decoder.decode(month_13, points) == robosense::DecodeError::kBadTime);
  // The time reader the bench tells frames by reads the same form (it once read UTC here).
  const auto& v3_format = *robosense::find_model_format("rs-bpearl-v3");
  REQUIRE(robosense::msop_time_s(msop, v3_format).has_value());
  CHECK(*robosense::msop_time_s(msop, v3_format) == Approx(kFrameStart + 0.250007).margin(1e-7));
  CHECK_FALSE(robosense::msop_time_s(month_13, v3_format).has_value());
  CHECK_FALSE(robosense::msop_time_s(difop, v3_format).has_value());
  CHECK_FALSE(robosense::msop_time_s(std::span(msop).first(1247), v3_format).has_value());
  // The emulated v3 writes the same form: its packets' time read back.
  const auto pattern = *make_rpm_scan(v3, 600).pattern;
  FrameReturns returns;
  returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 32});
  KeepingSink sink;
  robosense::RoboSenseEncoder encoder(pattern, {}, ReturnMode::kStrongest);
  encoder.encode_frame(returns, kFrameStart + 0.25, sink);
  REQUIRE(!sink.data.empty());
  CHECK(std::vector<int>(sink.data[0].begin() + 20, sink.data[0].begin() + 30) ==
        std::vector<int>{26, 11, 25, 12, 0, 0, 0, 250, 0, 0});
  CHECK(sink.data[0][31] == 0);  // no v4 type / model bytes
  CHECK(sink.data[0][32] == 0);
}

TEST_CASE("RoboSense DIFOP: what the emulated unit says about itself", "[format][robosense]") {
  SensorIdentity identity;
  identity.serial_number = 0x0000123456789ABCULL;
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kRoboSense) continue;
    INFO(model->name);
    const robosense::ModelFormat& format = *model->robosense.format;
    for (const auto& mode : model->robosense.return_modes) {
      const auto packet =
          robosense::difop_packet(*model, 1200, mode.difop_code, kFrameStart + 0.25, identity);
      robosense::DifopInfo info;
      REQUIRE(robosense::read_difop(packet, format, info) == robosense::DifopError::kNone);
      CHECK(info.rpm == 1200);
      CHECK(info.return_mode == mode.difop_code);
      CHECK(info.fov_start_cdeg == 0);
      CHECK(info.fov_end_cdeg == 36000);
      CHECK(info.msop_port == 6699);
      CHECK(info.difop_port == 7788);
      CHECK(info.serial == std::array<std::uint8_t, 6>{0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC});
      // UTC seconds and microseconds (Helios) or YMD with ms and us (Bpearl): the same instant.
      CHECK(info.time_s == Approx(kFrameStart + 0.25).margin(1e-6));
      CHECK(info.gprmc.rfind("$GPRMC,120000", 0) == 0);
      CHECK(packet[1246] == 0x0F);
      CHECK(packet[1247] == 0xF0);
      // The angles as rs_driver keeps them (0.01 degree): rounded from the DIFOP's 0.01 or
      // 0.001 degree, the RS-LiDAR-16's 0.0001-degree pitch truncated.
      const auto kept_cdeg = [&](double degrees) {
        switch (format.difop.angle_form) {
          case robosense::AngleForm::kSignedCdeg:
            return static_cast<int>(std::lround(degrees * 100));
          case robosense::AngleForm::kSignedMdeg:
            return static_cast<int>(std::round(std::round(degrees * 1000) * 0.1));
          case robosense::AngleForm::kPitch16:
            return static_cast<int>(std::trunc(std::round(degrees * 1e4) * 0.01));
        }
        return 0;
      };
      for (int ch = 0; ch < model->channels; ++ch) {
        const auto c = static_cast<std::size_t>(ch);
        CHECK(info.vertical_cdeg[c] == kept_cdeg(model->elevation_deg[c]));
        CHECK(info.horizontal_cdeg[c] == kept_cdeg(model->azimuth_offset_deg[c]));
      }
    }
  }
  // The unit's own address, destination and ports when it knows them; RoboSense's defaults when
  // not.
  SensorIdentity placed = identity;
  placed.address = 0x7F000003;      // 127.0.0.3
  placed.destination = 0x7F000001;  // 127.0.0.1
  placed.data_port = 6700;
  placed.telemetry_port = 7789;
  const auto helios = robosense::difop_packet(*find_sensor_model("rs-helios"), 600, 4, 0, placed);
  CHECK(std::vector<int>(helios.begin() + 10, helios.begin() + 18) ==
        std::vector<int>{127, 0, 0, 3, 127, 0, 0, 1});
  robosense::DifopInfo placed_info;
  REQUIRE(robosense::read_difop(helios, robosense::kHelios, placed_info) ==
          robosense::DifopError::kNone);
  CHECK(placed_info.msop_port == 6700);
  CHECK(placed_info.difop_port == 7789);
  const auto unplaced = robosense::difop_packet(*find_sensor_model("rs-helios"), 600, 4, 0, {});
  CHECK(std::vector<int>(unplaced.begin() + 10, unplaced.begin() + 18) ==
        std::vector<int>{192, 168, 1, 200, 255, 255, 255, 255});
  // The Bpearl's YMD bytes, one by one: 26 11 25 12 00 00, then 250 ms, 0 us.
  const auto bpearl =
      robosense::difop_packet(*find_sensor_model("rs-bpearl"), 600, 0, kFrameStart + 0.25, {});
  CHECK(std::vector<int>(bpearl.begin() + 303, bpearl.begin() + 313) ==
        std::vector<int>{26, 11, 25, 12, 0, 0, 0, 250, 0, 0});
  // The temperature field as rs_driver reads it.
  for (const double c : {45.0, -12.5, 0.0625, 80.0}) {
    CHECK(robosense::temperature_of(robosense::temperature_bytes(c)) == c);
  }
  // rs_driver's angle.csv: "vertical,horizontal" a line.
  const std::string csv = robosense::angle_csv(*find_sensor_model("rs-helios"));
  CHECK(csv.rfind("15,0\n13,0\n11,0\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 32);
}

TEST_CASE("Every RoboSense model and return mode: sizes, cadence, DIFOP first, round trip",
          "[format][robosense][registry]") {
  int models = 0;
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kRoboSense) continue;
    ++models;
    for (const ReturnMode echoes : {ReturnMode::kFirst, ReturnMode::kStrongest, ReturnMode::kLast,
                                    ReturnMode::kDual, ReturnMode::kFirstLast}) {
      const auto* mode = model->robosense.return_mode(echoes);
      if (mode == nullptr) {
        CHECK(make_encoder(*make_rpm_scan(*model, 600).pattern, {}, echoes) == nullptr);
        continue;
      }
      for (int rpm = model->spin.min_rpm; rpm <= model->spin.max_rpm; rpm += model->spin.rpm_step) {
        INFO(model->name << " " << return_mode_name(echoes) << " at " << rpm << " rpm");
        const bool dual = reports_two_echoes(echoes);
        const auto pattern = *make_rpm_scan(*model, rpm).pattern;
        // A firing every 55.56 us: 1800 columns a turn at 600 rpm (0.2 degree); the v3's and the
        // RS-LiDAR-32's 55.52 us make 1801, the RS-LiDAR-16's 55.5 us 1802.
        const double block_us = model->robosense.block_period_us;
        CHECK(pattern.columns_per_frame == std::lround(60.0 / rpm / (block_us * 1e-6)));
        auto frame = lidaremu::test::demo_frame(pattern, echoes);
        KeepingSink sink;
        auto encoder = make_encoder(pattern, {}, echoes);
        REQUIRE(encoder);
        encoder->encode_frame(frame.returns, kFrameStart, sink);
        encoder->flush(sink);
        // The DIFOP comes before any MSOP packet; one in a 0.1-0.2 s frame.
        REQUIRE_FALSE(sink.order.empty());
        CHECK(sink.order.front() == PacketChannel::kTelemetry);
        REQUIRE(sink.difop.size() == 1);
        robosense::SpecDecoder decoder(*model);
        REQUIRE(decoder.on_difop(sink.difop[0]) == robosense::DifopError::kNone);
        CHECK(decoder.difop().return_mode == mode->difop_code);
        CHECK(decoder.difop().rpm == rpm);
        CHECK(decoder.dual() == dual);
        // 12 columns a packet (6 in dual): 150 packets a turn at 600 rpm, 300 in dual; the
        // RS-LiDAR-16 packs two firings a block: 24 (12 in dual).
        const int firings_per_block = model->robosense.format->firings_per_block;
        const int columns_per_packet = (dual ? 6 : 12) * firings_per_block;
        CHECK(sink.data.size() ==
              static_cast<std::size_t>((pattern.columns_per_frame + columns_per_packet - 1) /
                                       columns_per_packet));
        std::vector<robosense::Point> points;
        std::vector<double> steps_us;
        double previous_time = 0;
        for (std::size_t i = 0; i < sink.data.size(); ++i) {
          const auto& packet = sink.data[i];
          REQUIRE(packet.size() == 1248);
          CHECK(load_be(packet, 1246, 2) == 0x00FF);
          robosense::PacketInfo info;
          REQUIRE(decoder.decode(packet, points, &info) == robosense::DecodeError::kNone);
          // The header's time is the packet's first block's.
          CHECK(info.time_s == Approx(kFrameStart + static_cast<double>(i) * columns_per_packet *
                                                        pattern.column_period_s)
                                   .margin(1.5e-6));
          if (i > 0) steps_us.push_back((info.time_s - previous_time) * 1e6);
          previous_time = info.time_s;
        }
        CHECK(median(steps_us) == Approx(columns_per_packet * block_us).margin(1.0));
        // One point per hit (dual: the one echo in both blocks), each on its hit within half
        // the range quantum and the angle rs_driver loses: none where the model's angles are
        // whole hundredths of a degree (Helios, Bpearl); the RS-LiDAR-32's 0.001 degree rounded
        // to 0.01 (0.005 on each axis), the RS-LiDAR-16's pitch truncated (0.01), and its second
        // firing in a block turned by half the two firings' step (0.01).
        const double lost_deg = model->name == "rs16"   ? 0.005 + 0.01 + 0.01
                                : model->name == "rs32" ? 0.005 + 0.0075
                                                        : 0.005;
        CHECK(points.size() == frame.hits.size() * (dual ? 2 : 1));
        std::vector<XYZ> decoded;
        decoded.reserve(points.size());
        for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
        const auto distances = lidaremu::test::nearest_distances(decoded, frame.hits);
        std::size_t off = 0;
        for (std::size_t i = 0; i < distances.size(); ++i) {
          off += distances[i] >
                 model->range_unit_m / 2 + 1e-4 + points[i].distance_m * lost_deg * M_PI / 180;
        }
        CHECK(off == 0);
        CHECK(median(distances) < model->range_unit_m / 2 + 0.0005);
      }
    }
  }
  CHECK(models == 5);
}

TEST_CASE("RoboSense dual return: the strongest first, then the last or second strongest",
          "[format][robosense]") {
  const SensorModel& model = *find_sensor_model("rs-helios");
  const auto pattern = *make_rpm_scan(model, 600).pattern;
  FrameReturns returns;
  returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 32});
  const auto put = [&](std::uint16_t ch, int echo, float range, std::uint8_t reflectivity) {
    const std::size_t slot = returns.slot(returns.shape.beam(0, ch), echo);
    returns.range_m[slot] = range;
    returns.reflectivity[slot] = reflectivity;
  };
  put(0, 0, 20.0f, 200);  // strongest nearer, last behind it
  put(0, 1, 30.0f, 20);
  put(1, 0, 30.0f, 200);  // the strongest is the last: the second strongest nearer
  put(1, 1, 20.0f, 20);
  put(2, 0, 12.0f, 90);  // one echo: both blocks carry it
  KeepingSink sink;
  robosense::RoboSenseEncoder encoder(pattern, {}, ReturnMode::kDual);
  encoder.encode_frame(returns, kFrameStart, sink);
  REQUIRE(!sink.data.empty());
  const auto& p = sink.data[0];
  const auto range = [&](int block, int ch) {
    return static_cast<double>(load_be(p, robosense::record_at(block, ch), 2)) * 0.0025;
  };
  CHECK(load_be(p, robosense::block_at(0) + 2, 2) == load_be(p, robosense::block_at(1) + 2, 2));
  CHECK(range(0, 0) == Approx(20.0));
  CHECK(range(1, 0) == Approx(30.0));
  CHECK(range(0, 1) == Approx(30.0));
  CHECK(range(1, 1) == Approx(20.0));
  CHECK(range(0, 2) == Approx(12.0));
  CHECK(range(1, 2) == Approx(12.0));
  CHECK(p[robosense::record_at(0, 0) + 2] == 200);
  CHECK(p[robosense::record_at(1, 0) + 2] == 20);
}
