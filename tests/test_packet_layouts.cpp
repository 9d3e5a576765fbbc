// Packet layouts of the echo modes through the pipeline and the encoders: VLP-16 dual and last
// return as the real captures lay them out, packets in time order, and the bench's return
// counts against the spec decoders.
#include <catch2/catch.hpp>
#include <cmath>

#include "daemon_process.hpp"
#include "lidaremu/clients/bench.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/packet_decoder.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/velodyne.hpp"
#include "pipeline_run.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using lidaremu::test::CollectingSink;
using lidaremu::test::pattern_for;
using lidaremu::test::run;
using lidaremu::test::scene_frame;
using lidaremu::test::settings_for;

TEST_CASE("Encoders emit every packet, data and telemetry, in time order", "[format][pacing]") {
  // A packet earlier than its predecessor makes a realtime pacer re-anchor and fall behind
  // (seen: Ouster IMU packets sent after the whole frame's lidar packets).
  for (const char* model : {"vlp16", "os1-64"}) {
    INFO(model);
    const auto packets = run(model, PhysicsMode::kIdeal, 1, 3);
    for (std::size_t i = 1; i < packets.size(); ++i)
      REQUIRE(packets[i].time_s >= packets[i - 1].time_s);
  }
}

namespace {

// A VLP-16 frame where every beam hits a wall at 10 m with its centre ray, and on every fourth
// column a second ray reaches a wall at 30 m (a mixed pixel); elsewhere both rays hit 10 m.
FrameHits mixed_pixel_frame(const ScanPattern& pattern, std::size_t& mixed) {
  const BeamGeometry g(pattern);
  FrameHits f;
  f.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
             static_cast<std::uint16_t>(pattern.model->channels)},
            {2, 1});
  f.clear(0);
  f.columns_received = f.shape.columns;
  mixed = 0;
  for (std::size_t b = 0; b < f.shape.beams(); ++b) {
    const auto column = static_cast<std::uint32_t>(b / f.shape.channels);
    const Eigen::Vector3d d =
        g.ray(column, static_cast<std::uint16_t>(b % f.shape.channels)).direction;
    for (int ray = 0; ray < 2; ++ray) {
      const double range = ray == 1 && column % 4 == 0 ? 30.0 : 10.0;
      const std::size_t i = f.hit(b, static_cast<std::size_t>(ray), 0);
      f.x[i] = static_cast<float>(d.x() * range);
      f.y[i] = static_cast<float>(d.y() * range);
      f.z[i] = static_cast<float>(d.z() * range);
      f.nx[i] = static_cast<float>(-d.x());
      f.ny[i] = static_cast<float>(-d.y());
      f.nz[i] = static_cast<float>(-d.z());
      f.material[i] = 8;
    }
    mixed += column % 4 == 0;
  }
  return f;
}

std::vector<CollectingSink::Packet> encode_with(ReturnMode echoes, const FrameHits& hits) {
  const auto pattern = pattern_for("vlp16");
  const auto materials = MaterialTable::load(test::materials_path());
  auto s = settings_for(pattern, PhysicsMode::kIdeal, 1);
  s.return_mode = echoes;
  Pipeline pipeline(pattern, materials, s);
  auto encoder = make_encoder(pattern, {992200000001ull, 0x123456}, echoes);
  REQUIRE(encoder);
  CollectingSink sink;
  FrameReturns returns;
  pipeline.process(hits, returns);
  encoder->encode_frame(returns, 1000.0, sink);
  encoder->flush(sink);
  return sink.packets;
}

}  // namespace

TEST_CASE("VLP-16 dual return: the real capture's layout, both echoes of a mixed pixel",
          "[format][velodyne][dual]") {
  // What the real dual capture shows: return mode 0x39, block pairs sharing an azimuth, and the
  // packet time step.
  PcapReader pcap(test::data_path("velodyne/vlp16_dual.pcap"));
  std::vector<std::uint32_t> real_steps;
  std::uint32_t previous = 0;
  while (auto d = pcap.next()) {
    if (d->destination_port != 2368) continue;
    REQUIRE(d->payload.size() == 1206);
    CHECK(d->payload[1204] == velodyne::kDual);
    for (int b = 0; b < 12; b += 2) {
      CHECK(load_le<std::uint16_t>(d->payload, 100 * b + 2) ==
            load_le<std::uint16_t>(d->payload, 100 * (b + 1) + 2));
    }
    const auto stamp = load_le<std::uint32_t>(d->payload, 1200);
    if (previous) real_steps.push_back(stamp - previous);
    previous = stamp;
  }
  std::sort(real_steps.begin(), real_steps.end());
  const std::uint32_t real_step = real_steps[real_steps.size() / 2];

  std::size_t mixed = 0;
  const auto pattern = pattern_for("vlp16");
  const auto hits = mixed_pixel_frame(pattern, mixed);
  const auto packets = encode_with(ReturnMode::kDual, hits);
  velodyne::SpecDecoder decoder(*pattern.model);
  std::vector<std::uint32_t> steps;
  std::size_t data = 0, differing = 0, same = 0;
  previous = 0;
  for (const auto& p : packets) {
    if (p.channel == PacketChannel::kTelemetry) continue;
    ++data;
    REQUIRE(p.bytes.size() == 1206);
    CHECK(p.bytes[1204] == velodyne::kDual);
    const auto stamp = load_le<std::uint32_t>(p.bytes, 1200);
    if (previous) steps.push_back(stamp - previous);
    previous = stamp;
    for (int b = 0; b < 12; b += 2) {
      REQUIRE(load_le<std::uint16_t>(p.bytes, 100 * b + 2) ==
              load_le<std::uint16_t>(p.bytes, 100 * (b + 1) + 2));
      for (int slot = 0; slot < 32; ++slot) {
        const auto last = load_le<std::uint16_t>(p.bytes, 100 * b + 4 + 3 * slot);
        const auto strongest = load_le<std::uint16_t>(p.bytes, 100 * (b + 1) + 4 + 3 * slot);
        if (last == 0) continue;
        if (last == strongest) {
          ++same;
          continue;
        }
        // The even block holds the last return (the far wall), the odd one the strongest.
        ++differing;
        CHECK(last * 0.002 == Approx(30.0).margin(0.002));
        CHECK(strongest * 0.002 == Approx(10.0).margin(0.002));
      }
    }
  }
  CHECK(differing == mixed);
  CHECK(same == hits.shape.beams() - mixed);
  // Half the single-return period: 12 firing sequences per packet, as in the real capture.
  std::sort(steps.begin(), steps.end());
  CHECK(steps[steps.size() / 2] == 664);  // 663.552 us, rounded to whole microseconds
  CHECK(std::abs(static_cast<int>(real_step) - 664) <= 1);
  CHECK(data == (1808 + 11) / 12);  // every sequence of the frame, 12 per packet
  // The spec decoder reads the pairs as last (kind 1) and strongest (kind 2).
  std::vector<velodyne::Point> points;
  for (const auto& p : packets) {
    if (p.channel == PacketChannel::kData)
      REQUIRE(decoder.decode(p.bytes, points) == velodyne::DecodeError::kNone);
  }
  std::size_t far_last = 0;
  for (const auto& pt : points) far_last += pt.return_kind == 1 && pt.distance_m > 20;
  CHECK(far_last == mixed);
}

TEST_CASE("VLP-16 last return: mode byte 0x38 and the far echo of every mixed pixel",
          "[format][velodyne]") {
  std::size_t mixed = 0;
  const auto pattern = pattern_for("vlp16");
  const auto packets = encode_with(ReturnMode::kLast, mixed_pixel_frame(pattern, mixed));
  velodyne::SpecDecoder decoder(*pattern.model);
  std::vector<velodyne::Point> points;
  std::size_t data = 0;
  for (const auto& p : packets) {
    if (p.channel != PacketChannel::kData) continue;
    ++data;
    CHECK(p.bytes[1204] == velodyne::kLast);
    REQUIRE(decoder.decode(p.bytes, points) == velodyne::DecodeError::kNone);
  }
  CHECK(data == (1808 + 23) / 24);
  std::size_t far = 0;
  for (const auto& pt : points) far += pt.distance_m > 20;
  CHECK(far == mixed);
  CHECK(points.size() == std::size_t{1808} * 16);
  CHECK(make_encoder(pattern, {}, ReturnMode::kTriple) == nullptr);
  CHECK(make_encoder(pattern_for("os1-64"), {}, ReturnMode::kDual) == nullptr);
}

TEST_CASE("The bench counts the returns the spec decoders find, in every layout",
          "[bench][format]") {
  const auto materials = MaterialTable::load(test::materials_path());
  for (const char* model : {"vlp16", "vls128"}) {
    for (const ReturnMode echoes : {ReturnMode::kStrongest, ReturnMode::kDual}) {
      INFO(model << (echoes == ReturnMode::kDual ? " dual" : " strongest"));
      const auto pattern = pattern_for(model);
      auto settings = settings_for(pattern, PhysicsMode::kDefault, 7);
      settings.return_mode = echoes;
      Pipeline pipeline(pattern, materials, settings);
      FrameReturns returns;
      pipeline.process(scene_frame(pattern, 0), returns);
      auto encoder = make_encoder(pattern, {}, echoes);
      CollectingSink sink;
      encoder->encode_frame(returns, 1000.0, sink);
      velodyne::SpecDecoder decoder(*pattern.model);
      const auto counter = make_packet_decoder(pattern, {.return_mode = echoes});
      std::vector<velodyne::Point> points;
      std::size_t counted = 0;
      for (const auto& p : sink.packets) {
        if (p.channel != PacketChannel::kData) continue;
        REQUIRE(decoder.decode(p.bytes, points) == velodyne::DecodeError::kNone);
        counted += counter->count_returns(p.bytes);
      }
      CHECK(points.size() > 1000);
      CHECK(counted == points.size());
    }
  }
  const std::pair<const char*, OusterProfile> profiles[] = {
      {"legacy", OusterProfile::kLegacy},
      {"rng19", OusterProfile::kRng19},
      {"rng19-dual", OusterProfile::kRng19Dual},
      {"rng15", OusterProfile::kRng15}};
  for (const auto& [name, profile] : profiles) {
    INFO(name);
    const auto pattern = pattern_for("os1-64");
    const auto echoes =
        profile == OusterProfile::kRng19Dual ? ReturnMode::kTwoStrongest : ReturnMode::kStrongest;
    auto settings = settings_for(pattern, PhysicsMode::kDefault, 7);
    settings.return_mode = echoes;
    Pipeline pipeline(pattern, materials, settings);
    FrameReturns returns;
    pipeline.process(scene_frame(pattern, 0), returns);
    OusterOutput output;
    output.profile = profile;
    auto encoder = make_encoder(pattern, {}, echoes, output);
    CollectingSink sink;
    encoder->encode_frame(returns, 1000.0, sink);
    ouster::MetadataSettings meta;
    meta.output = output;
    ouster::SpecDecoder decoder(ouster::parse_metadata(ouster::metadata_json(pattern, {}, meta)));
    const auto counter = make_packet_decoder(pattern, {.return_mode = echoes, .profile = profile});
    std::vector<ouster::Column> columns;
    std::size_t decoded = 0, counted = 0;
    for (const auto& p : sink.packets) {
      if (p.channel != PacketChannel::kData) continue;
      columns.clear();
      REQUIRE(decoder.decode(p.bytes, columns) == ouster::DecodeError::kNone);
      for (const auto& c : columns) {
        for (const auto& px : c.pixels) decoded += (px.range_mm != 0) + (px.range2_mm != 0);
      }
      counted += counter->count_returns(p.bytes);
    }
    CHECK(decoded > 1000);
    CHECK(counted == decoded);
  }
}
