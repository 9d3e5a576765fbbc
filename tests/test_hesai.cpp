// The Hesai spec decoder on real captures (tests/data/hesai/, from nebula's decoder tests):
// every packet decodes with its sizes, header, sequence numbers and dates, and the decoded points
// reproduce nebula's ground-truth cloud of the same unit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "cloud_match.hpp"
#include "crc_agreement.hpp"
#include "daemon_process.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/pcap.hpp"

using namespace lidaremu::core;
using lidaremu::test::data_path;

TEST_CASE("Hesai spec decoder reproduces every real capture and nebula's clouds",
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
    enum Sequence : std::uint8_t { kNone, kContiguous, kGaps } sequence;  // UDP sequence numbers
    std::uint8_t flags;
    double packet_step_us;  // at 600 rpm in the capture's return mode (0: not checked)
    std::size_t size;       // of every packet
    double from_s, to_s;    // the month of the capture's dates
    int crcs;               // checked per packet
  };
  // The months of the captures' dates, in UNIX seconds.
  constexpr double kJuly2019 = 1561939200.0, kAugust2019 = 1564617600.0;
  constexpr double kOctober2020 = 1601510400.0, kNovember2020 = 1604188800.0;
  constexpr double kJune2020 = 1590969600.0, kJuly2020 = 1593561600.0;
  constexpr double kSeptember2017 = 1504224000.0, kOctober2017 = 1506816000.0;
  for (const Capture& c :
       {Capture{"pandar-xt32", "hesai/nebula_hesai_xt32.pcap", "hesai/PandarXT32.csv",
                "hesai/nebula_hesai_xt32_ground_truth_1673400678101968885.pcd", 2000, 63021, 0x39,
                2, 4, Capture::kContiguous, 0x01, 200.0, 0, kJuly2019, kAugust2019, 0},
        Capture{"pandar-xt16", "hesai/nebula_hesai_xt16.pcap", "hesai/PandarXT16.csv",
                "hesai/nebula_hesai_xt16_ground_truth_1732848128093928016.pcd", 1626, 26287, 0x39,
                2, 4, Capture::kContiguous, 0x01, 200.0, 0, kJuly2019, kAugust2019, 0},
        // XT32M2X: 5 mm distance unit and three returns per firing in its header; the capture
        // skips sequence numbers (recorded, not sent, that way).
        Capture{"pandar-xt32m", "hesai/nebula_hesai_xt32m.pcap", "hesai/PandarXT32M.csv",
                "hesai/nebula_hesai_xt32m_ground_truth_1660893203292679064.pcd", 1815, 13574, 0x3C,
                3, 5, Capture::kGaps, 0x01, 0, 0, kJuly2019, kAugust2019, 0},
        // QT128C2X: body, functional-safety and tail CRCs on every packet, a 32-byte signature
        // (flags 0x1D: sequence, functional safety, signature, confidence), dual at 600 rpm: 900
        // packets a turn, one every 111.1 us.
        Capture{"pandar-qt128", "hesai/nebula_hesai_qt128.pcap", "hesai/PandarQT128.csv",
                "hesai/nebula_hesai_qt128_ground_truth_1730273789174759609.pcd", 1800, 73560, 0x39,
                2, 4, Capture::kContiguous, 0x1D, 111.1, 0, kOctober2020, kNovember2020, 3},
        // QT64 (protocol 3.1): the XT's block shape with four blocks, its own 28-byte tail, its
        // dual mode first + last (0x3B); 600 rpm: 300 packets a turn, one every 333.3 us; the
        // year byte 117 (2017) counted from 1900.
        Capture{"pandar-qt64", "hesai/nebula_hesai_qt64.pcap", "hesai/PandarQT64.csv",
                "hesai/nebula_hesai_qt64_ground_truth_1673401196087570870.pcd", 1200, 34158, 0x3B,
                2, 4, Capture::kContiguous, 0x01, 333.3, 1072, kSeptember2017, kOctober2017, 0},
        // Pandar64: no return count in its short header, the UDP sequence appended (1198 bytes),
        // the year byte 120 (2020) although its manual counts from 2000; dual at 600 rpm: 600
        // packets a turn.
        Capture{"pandar-64", "hesai/nebula_hesai_64.pcap", "hesai/Pandar64.csv",
                "hesai/nebula_hesai_64_ground_truth_1673403880898440686.pcd", 2400, 93591, 0x39, 0,
                4, Capture::kContiguous, 0, 166.7, 1198, kJune2020, kJuly2020, 0},
        // Pandar40P: no header at all, Velodyne-like blocks, no sequence (1262 bytes), year 17
        // (2017) counted from 2000; dual at 600 rpm: 360 packets a turn.
        Capture{"pandar-40p", "hesai/nebula_hesai_40p.pcap", "hesai/Pandar40P.csv",
                "hesai/nebula_hesai_40p_ground_truth_1673400149711850138.pcd", 1439, 56762, 0x39, 0,
                4, Capture::kNone, 0, 277.8, 1262, kSeptember2017, kOctober2017, 0}}) {
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
      CHECK(d->payload.size() == (c.size ? c.size : format->packet_size()));
      CHECK(info.return_mode == c.return_mode);
      CHECK(info.return_num == c.return_num);
      CHECK(info.distance_unit_mm == c.distance_unit_mm);
      CHECK(info.flags == c.flags);
      // The constant bytes of the model's format row, as its real unit sends them (every
      // capture is dual).
      CHECK(info.flags == format->flags);
      CHECK(info.distance_unit_mm == format->distance_unit_mm);
      CHECK(info.factory == format->factory);
      CHECK(info.first_block_return == format->dual_first_block);
      for (const auto& f : format->protocol->header) {
        if (f.name == hesai::Field::kStatusVersion) {
          CHECK(load_field(d->payload, 0, f) == format->status_version);
        }
      }
      for (const auto& f : format->protocol->tail) {
        if (f.name == hesai::Field::kSafetyVersion) {
          CHECK(load_field(d->payload, format->tail_at(), f) == format->safety_version);
        }
      }
      const auto& confidence = format->protocol->confidence;
      for (int b = 0; confidence.bytes != 0 && b < format->blocks; ++b) {
        for (int ch = 0; ch < format->lasers; ++ch) {
          REQUIRE(load_field(d->payload, format->record_at(b, ch), confidence) ==
                  format->confidence);
        }
      }
      CHECK(info.crcs_checked == c.crcs);
      CHECK(info.motor_rpm == Approx(600).margin(2));
      // The year byte: since 1900 on the XT, QT128, QT64 and this Pandar64, since 2000 on the
      // 40P.
      CHECK(info.time_s > c.from_s);
      CHECK(info.time_s < c.to_s);
      if (packets > 0) {
        if (c.sequence == Capture::kContiguous) {
          CHECK(info.udp_sequence == previous.udp_sequence + 1);
        } else if (c.sequence == Capture::kGaps) {
          CHECK(info.udp_sequence > previous.udp_sequence);
        }
        steps_us.push_back((info.time_s - previous.time_s) * 1e6);
      }
      previous = info;
      ++packets;
    }
    CHECK(packets == c.packets);
    if (c.packet_step_us > 0) {
      // FORMATS-HESAI-ROBOSENSE.md: XT32 dual 500 packets a turn, QT128 dual 900.
      CHECK(lidaremu::test::median(steps_us) == Approx(c.packet_step_us).margin(2));
    }
    std::vector<lidaremu::test::XYZ> decoded;
    decoded.reserve(points.size());
    for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
    const auto truth = lidaremu::test::read_pcd_xyz(data_path(c.truth));
    REQUIRE(truth.size() == c.truth_points);
    // Every ground-truth point has a decoded point where nebula put it (the capture holds more
    // than the one scan nebula's cloud is).
    // (Searched within 2 cm: the captures hold several scans of one scene, too dense for 10 cm
    // cells; every distance the test accepts is below 1 cm.)
    const auto distances = lidaremu::test::nearest_distances(truth, decoded, 0.02);
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

  // Pandar40P (no header): every block's FF EE flag is checked; Pandar64: the packet with or
  // without its UDP sequence, nothing in between.
  {
    const hesai::ModelFormat& p40 = *hesai::find_model_format("pandar-40p");
    const hesai::SpecDecoder d40(
        p40, hesai::parse_calibration_csv(lidaremu::test::slurp(data_path("hesai/Pandar40P.csv"))));
    PcapReader capture(data_path("hesai/nebula_hesai_40p.pcap"));
    auto bytes = capture.next()->payload;
    std::vector<hesai::Point> some;
    REQUIRE(d40.decode(bytes, some) == hesai::DecodeError::kNone);
    bytes[p40.block_at(9)] = 0xEE;
    CHECK(d40.decode(bytes, some) == hesai::DecodeError::kBadSignature);
    const hesai::ModelFormat& p64 = *hesai::find_model_format("pandar-64");
    CHECK(p64.packet_size() == 1194);
    CHECK(p64.packet_size_with_sequence() == 1198);
    const hesai::SpecDecoder d64(
        p64, hesai::parse_calibration_csv(lidaremu::test::slurp(data_path("hesai/Pandar64.csv"))));
    PcapReader capture64(data_path("hesai/nebula_hesai_64.pcap"));
    const auto full = capture64.next()->payload;
    hesai::PacketInfo info;
    REQUIRE(d64.decode(full, some, &info) == hesai::DecodeError::kNone);
    CHECK(info.udp_sequence != 0);
    CHECK(d64.decode(std::span(full).first(1194), some, &info) == hesai::DecodeError::kNone);
    CHECK(info.udp_sequence == 0);  // not in the shorter packet
    CHECK(d64.decode(std::span(full).first(1196), some) == hesai::DecodeError::kWrongSize);
  }

  // Calibration files: the channels in order, three numbers a line.
  CHECK_THROWS_WITH(hesai::parse_calibration_csv("Channel,Elevation,Azimuth\n1,15,0\n3,13,0\n"),
                    Catch::Contains("line 3"));
  CHECK_THROWS_WITH(hesai::parse_calibration_csv("Channel,Elevation,Azimuth\n1,nan,0\n"),
                    Catch::Contains("line 2"));
  CHECK_THROWS(hesai::parse_calibration_csv(""));
  CHECK_THROWS_AS(hesai::SpecDecoder(xt16, hesai::parse_calibration_csv("1,15,0\n")),
                  std::invalid_argument);
}

TEST_CASE(
    "Hesai CRC-32/MPEG-2: the check value, and each of the QT128's three CRCs guards its "
    "bytes",
    "[format][hesai][hostile]") {
  const std::string check = "123456789";
  CHECK(hesai::crc32_mpeg2(std::span(reinterpret_cast<const std::uint8_t*>(  // NOLINT
                                         check.data()),
                                     check.size())) == 0x0376E6E7u);  // the catalogue's check
  // Bit by bit from the definition (polynomial 0x04C11DB7, most significant bit first, all ones
  // in, nothing out), at every length and alignment (crc_agreement.hpp says why).
  const auto reference = [](std::span<const std::uint8_t> bytes) {
    std::uint32_t crc = 0xFFFFFFFFu;
    for (const std::uint8_t byte : bytes) {
      crc ^= std::uint32_t{byte} << 24;
      for (int bit = 0; bit < 8; ++bit)
        crc = crc & 0x80000000u ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
    }
    return crc;
  };
  std::vector<std::uint8_t> data(1200);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 73 + 5);
  CHECK(lidaremu::test::crc_disagreements(data, hesai::crc32_mpeg2, reference) == 0);
  CHECK(hesai::crc32_mpeg2(data) == reference(data));
  const hesai::ModelFormat& qt128 = *hesai::find_model_format("pandar-qt128");
  const hesai::SpecDecoder decoder(
      qt128,
      hesai::parse_calibration_csv(lidaremu::test::slurp(data_path("hesai/PandarQT128.csv"))));
  PcapReader pcap(data_path("hesai/nebula_hesai_qt128.pcap"));
  const auto good = pcap.next()->payload;
  std::vector<hesai::Point> points;
  REQUIRE(decoder.decode(good, points) == hesai::DecodeError::kNone);
  const std::size_t tail = qt128.tail_at();
  // A byte of a block, of the functional-safety block, of the tail: each caught by its CRC. The
  // functional-safety version byte is covered by none (as on the real unit).
  for (const std::size_t at : {std::size_t{500}, tail + 8, tail + 30}) {
    auto bytes = good;
    bytes[at] ^= 0x10;
    points.clear();
    INFO("byte " << at);
    CHECK(decoder.decode(bytes, points) == hesai::DecodeError::kBadCrc);
    CHECK(points.empty());
  }
  auto version = good;
  version[tail + 4] ^= 0x10;
  CHECK(decoder.decode(version, points) == hesai::DecodeError::kNone);
}
