// The Hesai encoder, checked by decoding what it emits with the spec decoder (itself checked on
// the real captures by test_hesai) and by comparing its streams with the real units' field by
// field.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <tuple>

#include "cloud_match.hpp"
#include "daemon_process.hpp"
#include "demo_frame.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/utc.hpp"

using namespace lidaremu::core;
using lidaremu::test::data_path;
using lidaremu::test::median;
using lidaremu::test::XYZ;

namespace {

class KeepingSink final : public PacketSink {
 public:
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<double> times;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    if (channel != PacketChannel::kData) return;
    data.emplace_back(bytes.begin(), bytes.end());
    times.push_back(sensor_time_s);
  }
};

// 2026-11-25 12:00:00 UTC: the year byte counts from 1900 on the XT (126).
constexpr double kFrameStart = 1795608000.0;

struct Emitted {
  std::vector<XYZ> hits;  // on beams that fire (QT128: half its first 64 channels per column)
  KeepingSink sink;
};

Emitted emit_demo_frame(const SensorModel& model, ReturnMode echoes, int rpm = 600) {
  const auto pattern = *make_rpm_scan(model, rpm).pattern;
  auto frame = lidaremu::test::demo_frame(pattern, echoes);
  Emitted out;
  const auto channels = static_cast<std::size_t>(model.channels);
  for (std::size_t beam = 0; beam < frame.hit_by_beam.size(); ++beam) {
    const XYZ& hit = frame.hit_by_beam[beam];
    const bool missed = hit.x == 0 && hit.y == 0 && hit.z == 0;
    if (!missed && model.hesai.fires(static_cast<int>(beam % channels),
                                     static_cast<std::uint32_t>(beam / channels))) {
      out.hits.push_back(hit);
    }
  }
  auto encoder = make_encoder(pattern, {}, echoes);
  REQUIRE(encoder);
  encoder->encode_frame(frame.returns, kFrameStart, out.sink);
  encoder->flush(out.sink);
  return out;
}

bool has_header_field(const hesai::ModelFormat& format, hesai::Field name) {
  return std::any_of(format.protocol->header.begin(), format.protocol->header.end(),
                     [name](const auto& f) { return f.name == name; });
}

bool has_tail_field(const hesai::ModelFormat& format, hesai::Field name) {
  return std::any_of(format.protocol->tail.begin(), format.protocol->tail.end(),
                     [name](const auto& f) { return f.name == name; });
}

// A tail field of a packet by name.
std::uint64_t tail_field(const hesai::ModelFormat& format, std::span<const std::uint8_t> packet,
                         hesai::Field name) {
  for (const auto& f : format.protocol->tail) {
    if (f.name == name) return load_field(packet, format.tail_at(), f);
  }
  FAIL("no such tail field");
  return 0;
}

// Empty returns of a frame of `pattern`, and a way to put an echo on column 0.
struct ColumnZero {
  explicit ColumnZero(const ScanPattern& pattern) {
    returns.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
                     static_cast<std::uint16_t>(pattern.model->channels)});
  }
  void put(std::uint16_t ch, int echo, float range, std::uint8_t reflectivity) {
    const std::size_t slot = returns.slot(returns.shape.beam(0, ch), echo);
    returns.range_m[slot] = range;
    returns.reflectivity[slot] = reflectivity;
  }
  FrameReturns returns;
};

}  // namespace

TEST_CASE("Every Hesai model and return mode: sizes, bytes, cadence, round trip",
          "[format][hesai][registry]") {
  int models = 0;
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kHesai) continue;
    ++models;
    const hesai::ModelFormat& format = *model->hesai.format;
    CHECK(make_encoder(*make_rpm_scan(*model, model->spin.default_rpm).pattern, {},
                       ReturnMode::kTwoStrongest) == nullptr);
    for (const ReturnMode echoes :
         {ReturnMode::kFirst, ReturnMode::kStrongest, ReturnMode::kLast, ReturnMode::kDual,
          ReturnMode::kFirstLast, ReturnMode::kFirstStrongest}) {
      if (model->hesai.return_mode(echoes) == nullptr) {
        CHECK(make_encoder(*make_rpm_scan(*model, model->spin.default_rpm).pattern, {}, echoes) ==
              nullptr);
        continue;
      }
      for (int rpm = model->spin.min_rpm; rpm <= model->spin.max_rpm; rpm += model->spin.rpm_step) {
        INFO(model->name << " " << return_mode_name(echoes) << " at " << rpm << " rpm");
        const bool dual = reports_two_echoes(echoes);
        const auto pattern = *make_rpm_scan(*model, rpm).pattern;
        const auto emitted = emit_demo_frame(*model, echoes, rpm);
        const auto& packets = emitted.sink.data;
        // A column is a block (two in dual mode): XT32 dual at 600 rpm, 2000 columns in 500
        // packets, one every 200 us; QT128 dual, 900 columns and packets, 111.1 us; QT64 dual
        // 600 columns in 300. The XT32M2X's three columns a dual packet do not divide a turn:
        // the frame's last packet is completed by the flush.
        const int columns_per_packet = format.blocks / (dual ? 2 : 1);
        // The columns that fire: every one, but for a mirror scan's passes (AT128: three of
        // 1,250 columns in a turn of 7,200).
        std::vector<std::uint32_t> firing;
        for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(pattern.columns_per_frame); ++c) {
          if (model->hesai.column_fires_at(c)) firing.push_back(c);
        }
        CHECK(packets.size() == (firing.size() + static_cast<std::size_t>(columns_per_packet) - 1) /
                                    static_cast<std::size_t>(columns_per_packet));
        CHECK(pattern.columns_per_frame ==
              std::lround(60.0 / rpm / (model->hesai.block_period_us * 1e-6)));
        const hesai::SpecDecoder decoder(format, hesai::calibration_of(*model));
        // The 40P sends no UDP sequence (1262 bytes, as the real capture); the 64 appends it.
        const auto& tail = format.protocol->tail;
        const bool sends_sequence =
            format.sends_sequence || std::any_of(tail.begin(), tail.end(), [&](const auto& f) {
              return f.name == hesai::Field::kUdpSequence &&
                     f.offset + f.bytes <= format.protocol->tail_size;
            });
        std::vector<hesai::Point> points;
        std::vector<double> steps_us;
        hesai::PacketInfo previous{};
        for (std::size_t i = 0; i < packets.size(); ++i) {
          const auto& p = packets[i];
          REQUIRE(p.size() == format.sent_size());
          hesai::PacketInfo info;
          REQUIRE(decoder.decode(p, points, &info) == hesai::DecodeError::kNone);
          CHECK(info.return_mode == hesai::return_mode_byte(echoes));
          if (has_header_field(format, hesai::Field::kReturnNum)) {
            CHECK(info.return_num == (dual ? format.dual_return_num : 1));
          }
          CHECK(info.first_block_return == (dual ? format.dual_first_block : 0));
          CHECK(info.flags == format.flags);
          CHECK(info.factory == format.factory);
          CHECK(info.motor_rpm == rpm);
          // The year byte: 2026 counted from the model's base (XT, QT128: 1900; 40P: 2000); the
          // AT128's date is UNIX seconds.
          if (has_tail_field(format, hesai::Field::kYear)) {
            CHECK(tail_field(format, p, hesai::Field::kYear) ==
                  static_cast<std::uint64_t>(2026 - format.protocol->year_base));
          } else {
            CHECK(std::floor(info.time_s) >= kFrameStart);
          }
          CHECK(info.crcs_checked == static_cast<int>(format.protocol->crcs.size()));
          // The tail's time: from the start of the packet's last column (QT64: its first), to
          // the microsecond.
          CHECK(info.time_s == Approx(emitted.sink.times[i]).margin(1.5e-6));
          const auto cpp = static_cast<std::size_t>(columns_per_packet);
          // (A column past the frame's last: the flush's, which go on from it.)
          const std::size_t k = model->hesai.stamp_from_first_column ? i * cpp : (i + 1) * cpp - 1;
          const double stamped_column = static_cast<double>(
              k < firing.size() ? firing[k] : firing.back() + (k - firing.size() + 1));
          CHECK(emitted.sink.times[i] ==
                Approx(kFrameStart + stamped_column * pattern.column_period_s +
                       model->hesai.stamp_after_block_us * 1e-6)
                    .margin(1e-9));
          if (i > 0) {
            if (sends_sequence) CHECK(info.udp_sequence == previous.udp_sequence + 1);
            steps_us.push_back((info.time_s - previous.time_s) * 1e6);
          }
          previous = info;
        }
        CHECK(median(steps_us) ==
              Approx(columns_per_packet * model->hesai.block_period_us).margin(1.0));
        // One point per hit (dual: the one echo in both blocks), each on its hit within half the
        // range quantum along the beam and half the 0.01-degree azimuth quantum across it.
        CHECK(points.size() == emitted.hits.size() * (dual ? 2 : 1));
        std::vector<XYZ> decoded;
        decoded.reserve(points.size());
        for (const auto& p : points) decoded.push_back({p.x, p.y, p.z});
        const auto distances = lidaremu::test::nearest_distances(decoded, emitted.hits);
        std::size_t off = 0;
        for (std::size_t i = 0; i < distances.size(); ++i) {
          off += distances[i] >
                 model->range_unit_m / 2 + 1e-4 + points[i].distance_m * 0.005 * M_PI / 180;
        }
        CHECK(off == 0);
        CHECK(median(distances) < model->range_unit_m / 2 + 0.001);
      }
    }
  }
  CHECK(models == 9);
}

TEST_CASE("Hesai dual return: the last return first, then the strongest or second strongest",
          "[format][hesai]") {
  const SensorModel& model = *find_sensor_model("pandar-xt32");
  const auto pattern = *make_rpm_scan(model, 600).pattern;
  const hesai::ModelFormat& format = *model.hesai.format;
  // Column 0: channel 0 strongest near (10 m) and a last echo at 30 m; channel 1 strongest is
  // the last (30 m) with a second strongest at 10 m; channel 2 one echo at 20 m; channel 3 none.
  ColumnZero column(pattern);
  column.put(0, 0, 10.0f, 90);
  column.put(0, 1, 30.0f, 20);
  column.put(1, 0, 30.0f, 90);
  column.put(1, 1, 10.0f, 20);
  column.put(2, 0, 20.0f, 50);
  const FrameReturns& returns = column.returns;
  KeepingSink sink;
  auto encoder = make_encoder(pattern, {}, ReturnMode::kDual);
  REQUIRE(encoder);
  encoder->encode_columns(returns, kFrameStart, 4, sink);  // one packet: columns 0-3
  REQUIRE(sink.data.size() == 1);
  const auto& p = sink.data[0];
  const auto& protocol = *format.protocol;
  const auto range = [&](int block, int ch) {
    return static_cast<double>(load_field(p, format.record_at(block, ch), protocol.distance)) *
           0.004;
  };
  const auto reflectivity = [&](int block, int ch) {
    return load_field(p, format.record_at(block, ch), protocol.reflectivity);
  };
  CHECK(p[8] == 1);  // header: the first block of a pair is the last return
  CHECK(load_field(p, format.block_at(0), protocol.azimuth) ==
        load_field(p, format.block_at(1), protocol.azimuth));
  CHECK(range(0, 0) == Approx(30.0));  // last
  CHECK(reflectivity(0, 0) == 20);
  CHECK(range(1, 0) == Approx(10.0));  // strongest
  CHECK(reflectivity(1, 0) == 90);
  CHECK(range(0, 1) == Approx(30.0));  // last, which is the strongest...
  CHECK(range(1, 1) == Approx(10.0));  // ...so the second strongest
  CHECK(reflectivity(1, 1) == 20);
  CHECK(range(0, 2) == Approx(20.0));  // one echo: in both blocks
  CHECK(range(1, 2) == Approx(20.0));
  CHECK(range(0, 3) == 0);
  CHECK(reflectivity(0, 3) == 0);
  CHECK(load_field(p, format.block_at(2), protocol.azimuth) == 18);  // 0.18 degree later
}

TEST_CASE("Hesai first + last and first + strongest: the first return leads its pair",
          "[format][hesai]") {
  // Plane 0 the first (first + last) or the strongest (first + strongest), plane 1 the other
  // echo; channel 0 two echoes, channel 1 one, channel 2 none.
  for (const auto& [name, echoes, first_plane] :
       {std::tuple{"pandar-qt64", ReturnMode::kFirstLast, 0},
        std::tuple{"pandar-xt32m", ReturnMode::kFirstStrongest, 1}}) {
    INFO(name);
    const SensorModel& model = *find_sensor_model(name);
    const auto pattern = *make_rpm_scan(model, 600).pattern;
    const hesai::ModelFormat& format = *model.hesai.format;
    ColumnZero column(pattern);
    column.put(0, first_plane, 10.0f, 20);      // the first
    column.put(0, 1 - first_plane, 30.0f, 90);  // the last, or the strongest
    column.put(1, 0, 20.0f, 50);
    const FrameReturns& returns = column.returns;
    KeepingSink sink;
    auto encoder = make_encoder(pattern, {}, echoes);
    REQUIRE(encoder);
    encoder->encode_columns(returns, kFrameStart, returns.shape.columns, sink);
    REQUIRE_FALSE(sink.data.empty());
    const auto& p = sink.data[0];
    const auto& protocol = *format.protocol;
    const auto range = [&](int block, int ch) {
      return static_cast<double>(load_field(p, format.record_at(block, ch), protocol.distance)) *
             model.range_unit_m;
    };
    CHECK(p[8] == format.dual_first_block);  // as the real captures: 1
    CHECK(p[10] == format.dual_return_num);  // QT64 2, XT32M2X 3
    CHECK(range(0, 0) == Approx(10.0));      // the first...
    CHECK(load_field(p, format.record_at(0, 0), protocol.reflectivity) == 20);
    CHECK(range(1, 0) == Approx(30.0));  // ...then the other
    CHECK(load_field(p, format.record_at(1, 0), protocol.reflectivity) == 90);
    CHECK(range(0, 1) == Approx(20.0));  // one echo: in both blocks
    CHECK(range(1, 1) == Approx(20.0));
    CHECK(range(0, 2) == 0);
    CHECK(range(1, 2) == 0);
  }
}

TEST_CASE("Hesai: emitted streams match the real captures field by field",
          "[format][hesai][real]") {
  struct Capture {
    const char* model;
    const char* pcap;
    ReturnMode return_mode;        // the capture's dual mode
    std::size_t packets_per_turn;  // at 600 rpm
  };
  // XT32M2X: 2000 columns a turn, three a packet: 666.7 packets, the last completed by the flush.
  for (const auto& [name, pcap_file, echoes, packets_per_turn] :
       {Capture{"pandar-xt32", "hesai/nebula_hesai_xt32.pcap", ReturnMode::kDual, 500},
        Capture{"pandar-xt16", "hesai/nebula_hesai_xt16.pcap", ReturnMode::kDual, 500},
        Capture{"pandar-xt32m", "hesai/nebula_hesai_xt32m.pcap", ReturnMode::kFirstStrongest, 667},
        Capture{"pandar-qt128", "hesai/nebula_hesai_qt128.pcap", ReturnMode::kDual, 900},
        Capture{"pandar-qt64", "hesai/nebula_hesai_qt64.pcap", ReturnMode::kFirstLast, 300},
        Capture{"pandar-40p", "hesai/nebula_hesai_40p.pcap", ReturnMode::kDual, 360},
        Capture{"pandar-64", "hesai/nebula_hesai_64.pcap", ReturnMode::kDual, 600}}) {
    INFO(name);
    const SensorModel& model = *find_sensor_model(name);
    const hesai::ModelFormat& format = *model.hesai.format;
    const auto emitted = emit_demo_frame(model, echoes);
    PcapReader pcap(data_path(pcap_file));
    std::vector<std::vector<std::uint8_t>> real;
    while (auto d = pcap.next()) real.push_back(d->payload);
    REQUIRE(real.size() > 100);
    const hesai::SpecDecoder decoder(format, hesai::calibration_of(model));
    struct Stream {
      std::size_t size = 0;
      std::vector<std::uint8_t> header;
      std::uint8_t return_mode = 0, factory = 0;
      int rpm = 0;
      double step_us = 0, azimuth_step = 0;
      std::size_t unequal_pairs = 0, bad_confidence = 0;
      // Pairs of blocks whose two echoes differ: the even block's the nearer, or the odd one's.
      std::size_t even_nearer = 0, odd_nearer = 0;
      // QT128: returns on a channel its packet's firing loop (the mode flag) does not fire, and
      // the loops seen.
      std::size_t off_loop = 0;
      std::set<std::uint64_t> loops;
    };
    const auto describe = [&](const std::vector<std::vector<std::uint8_t>>& packets) {
      Stream s;
      s.size = packets[0].size();
      // The pre-header and header (none on the 40P).
      s.header.assign(packets[0].begin(), packets[0].begin() + static_cast<std::ptrdiff_t>(
                                                                   format.protocol->first_block));
      std::vector<double> steps, azimuth_steps;
      hesai::PacketInfo previous{};
      std::vector<hesai::Point> points;
      for (std::size_t i = 0; i < packets.size(); ++i) {
        const auto& p = packets[i];
        hesai::PacketInfo info;
        REQUIRE(decoder.decode(p, points, &info) == hesai::DecodeError::kNone);
        s.return_mode = info.return_mode;
        s.factory = info.factory;
        s.rpm = info.motor_rpm;
        const auto& protocol = *format.protocol;
        for (int b = 0; b < format.blocks; b += 2) {
          s.unequal_pairs += load_field(p, format.block_at(b), protocol.azimuth) !=
                             load_field(p, format.block_at(b + 1), protocol.azimuth);
          for (int ch = 0; ch < format.lasers; ++ch) {
            const auto even = load_field(p, format.record_at(b, ch), protocol.distance);
            const auto odd = load_field(p, format.record_at(b + 1, ch), protocol.distance);
            if (even == 0 || odd == 0) continue;
            s.even_nearer += even < odd;
            s.odd_nearer += odd < even;
          }
        }
        if (protocol.confidence.bytes != 0) {
          s.bad_confidence +=
              load_field(p, format.record_at(0, 0), protocol.confidence) != format.confidence;
        }
        if (model.hesai.firing_loops > 1) {
          const auto loop = tail_field(format, p, hesai::Field::kModeFlag) & 1;
          s.loops.insert(loop);
          for (int b = 0; b < format.blocks; ++b) {
            for (int ch = 0; ch < format.lasers; ++ch) {
              s.off_loop += load_field(p, format.record_at(b, ch), protocol.distance) != 0 &&
                            !model.hesai.fires(ch, static_cast<std::uint32_t>(loop));
            }
          }
        }
        if (i > 0) {
          steps.push_back((info.time_s - previous.time_s) * 1e6);
          double da =
              static_cast<double>(load_field(p, format.block_at(0), protocol.azimuth)) -
              static_cast<double>(load_field(packets[i - 1], format.block_at(0), protocol.azimuth));
          azimuth_steps.push_back(da < 0 ? da + 36000 : da);
        }
        previous = info;
      }
      s.step_us = median(steps);
      s.azimuth_step = median(azimuth_steps);
      return s;
    };
    const Stream e = describe(emitted.sink.data);
    const Stream r = describe(real);
    CHECK(e.size == r.size);
    CHECK(e.header == r.header);  // EE FF 06 01 00 00, lasers, blocks, 01, 04, 02, 01
    CHECK(e.return_mode == r.return_mode);
    CHECK(e.factory == r.factory);
    CHECK(e.rpm == Approx(r.rpm).margin(2));  // the real unit reports its measured 599
    CHECK(e.unequal_pairs == 0);
    CHECK(r.unequal_pairs == 0);
    CHECK(e.bad_confidence == 0);
    CHECK(r.bad_confidence == 0);
    // Which echo leads its pair where the two differ: the first in the first + last and
    // first + strongest captures, the last (the farther) in last + strongest, as
    // paired_block_slot writes them (QT128: 14 pairs of 8,425 the other way). The XT32 capture
    // alone puts the last second, against its manual and the XT16's capture: we follow those.
    INFO("real pairs: even block nearer " << r.even_nearer << ", odd " << r.odd_nearer);
    const bool nearer_leads =
        echoes != ReturnMode::kDual || std::string_view(name) == "pandar-xt32";
    const std::size_t leading = nearer_leads ? r.even_nearer : r.odd_nearer;
    const std::size_t other = nearer_leads ? r.odd_nearer : r.even_nearer;
    CHECK(leading > 4000);
    CHECK(other * 500 < leading);
    // The firing loops: the real unit's returns all on the channels its mode flag's loop
    // fires, as the emitted ones.
    CHECK(r.off_loop == 0);
    CHECK(e.off_loop == 0);
    CHECK(e.loops == r.loops);
    INFO("real: " << r.step_us << " us, " << r.azimuth_step << " x 0.01 deg per packet; emitted "
                  << e.step_us << " us, " << e.azimuth_step);
    CHECK(e.step_us == Approx(r.step_us).margin(1.0));            // XT 200 us, QT128 111.1 us
    CHECK(e.azimuth_step == Approx(r.azimuth_step).margin(0.5));  // XT 0.72, QT128 0.4 degree
    CHECK(emitted.sink.data.size() == packets_per_turn);          // a turn at 600 rpm
  }
}

TEST_CASE("Hesai GPS packet: every byte as the manual lays it out", "[format][hesai][gps]") {
  // 2026-11-25 12:00:00 UTC, 250 us past the PPS edge, at 48.1 N 11.5 E.
  SensorIdentity identity;
  identity.latitude_deg = 48.1;
  identity.longitude_deg = 11.5;
  const auto p = hesai::gps_packet(1795608000, 250, identity);
  REQUIRE(p.size() == 512);
  CHECK(p[0] == 0xFF);  // the flag, 0xFF first
  CHECK(p[1] == 0xEE);
  // Two ASCII digits each, units first: year 26, month 11, day 25, second 00, minute 00, hour 12.
  const std::string digits(p.begin() + 2, p.begin() + 14);
  CHECK(digits == std::string("62") + "11" + "52" + "00" + "00" + "21");
  CHECK((p[14] | (p[15] << 8) | (p[16] << 16) | (p[17] << 24)) == 250);
  const std::string nmea(reinterpret_cast<const char*>(p.data() + 18));
  CHECK(nmea.rfind("$GPRMC,120000,A,4806.0000,N,01130.0000,E,", 0) == 0);
  CHECK(nmea.find(",251126,") != std::string::npos);  // ddmmyy
  CHECK(nmea.size() < 100);
  // The NMEA checksum: XOR of everything between '$' and '*'.
  const auto star = nmea.find('*');
  REQUIRE(star != std::string::npos);
  std::uint8_t checksum = 0;
  for (std::size_t i = 1; i < star; ++i) checksum ^= static_cast<std::uint8_t>(nmea[i]);
  CHECK(std::stoi(nmea.substr(star + 1, 2), nullptr, 16) == checksum);
  CHECK(std::all_of(p.begin() + 18 + static_cast<std::ptrdiff_t>(nmea.size()), p.begin() + 118,
                    [](std::uint8_t b) { return b == 0; }));
  CHECK(std::all_of(p.begin() + 118, p.begin() + 506, [](std::uint8_t b) { return b == 0xDF; }));
  CHECK(p[506] == 'A');  // positioning status: valid
  CHECK(p[507] == 1);    // PPS locked
  CHECK(std::all_of(p.begin() + 508, p.end(), [](std::uint8_t b) { return b == 0; }));

  hesai::GpsInfo info;
  REQUIRE(hesai::read_gps_packet(p, info) == hesai::GpsError::kNone);
  CHECK(info.unix_second == 1795608000);
  CHECK(info.micros == 250);
  CHECK(info.positioning_status == 'A');
  CHECK(info.pps_locked);
  CHECK(info.nmea == nmea);
  // What the reader refuses.
  CHECK(hesai::read_gps_packet(std::span(p).first(511), info) == hesai::GpsError::kWrongSize);
  auto bad = p;
  bad[0] = 0xEE;
  CHECK(hesai::read_gps_packet(bad, info) == hesai::GpsError::kBadFlag);
  bad = p;
  bad[2] = 'x';
  CHECK(hesai::read_gps_packet(bad, info) == hesai::GpsError::kBadDigits);
  bad = p;
  bad[4] = '3';  // month 13
  CHECK(hesai::read_gps_packet(bad, info) == hesai::GpsError::kBadDate);
  // A simulation clock from 1970: the year still two digits (70, read from 2000 as the SDK
  // does), the rest of the date right.
  const auto early = hesai::gps_packet(86400 * 31, 0, identity);  // 1970-02-01
  REQUIRE(hesai::read_gps_packet(early, info) == hesai::GpsError::kNone);
  CHECK(std::string(early.begin() + 2, early.begin() + 8) == "072010");
}

TEST_CASE(
    "Hesai GPS packets: one for each whole second the stream passes, on the models that "
    "send them",
    "[format][hesai][gps]") {
  class TelemetrySink final : public PacketSink {
   public:
    std::vector<std::vector<std::uint8_t>> gps;
    std::vector<double> gps_times, data_times;
    void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes,
                   double sensor_time_s) override {
      if (channel == PacketChannel::kData) {
        data_times.push_back(sensor_time_s);
        return;
      }
      gps.emplace_back(bytes.begin(), bytes.end());
      gps_times.push_back(sensor_time_s);
    }
  };
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kHesai) continue;
    INFO(model->name);
    const auto pattern = *make_rpm_scan(*model, model->spin.default_rpm).pattern;
    auto frame = lidaremu::test::demo_frame(pattern, default_return_mode(*model));
    auto encoder = make_encoder(pattern, {}, default_return_mode(*model));
    REQUIRE(encoder);
    TelemetrySink sink;
    // 20 frames of 0.1 s from 0.35 s before a whole second: the stream passes 2 whole seconds.
    const double start = kFrameStart - 0.35;
    for (int f = 0; f < 20; ++f) encoder->encode_frame(frame.returns, start + f * 0.1, sink);
    if (!model->hesai.sends_gps) {
      CHECK(sink.gps.empty());
      continue;
    }
    REQUIRE(sink.gps.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      hesai::GpsInfo info;
      REQUIRE(hesai::read_gps_packet(sink.gps[i], info) == hesai::GpsError::kNone);
      const auto second = static_cast<std::int64_t>(kFrameStart) + static_cast<std::int64_t>(i);
      CHECK(info.unix_second == second);
      // Sent with the first data packet past the edge: within one packet period of it.
      CHECK(sink.gps_times[i] >= static_cast<double>(second));
      CHECK(info.micros ==
            Approx((sink.gps_times[i] - static_cast<double>(second)) * 1e6).margin(1.0));
      CHECK(sink.gps_times[i] - static_cast<double>(second) <
            encoder->data_packet_period_s() + 1e-3);
    }
  }
}
