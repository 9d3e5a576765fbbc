// Velodyne: the spec decoder checked on real captures first, then the encoder checked by
// decoding what it emits with it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "cloud_match.hpp"
#include "daemon_process.hpp"
#include "demo_frame.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/utc.hpp"
#include "lidaremu/core/velodyne.hpp"

using namespace lidaremu::core;

using lidaremu::test::demo_frame;
using lidaremu::test::DemoFrame;
using lidaremu::test::median;
using lidaremu::test::nearest_distances;
using lidaremu::test::read_pcd_xyz;
using lidaremu::test::XYZ;

TEST_CASE("Velodyne spec decoder reproduces nebula's ground truth on real captures",
          "[format][velodyne][real]") {
  struct Capture {
    const char* model;
    const char* pcap;
    const char* truth;
    int packets;
    std::size_t truth_points;
    std::uint8_t return_mode;
    std::uint8_t product_id;
    double share_within_5cm;
  };
  for (const Capture& c :
       {Capture{"vlp16", "velodyne/vlp16_dual.pcap", "velodyne/vlp16_dual_ground_truth.pcd", 603,
                14831, velodyne::kDual, 0x22, 0.95},
        Capture{"vlp32c", "velodyne/vlp32c_strongest.pcap", "velodyne/vlp32c_ground_truth.pcd", 379,
                26216, velodyne::kStrongest, 0x28, 0.95},
        Capture{"vls128", "velodyne/vls128_strongest.pcap", "velodyne/vls128_ground_truth.pcd",
                2193, 208680, velodyne::kStrongest, 0xA1, 0.85}}) {
    INFO(c.model);
    const SensorModel& model = *find_sensor_model(c.model);
    velodyne::SpecDecoder decoder(model);
    PcapReader pcap(lidaremu::test::data_path(c.pcap));
    std::vector<velodyne::Point> points;
    int packets = 0;
    while (auto d = pcap.next()) {
      if (d->destination_port != 2368) continue;
      velodyne::PacketInfo info;
      REQUIRE(decoder.decode(d->payload, points, &info) == velodyne::DecodeError::kNone);
      CHECK(info.return_mode == c.return_mode);
      CHECK(info.product_id == c.product_id);
      ++packets;
    }
    CHECK(packets == c.packets);
    std::vector<XYZ> decoded;
    decoded.reserve(points.size());
    for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
    const auto truth = read_pcd_xyz(lidaremu::test::data_path(c.truth));
    REQUIRE(truth.size() == c.truth_points);
    const auto distances = nearest_distances(truth, decoded);
    const double med = median(distances);
    INFO("median distance to ground truth: " << med << " m");
    CHECK(med < 0.02);
    const auto matched =
        std::count_if(distances.begin(), distances.end(), [](double d) { return d < 0.05; });
    // VLS-128: nebula's cloud puts banks 0-2 at the column azimuth, without the firing-group
    // interpolation velodyne_pointcloud applies (and we follow); 87 % lie within 5 cm.
    CHECK(double(matched) / double(truth.size()) > c.share_within_5cm);
  }
}

namespace {

class KeepingSink final : public PacketSink {
 public:
  std::vector<std::vector<std::uint8_t>> data;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes, double) override {
    if (channel == PacketChannel::kData) data.emplace_back(bytes.begin(), bytes.end());
  }
};

// Median step between consecutive packets of a field read by `at`.
template <typename Read>
double median_step(const std::vector<std::vector<std::uint8_t>>& packets, Read&& at) {
  std::vector<double> steps;
  for (std::size_t i = 1; i < packets.size(); ++i) {
    double step = at(packets[i]) - at(packets[i - 1]);
    if (step < 0) step += 36000;  // azimuth wrap
    steps.push_back(step);
  }
  return median(steps);
}

}  // namespace

namespace {

// The demo scene through the ideal chain and a model's encoder: what the engine hit, and what
// the sensor sent for it.
struct EmittedFrame {
  int columns = 0;  // firing sequences per revolution
  std::vector<XYZ> hits;
  std::vector<std::vector<std::uint8_t>> packets;
};

EmittedFrame emit_demo_frame(const SensorModel& model, ReturnMode echoes) {
  const auto pattern = *make_rpm_scan(model, 600).pattern;
  DemoFrame frame = demo_frame(pattern, echoes);
  EmittedFrame out;
  out.columns = pattern.columns_per_frame;
  out.hits = std::move(frame.hits);
  KeepingSink sink;
  auto encoder = make_encoder(pattern, {992200000001ull, 0x123456}, echoes);
  REQUIRE(encoder);
  encoder->encode_frame(frame.returns, 1000.0, sink);
  encoder->flush(sink);
  out.packets = std::move(sink.data);
  return out;
}

double packet_stamp(const std::vector<std::uint8_t>& p) {
  return double(load_le<std::uint32_t>(p, 1200));
}
double packet_azimuth(const std::vector<std::uint8_t>& p) {
  return double(load_le<std::uint16_t>(p, 2));
}

}  // namespace

TEST_CASE("Every Velodyne model and return mode: sizes, bytes, cadence, round trip",
          "[format][velodyne][registry]") {
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kVelodyne) continue;
    for (const ReturnMode echoes : {ReturnMode::kStrongest, ReturnMode::kLast, ReturnMode::kDual}) {
      const bool dual = echoes == ReturnMode::kDual;
      if (dual && !model->velodyne.dual_return) {
        CHECK(make_encoder(*make_rpm_scan(*model, 600).pattern, {}, echoes) == nullptr);
        continue;
      }
      INFO(model->name << (dual ? " dual" : echoes == ReturnMode::kLast ? " last" : " strongest"));
      const auto& v = model->velodyne;
      const auto frame = emit_demo_frame(*model, echoes);
      const int sequences_per_packet =
          v.blocks_per_packet / ((dual ? 2 : 1) * v.banks) * v.sequences_per_block;
      CHECK(frame.packets.size() ==
            static_cast<std::size_t>((frame.columns + sequences_per_packet - 1) /
                                     sequences_per_packet));
      const std::uint8_t mode = dual                          ? velodyne::kDual
                                : echoes == ReturnMode::kLast ? velodyne::kLast
                                                              : velodyne::kStrongest;
      std::string status_types;
      for (const auto& p : frame.packets) {
        REQUIRE(p.size() == 1206);
        if (v.status_bytes) {  // HDL-64E: the status rotation instead
          if (status_types.size() < 9) status_types += static_cast<char>(p[1204]);
          continue;
        }
        CHECK(p[1204] == mode);
        CHECK(p[1205] == v.product_id);
      }
      if (v.status_bytes) CHECK(status_types == "HMSDNYGTV");
      const double period_us = sequences_per_packet * v.sequence_period_us;
      CHECK(median_step(frame.packets, packet_stamp) == Approx(period_us).margin(1.0));
      // 600 rpm: degrees per packet = 360 * 10 Hz * period.
      CHECK(median_step(frame.packets, packet_azimuth) ==
            Approx(360.0 * 10 * period_us * 1e-6 * 100).margin(1.0));
      velodyne::SpecDecoder decoder(*model);
      std::vector<velodyne::Point> points;
      for (const auto& p : frame.packets) {
        REQUIRE(decoder.decode(p, points) == velodyne::DecodeError::kNone);
      }
      // One point per valid hit (dual: the same return twice, one echo per beam here).
      CHECK(points.size() == frame.hits.size() * (dual ? 2 : 1));
      std::vector<XYZ> decoded;
      decoded.reserve(points.size());
      for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
      // Within half a range unit along the beam and the 0.01-degree azimuth field (plus its
      // interpolation inside a block) across it. A packet of one column (VLS-128 dual) borrows
      // the previous packet's step, itself quantised to 0.01 degree.
      const double azimuth_slack_deg = sequences_per_packet == 1 ? 0.02 : 0.015;
      // HDL-64E: velodyne_pointcloud's two-point correction moves x and y by different distance
      // corrections near the sensor, bending each beam sideways by up to |dc_x - dc_y|; the
      // encoder sends the raw distance whose decoded point lies nearest the hit.
      double bend_m = 0;
      for (const auto& c : model->laser_corrections) {
        bend_m = std::max(bend_m, std::fabs(c.dist_correction_x_m - c.dist_correction_y_m));
      }
      const auto distances = nearest_distances(decoded, frame.hits);
      for (std::size_t i = 0; i < distances.size(); ++i) {
        REQUIRE(distances[i] <= model->range_unit_m / 2 + 1e-4 + bend_m +
                                    points[i].distance_m * azimuth_slack_deg * M_PI / 180);
      }
      // (HDL-64E: 5.8 mm typical, the bend; every other model within a millimetre.)
      CHECK(median(distances) < model->range_unit_m / 2 + (bend_m > 0 ? 0.008 : 0.001));
    }
  }
}

TEST_CASE("Velodyne: emitted streams match the real captures field by field",
          "[format][velodyne][real]") {
  struct Capture {
    const char* model;
    ReturnMode return_mode;
    const char* pcap;
    std::size_t packets;
    double step_tolerance_us;  // on the packet timestamp step
  };
  // VLS-128: the real unit steps 166 us per packet; the ROS driver's model (6253.9 packets/s at
  // 600 rpm, 53.3 us sequences), which we follow, steps 159.9 us: within 4 %, both at ~600 rpm.
  for (const Capture& c :
       {Capture{"vlp16", ReturnMode::kDual, "velodyne/vlp16_dual.pcap", 603, 1.0},
        Capture{"vlp32c", ReturnMode::kStrongest, "velodyne/vlp32c_strongest.pcap", 379, 1.0},
        Capture{"vls128", ReturnMode::kStrongest, "velodyne/vls128_strongest.pcap", 2193, 7.0}}) {
    INFO(c.model);
    const SensorModel& model = *find_sensor_model(c.model);
    const auto& v = model.velodyne;
    const bool dual = c.return_mode == ReturnMode::kDual;
    const auto emitted = emit_demo_frame(model, c.return_mode);
    PcapReader pcap(lidaremu::test::data_path(c.pcap));
    std::vector<std::vector<std::uint8_t>> real;
    while (auto d = pcap.next()) {
      if (d->destination_port == 2368) real.push_back(d->payload);
    }
    REQUIRE(real.size() == c.packets);
    using Stream = std::vector<std::vector<std::uint8_t>>;
    const int copies = dual ? 2 : 1;
    const int used_blocks = v.blocks_per_packet / (copies * v.banks) * copies * v.banks;
    for (const Stream* stream : std::array<const Stream*, 2>{&emitted.packets, &real}) {
      std::size_t bad_size = 0, bad_factory = 0, bad_flags = 0, unequal_pairs = 0;
      for (const auto& p : *stream) {
        bad_size += p.size() != 1206;
        bad_factory +=
            p[1204] != (dual ? velodyne::kDual : velodyne::kStrongest) || p[1205] != v.product_id;
        for (int b = 0; b < used_blocks; ++b) {
          bad_flags += load_le<std::uint16_t>(p, 100 * static_cast<std::size_t>(b)) !=
                       VelodyneTraits::block_flag((b / copies) % v.banks);
          // Blocks of one column (banks, and dual pairs) share its azimuth.
          const int first_of_column = b / (copies * v.banks) * (copies * v.banks);
          unequal_pairs += load_le<std::uint16_t>(p, 100 * b + 2) !=
                           load_le<std::uint16_t>(p, 100 * first_of_column + 2);
        }
      }
      CHECK(bad_size == 0);
      CHECK(bad_factory == 0);
      CHECK(bad_flags == 0);
      CHECK(unequal_pairs == 0);
    }
    // Packet cadence and rotation rate as the real unit's.
    const double real_step_us = median_step(real, packet_stamp);
    const double emitted_step_us = median_step(emitted.packets, packet_stamp);
    const double real_rpm =
        median_step(real, packet_azimuth) / 100.0 / 360.0 / (real_step_us * 1e-6) * 60.0;
    const double emitted_rpm = median_step(emitted.packets, packet_azimuth) / 100.0 / 360.0 /
                               (emitted_step_us * 1e-6) * 60.0;
    INFO("real unit: " << real_step_us << " us per packet, " << real_rpm << " rpm; emitted "
                       << emitted_step_us << " us, " << emitted_rpm << " rpm");
    CHECK(emitted_step_us == Approx(real_step_us).margin(c.step_tolerance_us));
    CHECK(real_rpm == Approx(600).epsilon(0.01));
    CHECK(emitted_rpm == Approx(real_rpm).epsilon(0.01));
  }
}

TEST_CASE("UTC calendar fields by arithmetic agree with the C library", "[format][velodyne]") {
  // The NMEA sentence and the HDL-64E status bytes carry the date; the encoder computes it
  // without gmtime_r (glibc's global lock). Checked against gmtime_r over 1970-2100, leap days
  // and the last second of a year included.
  const auto agrees = [](std::int64_t t) {
    const auto seconds = static_cast<std::time_t>(t);
    std::tm c{};
    gmtime_r(&seconds, &c);
    const UtcFields u = utc_fields(t);
    return u.year == c.tm_year + 1900 && u.month == c.tm_mon + 1 && u.day == c.tm_mday &&
           u.hour == c.tm_hour && u.minute == c.tm_min && u.second == c.tm_sec;
  };
  int checked = 0;
  for (std::int64_t t = 0; t < 4'102'444'800; t += 86'399 * 7 + 12'345) {
    REQUIRE(agrees(t));
    ++checked;
  }
  for (const std::int64_t t : {951'782'400LL, 1'709'164'800LL, 1'798'761'599LL, 4'107'456'000LL}) {
    CHECK(agrees(t));  // 2000-02-29, 2024-02-29, 2026-12-31 23:59:59, 2100-02-28 + 1 day
  }
  CHECK(checked > 6000);
}

TEST_CASE("VLS-128 dual: blocks 8-11 as both decoders' rules need them", "[format][velodyne]") {
  // A dual packet holds one column in blocks 0-7. The ROS velodyne driver (ROS 1 rawdata.cc)
  // interpolates blocks 4-7 towards block 8's azimuth; velodyne_decoder decodes blocks 0-7 and
  // ends a revolution where the packets' azimuth wraps. Zeros there put lasers 96-127 metres off
  // and hid every revolution end: the blocks now repeat block 0's flag and azimuth, no returns.
  using velodyne::kDataPacket;
  const SensorModel& model = *find_sensor_model("vls128");
  const auto frame = emit_demo_frame(model, ReturnMode::kDual);
  REQUIRE(frame.packets.size() > 100);
  std::size_t wraps = 0;
  double previous_last_block = -1;
  for (const auto& p : frame.packets) {
    const auto azimuth0 = load_raw(p, kDataPacket.block_at(0), kDataPacket.azimuth);
    for (int b = 8; b < 12; ++b) {
      INFO("block " << b);
      const std::size_t at = kDataPacket.block_at(b);
      CHECK(load_raw(p, at, kDataPacket.block_flag) == VelodyneTraits::block_flag(0));
      CHECK(load_raw(p, at, kDataPacket.azimuth) == azimuth0);
      for (int slot = 0; slot < 32; ++slot) {
        CHECK(load_raw(p,
                       at + kDataPacket.first_record +
                           static_cast<std::size_t>(slot) * kDataPacket.record_size,
                       kDataPacket.distance) == 0);
      }
    }
    // The ROS driver's rule for blocks 4-7: the turn to block 8 is none (one column a packet).
    const auto azimuth4 = load_raw(p, kDataPacket.block_at(4), kDataPacket.azimuth);
    const auto azimuth8 = load_raw(p, kDataPacket.block_at(8), kDataPacket.azimuth);
    CHECK((36000 + azimuth8 - azimuth4) % 36000 == 0);
    // A revolution ends where the last block's azimuth goes back: once in the turn.
    const auto last =
        static_cast<double>(load_raw(p, kDataPacket.block_at(11), kDataPacket.azimuth));
    if (previous_last_block >= 0 && last < previous_last_block) ++wraps;
    previous_last_block = last;
  }
  CHECK(wraps == 0);  // one frame: 0 to 360 degrees without going back
  CHECK(previous_last_block > 35000);
}
