// The Hesai spec decoder on real captures (tests/data/hesai/, from nebula's decoder tests):
// every packet decodes with its sizes, header, sequence numbers and dates, and the decoded points
// reproduce nebula's ground-truth cloud of the same unit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "cloud_match.hpp"
#include "daemon_process.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/pcap.hpp"

using namespace lidaremu::core;
using lidaremu::test::data_path;

TEST_CASE("Hesai spec decoder reproduces every real XT capture and nebula's clouds",
          "[format][hesai][real]") {
  struct Capture {
    const char* model;
    const char* pcap;
    const char* calibration;
    const char* truth;
    int packets;
    std::size_t truth_points;
    std::uint8_t return_mode;  // data/README.md and the FORMATS sheet
    int return_num;
    int distance_unit_mm;
    bool contiguous;  // every UDP sequence number present
  };
  for (const Capture& c :
       {Capture{"pandar-xt32", "hesai/nebula_hesai_xt32.pcap", "hesai/PandarXT32.csv",
                "hesai/nebula_hesai_xt32_ground_truth_1673400678101968885.pcd", 2000, 63021, 0x39,
                2, 4, true},
        Capture{"pandar-xt16", "hesai/nebula_hesai_xt16.pcap", "hesai/PandarXT16.csv",
                "hesai/nebula_hesai_xt16_ground_truth_1732848128093928016.pcd", 1626, 26287, 0x39,
                2, 4, true},
        // XT32M2X: 5 mm distance unit and three returns per firing in its header; the capture
        // skips sequence numbers (recorded, not sent, that way).
        Capture{"pandar-xt32m", "hesai/nebula_hesai_xt32m.pcap", "hesai/PandarXT32M.csv",
                "hesai/nebula_hesai_xt32m_ground_truth_1660893203292679064.pcd", 1815, 13574, 0x3C,
                3, 5, false}}) {
    INFO(c.model);
    const hesai::ModelFormat* format = hesai::find_model_format(c.model);
    REQUIRE(format != nullptr);
    const hesai::SpecDecoder decoder(
        *format, hesai::parse_calibration_csv(lidaremu::test::slurp(data_path(c.calibration))));
    PcapReader pcap(data_path(c.pcap));
    std::vector<hesai::Point> points;
    std::vector<double> steps_us;
    int packets = 0;
    hesai::PacketInfo previous{};
    while (auto d = pcap.next()) {
      hesai::PacketInfo info;
      const auto e = decoder.decode(d->payload, points, &info);
      INFO("packet " << packets << ": " << hesai::to_string(e) << ", " << d->payload.size()
                     << " bytes");
      REQUIRE(e == hesai::DecodeError::kNone);
      CHECK(d->payload.size() == format->packet_size());
      CHECK(info.return_mode == c.return_mode);
      CHECK(info.return_num == c.return_num);
      CHECK(info.distance_unit_mm == c.distance_unit_mm);
      CHECK(info.flags == 0x01);  // UDP sequence present, nothing else
      CHECK(info.motor_rpm == Approx(600).margin(2));
      // The date counts years from 1900 on the XT: July 2019.
      CHECK(info.time_s > 1561939200.0);  // 2019-07-01
      CHECK(info.time_s < 1564617600.0);  // 2019-08-01
      if (packets > 0) {
        if (c.contiguous) {
          CHECK(info.udp_sequence == previous.udp_sequence + 1);
          steps_us.push_back((info.time_s - previous.time_s) * 1e6);
        } else {
          CHECK(info.udp_sequence > previous.udp_sequence);
        }
      }
      previous = info;
      ++packets;
    }
    CHECK(packets == c.packets);
    if (c.contiguous) {
      // 600 rpm, dual: a packet every 200 us (FORMATS-HESAI-ROBOSENSE.md: 500 packets a turn).
      CHECK(lidaremu::test::median(steps_us) == Approx(200).margin(2));
    }
    std::vector<lidaremu::test::XYZ> decoded;
    decoded.reserve(points.size());
    for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
    const auto truth = lidaremu::test::read_pcd_xyz(data_path(c.truth));
    REQUIRE(truth.size() == c.truth_points);
    // Every ground-truth point has a decoded point where nebula put it (the capture holds more
    // than the one scan nebula's cloud is).
    const auto distances = lidaremu::test::nearest_distances(truth, decoded);
    const double med = lidaremu::test::median(distances);
    INFO("median distance to ground truth: " << med << " m");
    CHECK(med < 0.001);
    const auto within_1cm =
        std::count_if(distances.begin(), distances.end(), [](double d) { return d < 0.01; });
    CHECK(within_1cm == static_cast<std::ptrdiff_t>(truth.size()));
  }
}

TEST_CASE("Hesai spec decoder refuses what is not its model's packet", "[format][hesai][hostile]") {
  const hesai::ModelFormat& xt16 = *hesai::find_model_format("pandar-xt16");
  const hesai::SpecDecoder decoder(
      xt16, hesai::parse_calibration_csv(lidaremu::test::slurp(data_path("hesai/PandarXT16.csv"))));
  PcapReader pcap(data_path("hesai/nebula_hesai_xt16.pcap"));
  const auto good = pcap.next()->payload;
  std::vector<hesai::Point> points;
  REQUIRE(decoder.decode(good, points) == hesai::DecodeError::kNone);
  const auto changed = [&](std::size_t at, std::uint8_t value) {
    auto bytes = good;
    bytes[at] = value;
    points.clear();
    return decoder.decode(bytes, points);
  };
  CHECK(decoder.decode(std::span(good).first(good.size() - 1), points) ==
        hesai::DecodeError::kWrongSize);
  CHECK(changed(0, 0xFF) == hesai::DecodeError::kBadSignature);
  CHECK(changed(2, 3) == hesai::DecodeError::kWrongProtocol);
  CHECK(changed(6, 32) == hesai::DecodeError::kWrongShape);
  CHECK(changed(13, 0xFF) == hesai::DecodeError::kBadAzimuth);  // block 0 azimuth 65xxx
  // The last block's: nothing of the blocks before it comes out either.
  CHECK(changed(xt16.block_at(xt16.blocks - 1) + 1, 0xFF) == hesai::DecodeError::kBadAzimuth);
  CHECK(changed(xt16.tail_at() + 14, 13) == hesai::DecodeError::kBadDate);  // month 13
  CHECK(points.empty());

  // Calibration files: the channels in order, three numbers a line.
  CHECK_THROWS_WITH(hesai::parse_calibration_csv("Channel,Elevation,Azimuth\n1,15,0\n3,13,0\n"),
                    Catch::Contains("line 3"));
  CHECK_THROWS_WITH(hesai::parse_calibration_csv("Channel,Elevation,Azimuth\n1,nan,0\n"),
                    Catch::Contains("line 2"));
  CHECK_THROWS(hesai::parse_calibration_csv(""));
  CHECK_THROWS_AS(hesai::SpecDecoder(xt16, hesai::parse_calibration_csv("1,15,0\n")),
                  std::invalid_argument);
}
