// The Livox Mid-360 on a scan table: the table file read (and every malformed one refused), the
// pattern it makes, and the encoder's packets decoded by the spec decoder back onto the engine's
// hits, frame after frame as the frames walk the table. No Mid-360 pattern is among the facts:
// the tables here are test patterns written by the test, not the unit's.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "demo_frame.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/scan_table.hpp"
#include "lidaremu/core/sensor_model.hpp"

using namespace lidaremu::core;

namespace {

// 2026-11-25 12:00:00 UTC.
constexpr double kFrameStart = 1795608000.0;

class KeepingSink final : public PacketSink {
 public:
  std::vector<std::vector<std::uint8_t>> data, imu;
  std::vector<double> data_times, imu_times;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    const bool is_data = channel == PacketChannel::kData;
    (is_data ? data : imu).emplace_back(bytes.begin(), bytes.end());
    (is_data ? data_times : imu_times).push_back(sensor_time_s);
  }
};

}  // namespace

TEST_CASE("Livox scan tables: livox_laser_simulation's CSV read; malformed files refused",
          "[livox][config][hostile]") {
  const auto ok = parse_scan_table_csv(
      "Time/s,Azimuth/deg,Zenith/deg\r\n1,0,90\r\n2, 90 ,90\n3,0,0\n4,180,135\n\n"
      "5,0,90\n6,0,90\n7,0,90\n8,0,90\n",
      4, "t.csv");
  REQUIRE(ok.table);
  CHECK(ok.error.empty());
  CHECK(ok.table->firings() == 2);
  const auto near = [](const Eigen::Vector3f& v, const Eigen::Vector3f& w) {
    return (v - w).norm() < 1e-6F;
  };
  CHECK(near(ok.table->direction(0, 0), {1, 0, 0}));  // azimuth from x, counter-clockwise
  CHECK(near(ok.table->direction(0, 1), {0, 1, 0}));
  CHECK(near(ok.table->direction(0, 2), {0, 0, 1}));  // zenith from z up
  CHECK(near(ok.table->direction(0, 3), {-std::sqrt(0.5F), 0, -std::sqrt(0.5F)}));
  CHECK(near(ok.table->direction(2, 2), ok.table->direction(0, 2)));  // the cycle repeats
  const auto refused = [](std::string_view text) {
    const auto r = parse_scan_table_csv(text, 4, "bad.csv");
    CHECK(r.table == nullptr);
    return r.error;
  };
  CHECK_THAT(refused("h\n1,0,90\n2,x,90\n"),
             Catch::Contains("bad.csv line 3") && Catch::Contains("three numbers"));
  CHECK_THAT(refused("1,0,90\n2,0\n"), Catch::Contains("line 2"));
  CHECK_THAT(refused("1,0,90\n2,0,90,4\n"), Catch::Contains("line 2"));
  CHECK_THAT(refused("1,0,200\n"), Catch::Contains("zenith outside"));
  CHECK_THAT(refused("1,nan,90\n"), Catch::Contains("no points"));  // line 1: a header
  CHECK_THAT(refused("1,0,90\n2,inf,90\n"), Catch::Contains("line 2"));
  CHECK_THAT(refused("1,0,90\n2,0,90\n3,0,90\n"), Catch::Contains("not whole firings of 4"));
  CHECK_THAT(refused("Time/s,Azimuth/deg,Zenith/deg\n"), Catch::Contains("no points"));
  CHECK_THAT(refused(""), Catch::Contains("no points"));
  CHECK_THAT(load_scan_table_csv("/nonexistent/mid360.csv", 4).error,
             Catch::Contains("/nonexistent/mid360.csv") && Catch::Contains("cannot open"));
  CHECK_THAT(load_scan_table_csv("/dev/zero", 4).error, Catch::Contains("not a regular file"));

  // A pattern needs the model's lasers and at least a frame of firings.
  const SensorModel& mid360 = *find_sensor_model("livox-mid360");
  CHECK_THAT(make_table_scan(mid360, ok.table).error, Catch::Contains("fewer than one frame"));
  const auto three = parse_scan_table_csv(golden_angle_test_pattern_csv(3750, 4), 3, "three.csv");
  REQUIRE(three.table);
  CHECK_THAT(make_table_scan(mid360, three.table).error, Catch::Contains("4 lasers"));
  CHECK_THAT(make_table_scan(mid360, nullptr).error, Catch::Contains("4 lasers"));
  CHECK_FALSE(make_table_scan(*find_sensor_model("vlp16"), ok.table).pattern);
  CHECK_FALSE(make_rpm_scan(mid360, 600).pattern);
}

namespace {
// A Mid-360 on 12,500 firings of the golden-angle test pattern: 5,000 a frame.
ScanPattern mid360_test_pattern() {
  const auto parsed = parse_scan_table_csv(golden_angle_test_pattern_csv(12'500, 4), 4, "test.csv");
  REQUIRE(parsed.table);
  const auto made = make_table_scan(*find_sensor_model("livox-mid360"), parsed.table);
  REQUIRE(made.pattern);
  return *made.pattern;
}
}  // namespace

TEST_CASE("Livox Mid-360 on a scan table: packets, cadence, IMU, every point on its hit",
          "[format][livox]") {
  // Two and a half frames of firings: frame 2 runs past the table's end into its start.
  const ScanPattern pattern = mid360_test_pattern();
  // 200,000 points/s of 4 lasers: a firing every 20 us, 5,000 a 0.1 s frame.
  CHECK(pattern.columns_per_frame == 5000);
  CHECK(pattern.column_period_s == Approx(20e-6));
  CHECK(pattern.frame_period_s == Approx(0.1));
  CHECK(default_return_mode(*find_sensor_model("livox-mid360")) == ReturnMode::kFirst);
  CHECK(make_encoder(pattern, {}, ReturnMode::kStrongest) == nullptr);  // first return only

  for (std::uint32_t frame = 0; frame < 3; ++frame) {
    INFO("frame " << frame);
    const auto demo = lidaremu::test::demo_frame(pattern, ReturnMode::kFirst, frame);
    auto encoder = make_encoder(pattern, {}, ReturnMode::kFirst);
    REQUIRE(encoder);
    CHECK(encoder->data_packet_size() == 1380);
    CHECK(encoder->data_packet_period_s() == Approx(480e-6));
    KeepingSink sink;
    const double start = kFrameStart + frame * 0.1;
    encoder->encode_frame(demo.returns, start, sink);
    encoder->flush(sink);
    // 5,000 firings of 24 a packet: 208 whole packets and one the flush completes.
    REQUIRE(sink.data.size() == 209);
    std::size_t compared = 0, off = 0, empty_sent = 0;
    for (std::size_t p = 0; p < sink.data.size(); ++p) {
      const auto& packet = sink.data[p];
      REQUIRE(packet.size() == 1380);
      std::vector<livox::Point> points;
      livox::PacketInfo info;
      REQUIRE(livox::decode_points(packet, points, &info) == livox::DecodeError::kNone);
      CHECK(info.crc_valid);
      CHECK(info.udp_count == p);
      CHECK(info.frame_count == frame);
      CHECK(info.time_type == 1);
      CHECK(info.time_interval_100ns == 4800);
      // Stamped with the packet's first firing, 480 us after the last packet's.
      const double first_firing_s = start + static_cast<double>(p) * 24 * 20e-6;
      CHECK(static_cast<double>(info.timestamp_ns) * 1e-9 == Approx(first_firing_s).margin(2e-7));
      CHECK(sink.data_times[p] == Approx(first_firing_s + 480e-6).margin(1e-9));
      REQUIRE(points.size() == 96);
      for (std::size_t i = 0; i < points.size(); ++i) {
        const std::size_t beam = p * 96 + i;  // 4 lasers a firing, in order
        const livox::Point& pt = points[i];
        const bool sent = pt.x != 0 || pt.y != 0 || pt.z != 0;
        if (beam >= demo.hit_by_beam.size()) {  // the flush's firings past the frame
          CHECK_FALSE(sent);
          continue;
        }
        const auto& hit = demo.hit_by_beam[beam];
        const bool was_hit = hit.x != 0 || hit.y != 0 || hit.z != 0;
        if (!was_hit || !sent) {
          empty_sent += !was_hit && !sent;
          off += was_hit != sent;
          continue;
        }
        // Each coordinate rounded to the millimetre, the range to 0.1 mm; the direction a float.
        const Eigen::Vector3f d(pt.x - hit.x, pt.y - hit.y, pt.z - hit.z);
        const float range = Eigen::Vector3f(hit.x, hit.y, hit.z).norm();
        off += d.norm() > 0.5e-3F * std::sqrt(3.0F) + 0.05e-3F + 2e-6F * range;
        ++compared;
      }
    }
    INFO(compared << " points compared, " << off << " off");
    CHECK(compared > 4'000);  // the rest looks into the sky
    CHECK(off == 0);
    CHECK(empty_sent > 0);  // the sky: nothing there, (0, 0, 0) sent
    // IMU packets: 200 a second from the first firing, at rest (1 g up, no turn).
    REQUIRE(sink.imu.size() >= 20);
    CHECK(sink.imu.size() <= 22);
    for (std::size_t k = 0; k < sink.imu.size(); ++k) {
      livox::ImuSample imu;
      REQUIRE(livox::decode_imu(sink.imu[k], imu) == livox::DecodeError::kNone);
      CHECK(static_cast<double>(imu.time_ns) * 1e-9 == Approx(start + 0.005 * k).margin(2e-7));
      CHECK(imu.record.acceleration_g[2] == 1.0F);
      CHECK(imu.record.gyro_rad_s[2] == 0.0F);
    }
    // Deterministic: the same frame encodes to the same bytes.
    auto again = make_encoder(pattern, {}, ReturnMode::kFirst);
    KeepingSink second;
    again->encode_frame(demo.returns, start, second);
    again->flush(second);
    CHECK(second.data == sink.data);
  }
  // The frames walk the table: frame 1 starts 5,000 firings on; frame 2's firing 2,500 is the
  // table's firing 12,500, its first again.
  const BeamGeometry geometry(pattern);
  const auto direction = [&](std::uint32_t frame, std::uint32_t column) {
    return geometry.ray_in_frame(frame, column, 0).direction;
  };
  CHECK((direction(1, 0) - direction(0, 0)).norm() > 0.1);
  CHECK((direction(1, 0) - direction(0, 5000 - 1)).norm() > 1e-3);
  CHECK((direction(2, 2500) - direction(0, 0)).norm() < 1e-12);
  CHECK(direction(1, 0).isApprox(pattern.table->direction(5000, 0).cast<double>()));
}

TEST_CASE("Livox: a packet that runs on into the next frame names the frame of its first firing",
          "[format][livox]") {
  // 5,000 firings a frame, 24 a packet: packet 208 holds frame 0's last 8 firings and frame 1's
  // first 16. Its timestamp is its first firing's (frame 0), and so is its frame count; the next
  // packet starts in frame 1.
  const ScanPattern pattern = mid360_test_pattern();
  auto encoder = make_encoder(pattern, {}, ReturnMode::kFirst);
  REQUIRE(encoder);
  KeepingSink sink;
  for (std::uint32_t frame = 0; frame < 2; ++frame) {
    const auto demo = lidaremu::test::demo_frame(pattern, ReturnMode::kFirst, frame);
    encoder->encode_frame(demo.returns, kFrameStart + frame * 0.1, sink);
  }
  encoder->flush(sink);
  REQUIRE(sink.data.size() == 417);  // 10,000 firings, 24 a packet, the last completed
  for (std::size_t p = 205; p < 212; ++p) {
    livox::PacketInfo info;
    std::vector<livox::Point> points;
    REQUIRE(livox::decode_points(sink.data[p], points, &info) == livox::DecodeError::kNone);
    const std::size_t first_firing = p * 24;
    INFO("packet " << p << ", first firing " << first_firing);
    CHECK(info.frame_count == (first_firing < 5000 ? 0 : 1));
    CHECK(static_cast<double>(info.timestamp_ns) * 1e-9 ==
          Approx(kFrameStart + static_cast<double>(first_firing) * 20e-6).margin(2e-7));
  }
}
