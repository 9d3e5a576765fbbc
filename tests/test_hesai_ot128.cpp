// Hesai OT128 (nebula's Pandar128E4X, protocol 1.4): its packets against FORMATS-MORE.md
// section 1 byte by byte (no real OT128 capture is among the data: the layout's offsets, the
// Hesai SDK's size rule from the flags byte, what nebula checks), and its model row against the
// real unit's calibration file nebula ships.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/hesai.hpp"

using namespace lidaremu::core;

namespace {

// 2026-11-25 12:00:00 UTC.
constexpr double kFrameStart = 1795608000.0;

struct Keep final : PacketSink {
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<double> times;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes, double t) override {
    if (channel != PacketChannel::kData) return;
    data.emplace_back(bytes.begin(), bytes.end());
    times.push_back(t);
  }
};

// The OT128's packets of one frame with every beam at 10 m.
Keep one_frame(ReturnMode mode) {
  const SensorModel& model = *find_sensor_model("pandar-ot128");
  const auto pattern = *make_rpm_scan(model, 600).pattern;
  FrameReturns returns;
  returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 128});
  for (std::size_t beam = 0; beam < returns.shape.beams(); ++beam) {
    returns.range_m[returns.slot(beam, 0)] = 10.0F;
    returns.reflectivity[returns.slot(beam, 0)] = 40;
  }
  Keep sink;
  auto encoder = make_encoder(pattern, {}, mode);
  REQUIRE(encoder);
  encoder->encode_frame(returns, kFrameStart, sink);
  encoder->flush(sink);
  return sink;
}

// The Hesai SDK's packet size for protocol 1.4, from the flags byte alone (FORMATS-HESAI-
// ROBOSENSE.md's layout: the SDK refuses a packet of any other length).
std::size_t sdk_size_from_flags(std::uint8_t flags, int blocks, int lasers) {
  std::size_t size = 12 + static_cast<std::size_t>(blocks) * (2 + 3 * lasers) + 4;  // body CRC
  if (flags & 0x04) size += 17;           // functional safety
  size += 9 + 2 + 1 + 1 + 2 + 6 + 4 + 1;  // reserved, azimuth and operational state, ... factory
  if (flags & 0x01) size += 4;            // UDP sequence
  if (flags & 0x02) size += 22;           // IMU
  size += 4;                              // tail CRC
  if (flags & 0x08) size += 32;           // signature
  return size;
}

std::uint32_t le32(std::span<const std::uint8_t> p, std::size_t at) {
  return load_le<std::uint32_t>(p, at);
}
std::uint16_t le16(std::span<const std::uint8_t> p, std::size_t at) {
  return load_le<std::uint16_t>(p, at);
}

}  // namespace

TEST_CASE("OT128 packets: protocol 1.4 as FORMATS-MORE.md lays it out and the drivers check it",
          "[format][hesai]") {
  const auto single = one_frame(ReturnMode::kStrongest);
  const auto dual = one_frame(ReturnMode::kDual);
  // Standard resolution at 600 rpm: 0.2 degree a firing, 900 single / 1,800 dual packets a turn.
  CHECK(single.data.size() == 900);
  CHECK(dual.data.size() == 1800);
  for (const auto* sink : {&single, &dual}) {
    const bool is_dual = sink == &dual;
    INFO((is_dual ? "dual" : "single"));
    std::set<int> rolling;
    for (std::size_t i = 0; i < sink->data.size(); ++i) {
      const auto& p = sink->data[i];
      REQUIRE(p.size() == 861);  // no signature since the OT128 manual of 2023-09
      CHECK(p[0] == 0xEE);
      CHECK(p[1] == 0xFF);
      CHECK(p[2] == 1);  // protocol 1.4
      CHECK(p[3] == 4);
      CHECK(p[4] >= 0x80);  // the SDK's OT128 (above 127, below 137: not a JT128)
      CHECK(p[4] <= 0x88);
      CHECK(p[6] == 128);
      CHECK(p[7] == 2);
      CHECK(p[8] == (is_dual ? 1 : 0));  // dual: the last return in the first block
      CHECK(p[9] == 4);                  // 4 mm
      CHECK(p[11] == 0x07);              // sequence, IMU, functional safety: nebula's layout
      CHECK(sdk_size_from_flags(p[11], p[7], p[6]) == p.size());
      // Block azimuths below 36,000 (nebula indexes a 36,000-entry table with them).
      CHECK(le16(p, 12) < 36000);
      CHECK(le16(p, 12 + 386) < 36000);
      CHECK(le16(p, 14) == 2500);  // 10 m in 4 mm
      // Tail: azimuth state 0 (every block), operational state 2 (standard, which both drivers
      // read so), return mode, 600 rpm, the date from 1900, factory, sequence.
      CHECK(le16(p, 814) == 0);
      CHECK(p[816] == 2);
      CHECK(p[817] == (is_dual ? 0x39 : 0x37));
      CHECK(le16(p, 818) == 600);
      CHECK(p[820] == 126);
      CHECK(p[821] == 11);
      CHECK(p[822] == 25);
      CHECK(p[830] == 0x42);
      CHECK(le32(p, 831) == i);
      // Functional safety: version 1, lidar state 1 (normal) in bits 7:5.
      CHECK(p[788] == 1);
      CHECK((p[789] >> 5) == 1);
      rolling.insert(p[789] & 0x7);
      // The CRCs where the sheet puts them, each CRC-32/MPEG-2 little-endian over its range.
      CHECK(le32(p, 784) == hesai::crc32_mpeg2(std::span(p).subspan(12, 784 - 12)));
      CHECK(le32(p, 801) == hesai::crc32_mpeg2(std::span(p).subspan(789, 801 - 789)));
      CHECK(le32(p, 857) == hesai::crc32_mpeg2(std::span(p).subspan(805, 857 - 805)));
    }
    // The rolling counter moves on every 5 ms: nebula sees the block change within a scan.
    CHECK(rolling.size() == 8);
  }
  // nebula's timing: a point is the packet's time + 43.346 us + its channel's offset, from the
  // packet's last block: so the packet is stamped 43.346 us before that block starts.
  const double firing_s = 1.0 / 18000.0;
  CHECK(single.times[0] == Approx(kFrameStart + firing_s - 43.346e-6).margin(1e-9));
  CHECK(dual.times[3] == Approx(kFrameStart + 3 * firing_s - 43.346e-6).margin(1e-9));
}

TEST_CASE("OT128 model row: the real unit's calibration nebula ships",
          "[format][hesai][registry]") {
  const SensorModel& model = *find_sensor_model("pandar-ot128");
  std::ifstream in(std::string(LIDAREMU_TEST_DATA) + "/hesai/Pandar128E4X.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  CHECK(line == "Laser id,Elevation,Azimuth");
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    int id = 0;
    double elevation = 0, azimuth = 0;
    char comma = 0;
    fields >> id >> comma >> elevation >> comma >> azimuth;
    REQUIRE(id == static_cast<int>(rows) + 1);
    CHECK(model.elevation_deg[rows] == elevation);
    CHECK(model.azimuth_offset_deg[rows] == azimuth);
    ++rows;
  }
  CHECK(rows == 128);
  CHECK(model.hesai.ptc_model == 42);
  CHECK(model.hesai.ptc_inventory_bytes == 162);
  // The calibration the unit serves on PTC 0x05 and writes with --calibration-out: nebula's
  // reader takes it back to the same angles.
  const auto back = hesai::parse_calibration_csv(hesai::calibration_csv(model));
  CHECK(back.elevation_deg == model.elevation_deg);
  CHECK(back.azimuth_offset_deg == model.azimuth_offset_deg);
}
