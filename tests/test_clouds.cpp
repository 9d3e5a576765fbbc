// Decoded clouds and their files: every decoded point carries the object id of the echo that
// made it, checked against where the point lies (BeamGeometry::locate), not against the
// decoder's own bookkeeping; every export is read back by a reader written from its format.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "daemon_process.hpp"
#include "lidaremu/clients/birds_eye.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/cloud.hpp"
#include "lidaremu/core/cloud_export.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/scan_table.hpp"

using namespace lidaremu::core;

namespace {

constexpr std::uint32_t kIdsPerFrame = 4'000'000;  // over two ids a beam of the largest frame

// Echo e of beam b in frame f: object f * 1e6 + 2b + 1 + e, at a range that says nothing of it.
// Every fifth beam misses; the second echo (dual modes) lies 3 m behind the first.
std::uint32_t object_for(std::uint32_t frame, std::size_t beam, int echo) {
  return frame * kIdsPerFrame + static_cast<std::uint32_t>(2 * beam + 1) +
         static_cast<std::uint32_t>(echo);
}

FrameReturns synthetic_returns(const ScanPattern& pattern, std::uint32_t frame, bool dual) {
  FrameReturns r;
  r.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
             static_cast<std::uint16_t>(pattern.model->channels)});
  r.frame_number = frame;
  for (std::size_t beam = 0; beam < r.shape.beams(); ++beam) {
    if (beam % 5 == 0) continue;
    const float range = 5.0f + static_cast<float>((beam * 7) % 37) * 0.25f;
    for (int echo = 0; echo < (dual ? 2 : 1); ++echo) {
      const std::size_t slot = r.slot(beam, echo);
      r.range_m[slot] = range + 3.0f * static_cast<float>(echo);
      r.reflectivity[slot] = static_cast<std::uint8_t>(10 + beam % 200);
      r.object_id[slot] = object_for(frame, beam, echo);
    }
  }
  return r;
}

class PacketsByFrame final : public PacketSink {
 public:
  std::vector<std::vector<std::vector<std::uint8_t>>> frames;
  void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes, double) override {
    if (channel == PacketChannel::kData) frames.back().emplace_back(bytes.begin(), bytes.end());
  }
};

struct DecodedRun {
  Cloud cloud;
  std::size_t returns_in_frame = 0;
  int bad_packets = 0;
};

// Two frames through the model's encoder; the second frame's packets decoded into a cloud, with
// the first frame as `previous`.
DecodedRun decode_second_frame(const ScanPattern& pattern, ReturnMode echoes,
                               const OusterOutput& output = {}) {
  const bool dual = reports_two_echoes(echoes);
  const SensorIdentity identity{992200000011ull, 0x42};
  auto encoder = make_encoder(pattern, identity, echoes, output);
  REQUIRE(encoder);
  PacketsByFrame sink;
  std::vector<FrameTruth> truths(2);
  for (std::uint32_t f = 1; f <= 2; ++f) {
    const FrameReturns returns = synthetic_returns(pattern, f, dual);
    truths[f - 1].assign(returns);
    sink.frames.emplace_back();
    encoder->encode_frame(returns, 100.0 + f * pattern.frame_period_s, sink);
  }
  std::optional<ouster::Metadata> metadata;
  if (pattern.model->family == SensorFamily::kOuster) {
    metadata = ouster::parse_metadata(ouster::metadata_json(pattern, identity, {.output = output}));
  }
  CloudDecoder decoder(pattern, metadata, echoes);
  std::vector<std::span<const std::uint8_t>> packets(sink.frames[1].begin(), sink.frames[1].end());
  DecodedRun run;
  run.bad_packets = decoder.decode(packets, truths[1], truths[0], run.cloud);
  for (const float r : truths[1].range_m) run.returns_in_frame += r > 0 ? 1 : 0;
  return run;
}

// The id each point must carry, from where it lies: the beam its position belongs to, the echo
// its range says, the frame its column says.
void check_ids_by_position(const ScanPattern& pattern, const DecodedRun& run) {
  const BeamGeometry geometry(pattern);
  const auto channels = static_cast<std::size_t>(pattern.model->channels);
  std::size_t wrong = 0, from_previous = 0;
  for (const auto& p : run.cloud.points) {
    const BeamIndex beam = geometry.locate(Eigen::Vector3d(p.x, p.y, p.z));
    const std::size_t b = std::size_t{beam.column} * channels + beam.channel;
    const float first_range = 5.0f + static_cast<float>((b * 7) % 37) * 0.25f;
    const int echo = p.range_m > first_range + 1.5f ? 1 : 0;
    const std::uint32_t frame = p.object_id / kIdsPerFrame;
    if (frame == 1) ++from_previous;
    if (p.object_id != object_for(frame, b, echo) || (frame != 1 && frame != 2)) ++wrong;
  }
  INFO(run.cloud.points.size() << " points, " << from_previous << " from the previous frame");
  CHECK(wrong == 0);
  CHECK(run.bad_packets == 0);
  // One revolution's worth: the frame's returns give or take what one packet carries.
  CHECK(static_cast<double>(run.cloud.points.size()) >= 0.98 * run.returns_in_frame);
  CHECK(static_cast<double>(run.cloud.points.size()) <= 1.02 * run.returns_in_frame);
}

}  // namespace

TEST_CASE("Decoded Velodyne clouds carry the ground-truth id of each echo", "[cloud]") {
  for (const char* name : {"vlp16", "vlp32c", "vls128"}) {
    for (const ReturnMode echoes : {ReturnMode::kStrongest, ReturnMode::kDual}) {
      INFO(name << (echoes == ReturnMode::kDual ? " dual" : " strongest"));
      const auto pattern = *make_rpm_scan(*find_sensor_model(name), 600).pattern;
      const DecodedRun run = decode_second_frame(pattern, echoes);
      check_ids_by_position(pattern, run);
      // Velodyne packets do not break at frame ends: the first ones finish the previous frame
      // (a VLP-16 frame ends inside a 24-column packet).
      std::size_t tail = 0;
      for (const auto& p : run.cloud.points) tail += p.object_id / kIdsPerFrame == 1 ? 1 : 0;
      if (std::string(name) == "vlp16") CHECK(tail > 0);
      CHECK(tail < run.cloud.points.size() / 20);
    }
  }
}

TEST_CASE("Decoded RoboSense clouds carry the ground-truth id of each echo", "[cloud]") {
  for (const char* name : {"rs-helios", "rs-bpearl", "rs16", "rs32"}) {
    for (const ReturnMode echoes : {ReturnMode::kStrongest, ReturnMode::kDual}) {
      INFO(name << (echoes == ReturnMode::kDual ? " dual" : " strongest"));
      const auto pattern = *make_rpm_scan(*find_sensor_model(name), 600).pattern;
      const DecodedRun run = decode_second_frame(pattern, echoes);
      check_ids_by_position(pattern, run);
      // Every dual point names its echo: the strongest block first (echo 0), then the other.
      if (echoes == ReturnMode::kDual) {
        CHECK(std::any_of(run.cloud.points.begin(), run.cloud.points.end(),
                          [](const CloudPoint& p) { return p.echo == 1; }));
      }
    }
  }
}

TEST_CASE("Decoded Hesai clouds put each echo on the beam its ground-truth id names", "[cloud]") {
  // Every Hesai model in every return mode it has. A point is checked against the beam its id
  // names (the AT128's mirror beams are not locatable from a position alone): along that beam's
  // direction to 0.06 degree (the packets' 0.01 degree steps), at its range to a range unit.
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kHesai) continue;
    for (const ReturnMode echoes : family_of(*model).return_modes(*model)) {
      INFO(model->name << " return mode " << static_cast<int>(echoes));
      const auto pattern = *make_rpm_scan(*model, model->spin.default_rpm).pattern;
      const DecodedRun run = decode_second_frame(pattern, echoes);
      const BeamGeometry geometry(pattern);
      const auto channels = static_cast<std::size_t>(model->channels);
      std::size_t wrong = 0;
      for (const auto& p : run.cloud.points) {
        const std::uint32_t frame = p.object_id / kIdsPerFrame;
        const std::uint32_t id = p.object_id % kIdsPerFrame - 1;
        const std::size_t beam = id / 2;
        const BeamRay ray = geometry.ray(static_cast<std::uint32_t>(beam / channels),
                                         static_cast<std::uint16_t>(beam % channels));
        const float range =
            5.0f + static_cast<float>((beam * 7) % 37) * 0.25f + 3.0f * static_cast<float>(id % 2);
        const Eigen::Vector3d v(p.x, p.y, p.z);
        wrong += (frame != 1 && frame != 2) ||
                 !model->hesai.fires(static_cast<int>(beam % channels),
                                     static_cast<std::uint32_t>(beam / channels)) ||
                 (v - ray.origin).normalized().dot(ray.direction) < 0.9999995 ||
                 std::fabs(p.range_m - range) > 0.005f;
      }
      INFO(run.cloud.points.size() << " points");
      CHECK(wrong == 0);
      CHECK(run.bad_packets == 0);
      // A beam that does not fire sends nothing: a mirror scan's columns in the facets' dark time
      // between passes (AT128), a QT128 channel outside its column's firing loop.
      std::size_t returns_fired = 0;
      for (std::size_t beam = 0;
           beam < static_cast<std::size_t>(pattern.columns_per_frame) * channels; ++beam) {
        const bool fires = model->hesai.fires(static_cast<int>(beam % channels),
                                              static_cast<std::uint32_t>(beam / channels));
        returns_fired += beam % 5 != 0 && fires ? (reports_two_echoes(echoes) ? 2 : 1) : 0;
      }
      CHECK(static_cast<double>(run.cloud.points.size()) >=
            0.98 * static_cast<double>(returns_fired));
      CHECK(static_cast<double>(run.cloud.points.size()) <=
            1.02 * static_cast<double>(returns_fired));
    }
  }
}

TEST_CASE("Decoded Ouster clouds carry the ground-truth id of each echo", "[cloud]") {
  for (const OusterProfile profile : {OusterProfile::kLegacy, OusterProfile::kRng19Dual}) {
    INFO(ouster::profile_name(profile));
    const auto pattern = *make_ouster_scan(*find_sensor_model("os1-64"), 1024, 10).pattern;
    const DecodedRun run =
        decode_second_frame(pattern, ouster_return_mode(profile), {.profile = profile});
    check_ids_by_position(pattern, run);
    for (const auto& p : run.cloud.points) REQUIRE(p.object_id / kIdsPerFrame == 2);
  }
}

TEST_CASE("Decoded Livox clouds carry the ground-truth id of each echo", "[cloud][livox]") {
  // A table scan's packets carry no beam: each point's id is checked against the beam it lies
  // along in the frame its id names (a beam is locatable only with its frame's table rows).
  const auto table = scan_table_named(kTestPatternName, 4);
  const auto pattern = *make_table_scan(*find_sensor_model("livox-mid360"), table.table).pattern;
  const DecodedRun run = decode_second_frame(pattern, ReturnMode::kFirst);
  const BeamGeometry geometry(pattern);
  std::size_t wrong = 0, from_previous = 0;
  for (const auto& p : run.cloud.points) {
    const std::uint32_t frame = p.object_id / kIdsPerFrame;
    const std::size_t beam = (p.object_id % kIdsPerFrame - 1) / 2;
    const BeamRay ray = geometry.ray_in_frame(frame, static_cast<std::uint32_t>(beam / 4),
                                              static_cast<std::uint16_t>(beam % 4));
    const Eigen::Vector3d v(p.x, p.y, p.z);
    const float range = 5.0f + static_cast<float>((beam * 7) % 37) * 0.25f;
    from_previous += frame == 1;
    wrong += (frame != 1 && frame != 2) || v.normalized().dot(ray.direction) < 0.9999995 ||
             std::fabs(p.range_m - range) > 0.001f;
  }
  INFO(run.cloud.points.size() << " points, " << from_previous << " from the previous frame");
  CHECK(wrong == 0);
  CHECK(run.bad_packets == 0);
  // 5,000 firings are not whole packets: the frame's first packet ends the previous frame (8
  // firings of 24), and its own last 16 firings wait for the next frame's first packet.
  CHECK(from_previous > 0);
  CHECK(from_previous <= 8 * 4);
  CHECK(static_cast<double>(run.cloud.points.size()) >= 0.99 * run.returns_in_frame);
}

TEST_CASE("A Velodyne frame whose previous frame is unknown drops the previous frame's tail",
          "[cloud]") {
  const auto pattern = *make_rpm_scan(*find_sensor_model("vlp16"), 600).pattern;
  auto encoder = make_encoder(pattern, {}, ReturnMode::kStrongest);
  PacketsByFrame sink;
  FrameTruth truth;
  for (std::uint32_t f = 1; f <= 2; ++f) {
    const FrameReturns returns = synthetic_returns(pattern, f, false);
    truth.assign(returns);
    sink.frames.emplace_back();
    encoder->encode_frame(returns, 100.0 + f * pattern.frame_period_s, sink);
  }
  CloudDecoder decoder(pattern, std::nullopt);
  std::vector<std::span<const std::uint8_t>> packets(sink.frames[1].begin(), sink.frames[1].end());
  Cloud cloud;
  CHECK(decoder.decode(packets, truth, FrameTruth{}, cloud) == 0);
  REQUIRE(!cloud.points.empty());
  for (const auto& p : cloud.points) REQUIRE(p.object_id / kIdsPerFrame == 2);
  // A packet that is not a Velodyne packet is counted, not decoded.
  const std::vector<std::uint8_t> junk(100, 0xAB);
  packets.insert(packets.begin(), junk);
  CHECK(decoder.decode(packets, truth, FrameTruth{}, cloud) == 1);
}

namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s, std::size_t from) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): file bytes viewed as bytes
  return {reinterpret_cast<const std::uint8_t*>(s.data()) + from, s.size() - from};
}

Cloud small_cloud() {
  Cloud c;
  c.frame_number = 7;
  c.points = {{1.5f, -2.25f, 0.125f, 2.7f, 200, 3, 10, 0, 42, 1, 11.5f},
              {-10.0f, 0.5f, -1.75f, 10.2f, 7, 15, 11, 1, 0, 3, 9.75f},
              {100.0f, 200.0f, 3.0f, 223.6f, 255, 0, 12, 0, 4000000000u, 5, 0.0f}};
  return c;
}

}  // namespace

TEST_CASE("PCD, PLY and KITTI exports read back as written", "[cloud][export]") {
  const Cloud cloud = small_cloud();
  const std::string dir = "/tmp/lidaremu-test-export-" + std::to_string(::getpid());
  REQUIRE(std::system(("mkdir -p " + dir).c_str()) == 0);

  SECTION("PCD v0.7 binary, with the object ids") {
    write_cloud_file(dir + "/f.pcd", cloud);
    const std::string text = lidaremu::test::slurp(dir + "/f.pcd");
    const auto data_at = text.find("DATA binary\n");
    REQUIRE(data_at != std::string::npos);
    const std::string header = text.substr(0, data_at);
    CHECK(header.find("FIELDS x y z intensity ring object_id echo kind pulse_width\n") !=
          std::string::npos);
    CHECK(header.find("SIZE 4 4 4 4 2 4 1 1 4\n") != std::string::npos);
    CHECK(header.find("TYPE F F F F U U U U F\n") != std::string::npos);
    CHECK(header.find("POINTS 3\n") != std::string::npos);
    CHECK(header.find("WIDTH 3\nHEIGHT 1\n") != std::string::npos);
    const auto body = bytes_of(text, data_at + 12);
    REQUIRE(body.size() == std::size_t{3} * 28);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& p = cloud.points[i];
      CHECK(load_le<float>(body, i * 28) == p.x);
      CHECK(load_le<float>(body, i * 28 + 4) == p.y);
      CHECK(load_le<float>(body, i * 28 + 8) == p.z);
      CHECK(load_le<float>(body, i * 28 + 12) == static_cast<float>(p.reflectivity));
      CHECK(load_le<std::uint16_t>(body, i * 28 + 16) == p.ring);
      CHECK(load_le<std::uint32_t>(body, i * 28 + 18) == p.object_id);
      CHECK(body[i * 28 + 22] == p.echo);
      CHECK(body[i * 28 + 23] == p.kind);
      CHECK(load_le<float>(body, i * 28 + 24) == p.pulse_width_ns);
    }
    // And back through the reader, every field.
    const Cloud back = read_pcd(dir + "/f.pcd");
    REQUIRE(back.points.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(back.points[i].object_id == cloud.points[i].object_id);
      CHECK(back.points[i].echo == cloud.points[i].echo);
      CHECK(back.points[i].kind == cloud.points[i].kind);
      CHECK(back.points[i].pulse_width_ns == cloud.points[i].pulse_width_ns);
    }
  }
  SECTION("PLY binary little endian") {
    write_cloud_file(dir + "/f.ply", cloud);
    const std::string text = lidaremu::test::slurp(dir + "/f.ply");
    REQUIRE(text.rfind("ply\nformat binary_little_endian 1.0\n", 0) == 0);
    CHECK(text.find("element vertex 3\n") != std::string::npos);
    const auto end = text.find("end_header\n");
    REQUIRE(end != std::string::npos);
    const auto body = bytes_of(text, end + 11);
    CHECK(text.find("property uchar kind\nproperty float pulse_width\n") != std::string::npos);
    REQUIRE(body.size() == std::size_t{3} * 28);
    CHECK(load_le<float>(body, 28 + 4) == 0.5f);
    CHECK(load_le<std::uint32_t>(body, 2 * 28 + 18) == 4000000000u);
    CHECK(body[28 + 23] == 3);
  }
  SECTION("KITTI .bin: x y z and reflectance in [0, 1]") {
    write_cloud_file(dir + "/000000.bin", cloud);
    const std::string text = lidaremu::test::slurp(dir + "/000000.bin");
    const auto body = bytes_of(text, 0);
    REQUIRE(body.size() == std::size_t{3} * 16);
    CHECK(load_le<float>(body, 0) == 1.5f);
    CHECK(load_le<float>(body, 12) == Approx(200.0 / 255.0));
    CHECK(load_le<float>(body, 16 + 8) == -1.75f);
    CHECK(load_le<float>(body, 32 + 12) == 1.0f);
  }
  SECTION("An unknown extension or an unwritable path is a clear error") {
    CHECK_THROWS_WITH(write_cloud_file(dir + "/f.xyz", cloud),
                      Catch::Contains("must end in .pcd, .ply or .bin"));
    CHECK_THROWS_WITH(write_cloud_file("/nonexistent-dir/f.pcd", cloud),
                      Catch::Contains("cannot open for writing"));
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("Bird's-eye pictures: sensor frame to pixels, reflectivity to colour, PNG round trip",
          "[cloud][png]") {
  using lidaremu::clients::Image;
  namespace clients = lidaremu::clients;
  // The scale's ends, as the live page's viewer.js defines them.
  CHECK(clients::reflectivity_colour(0) == std::array<std::uint8_t, 3>{38, 51, 153});
  CHECK(clients::reflectivity_colour(255) == std::array<std::uint8_t, 3>{255, 64, 51});
  CHECK(clients::reflectivity_colour(1000) == clients::reflectivity_colour(255));

  // 20 m to the edge over 400 pixels: 10 px a metre, the sensor at (200, 200), x up, y left.
  std::vector<CloudPoint> points(2);
  points[0].x = 10;  // 10 m ahead: row 100
  points[0].reflectivity = 255;
  points[1].y = 10;  // 10 m to the left: column 100
  points[1].reflectivity = 0;
  const Image image = clients::render_birds_eye(points, {.half_extent_m = 20, .pixels = 400});
  REQUIRE(image.width == 400);
  const auto pixel = [&](int x, int y) {
    const auto at = static_cast<std::size_t>(y * image.width + x) * 3;
    return std::array<std::uint8_t, 3>{image.rgb[at], image.rgb[at + 1], image.rgb[at + 2]};
  };
  CHECK(pixel(200, 100) == clients::reflectivity_colour(255));
  CHECK(pixel(100, 200) == clients::reflectivity_colour(0));
  CHECK(pixel(300, 300) != clients::reflectivity_colour(0));  // background

  const std::string png = "/tmp/lidaremu-test-" + std::to_string(::getpid()) + ".png";
  const std::array<Image, 2> pair{image, image};
  const Image both = clients::side_by_side(pair);
  CHECK(both.width == 804);
  clients::write_png(png, both);
  const Image back = clients::read_png(png);
  CHECK(back.width == both.width);
  CHECK(back.height == both.height);
  CHECK(back.rgb == both.rgb);
  { std::ofstream(png) << "not a png"; }
  CHECK_THROWS_WITH(clients::read_png(png), Catch::Contains("not a PNG"));
  std::remove(png.c_str());
  CHECK_THROWS_WITH(clients::read_png("/nonexistent.png"), Catch::Contains("cannot open"));
}
