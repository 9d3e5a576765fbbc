// The pipeline and encoders together, checked through the spec decoders: what a driver reads
// back is what the engine hit, packets pass the checks real consumers make, and the bytes do
// not depend on the number of threads.
#include <tbb/task_arena.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/physics/stage_registry.hpp"
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

TEST_CASE("Same input and seed give byte-identical packets with 1 and 2 threads",
          "[pipeline][determinism]") {
  for (const char* model : {"vlp16", "os1-64"}) {
    INFO(model);
    const auto one = run(model, PhysicsMode::kDefault, 1, 2);
    const auto two = run(model, PhysicsMode::kDefault, 2, 2);
    REQUIRE(one.size() == two.size());
    for (std::size_t i = 0; i < one.size(); ++i) REQUIRE(one[i].bytes == two[i].bytes);
    // The noise really is there: another seed changes the bytes.
    const auto pattern = pattern_for(model);
    const auto materials = MaterialTable::load(test::materials_path());
    FrameReturns a, b;
    const auto hits = scene_frame(pattern, 0);
    Pipeline(pattern, materials, settings_for(pattern, PhysicsMode::kDefault, 1)).process(hits, a);
    Pipeline(pattern, materials, settings_for(pattern, PhysicsMode::kDefault, 2)).process(hits, b);
    CHECK(a.range_m != b.range_m);
  }
}

// Every stage with work to do: rain (drops, extinction, jitter), beam divergence (5 rays),
// blooming from a scene where every surface is retroreflective, two echoes.
std::vector<CollectingSink::Packet> run_busy_chain(int threads) {
  const auto pattern = *make_ouster_scan(*find_sensor_model("os1-32"), 512, 10).pattern;
  const auto materials = MaterialTable::load(test::materials_path());
  constexpr int kRays = 5;
  std::vector<float> rows;
  clients::DemoScene().render(BeamGeometry(pattern), rows, nullptr, kRays);
  FrameHits hits;
  hits.reshape({512, 32}, {kRays, 1});
  hits.clear(0);
  for (std::size_t i = 0; i < rows.size() / 7; ++i) {
    const float* r = &rows[i * 7];
    hits.x[i] = r[0], hits.y[i] = r[1], hits.z[i] = r[2];
    hits.nx[i] = r[3], hits.ny[i] = r[4], hits.nz[i] = r[5];
    hits.material[i] = r[6] == 0 ? std::uint16_t{0} : clients::material::kRetroreflector;
  }
  hits.columns_received = hits.shape.columns;
  hits.weather.rain_mm_per_h = 25;
  auto settings = settings_for(pattern, PhysicsMode::kDefault, 99);
  settings.return_mode = ReturnMode::kTwoStrongest;
  Pipeline pipeline(pattern, materials, settings);
  OusterOutput output;
  output.profile = OusterProfile::kRng19Dual;
  auto encoder =
      make_encoder(pattern, {992200000001ull, 0x123456}, ReturnMode::kTwoStrongest, output);
  CollectingSink sink;
  FrameReturns returns;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    for (std::uint32_t f = 0; f < 2; ++f) {
      hits.frame_number = f;
      pipeline.process(hits, returns);
      encoder->encode_frame(returns, 1000.0 + f * pattern.frame_period_s, sink);
    }
  });
  return sink.packets;
}

TEST_CASE("Rain, divergence, blooming and two echoes: the same bytes with 1 and 2 threads",
          "[pipeline][determinism]") {
  const auto one = run_busy_chain(1);
  const auto two = run_busy_chain(2);
  REQUIRE(one.size() == two.size());
  REQUIRE(one.size() > 60);
  for (std::size_t i = 0; i < one.size(); ++i) REQUIRE(one[i].bytes == two[i].bytes);
}

TEST_CASE("A frame stage always follows per-beam stages: a chain cannot start with one",
          "[pipeline]") {
  // The pipeline runs a frame stage's per-beam part (Stage::prepare_beams, blooming's choice of
  // each beam's brightest candidate) at the end of the per-beam stages before it; a chain with
  // none there would leave that part unrun. check_chain refuses such a chain because every frame
  // stage reads something only a per-beam stage writes.
  std::size_t frame_stages = 0;
  for (const StageRow& row : stage_registry()) {
    if (!row.whole_frame) continue;
    ++frame_stages;
    INFO(row.name);
    CHECK((row.reads & ~std::uint32_t{kHitsIn}) != 0);
    const std::vector<std::string> chain{std::string(row.name), "echoes", "report"};
    CHECK_THROWS_WITH(check_chain(chain), Catch::Contains("which no earlier stage provides"));
  }
  CHECK(frame_stages >= 1);
}

TEST_CASE("A warmed-up pipeline gives the same returns; a frame of another size still works",
          "[pipeline]") {
  const auto pattern = pattern_for("vlp16");
  const auto materials = MaterialTable::load(test::materials_path());
  const auto hits = scene_frame(pattern, 3);
  FrameReturns cold, warm;
  Pipeline(pattern, materials, settings_for(pattern, PhysicsMode::kDefault, 7)).process(hits, cold);
  Pipeline warmed(pattern, materials, settings_for(pattern, PhysicsMode::kDefault, 7));
  warmed.warm_up({7, 3});  // a wrong guess is only a wasted allocation
  warmed.warm_up(hits.shape);
  warmed.process(hits, warm);
  CHECK(warm.range_m == cold.range_m);
  CHECK(warm.reflectivity == cold.reflectivity);
  CHECK(warm.kind == cold.kind);
}

TEST_CASE("A single-return pipeline after a dual one leaves no second echo behind", "[pipeline]") {
  // The report writes only the planes its mode fills (the others stay empty): the returns a dual
  // pipeline wrote are cleared when a single-return one takes the same FrameReturns.
  const auto pattern = pattern_for("vlp16");
  const auto materials = MaterialTable::load(test::materials_path());
  const auto hits = scene_frame(pattern, 3);
  auto dual_settings = settings_for(pattern, PhysicsMode::kDefault, 7);
  dual_settings.return_mode = ReturnMode::kDual;
  FrameReturns out, fresh;
  Pipeline(pattern, materials, dual_settings).process(hits, out);
  const std::size_t plane = out.slot(0, 1);
  const auto second = [&](const FrameReturns& r) {
    return std::count_if(r.range_m.begin() + static_cast<std::ptrdiff_t>(plane), r.range_m.end(),
                         [](float m) { return m > 0; });
  };
  REQUIRE(second(out) > 20);  // the dual pipeline put second echoes in its second plane
  const auto single_settings = settings_for(pattern, PhysicsMode::kDefault, 7);
  Pipeline(pattern, materials, single_settings).process(hits, out);
  Pipeline(pattern, materials, single_settings).process(hits, fresh);
  CHECK(second(out) == 0);
  test::require_same_returns(out, fresh);
}

TEST_CASE("Ideal physics: every valid hit comes back at its range, quantised", "[pipeline]") {
  for (const char* model : {"vlp16", "os1-64"}) {
    INFO(model);
    const auto pattern = pattern_for(model);
    const auto materials = MaterialTable::load(test::materials_path());
    const auto hits = scene_frame(pattern, 0);
    Pipeline pipeline(pattern, materials, settings_for(pattern, PhysicsMode::kIdeal, 0));
    FrameReturns out;
    pipeline.process(hits, out);
    const BeamGeometry g(pattern);
    std::size_t valid = 0;
    for (std::size_t i = 0; i < hits.shape.beams(); ++i) {
      if (hits.material[i] == 0) {
        CHECK(out.range_m[i] == 0);
        continue;
      }
      ++valid;
      const double expected = g.reported_range({hits.x[i], hits.y[i], hits.z[i]},
                                               static_cast<std::uint32_t>(i / hits.shape.channels),
                                               static_cast<std::uint16_t>(i % hits.shape.channels));
      REQUIRE(std::fabs(out.range_m[i] - expected) <= pattern.model->range_unit_m / 2 + 1e-5);
    }
    CHECK(valid > hits.shape.beams() / 2);
  }
}

TEST_CASE(
    "Default physics on the demo scene: near diffuse returns survive, reflectivity follows "
    "material",
    "[pipeline]") {
  FrameReturns out;
  run("vlp16", PhysicsMode::kDefault, 2, 1, &out);
  const auto pattern = pattern_for("vlp16");
  const auto hits = scene_frame(pattern, 0);
  std::size_t asphalt = 0, asphalt_detected = 0;
  double reflectivity_error = 0;
  std::set<int> retro_reflectivity;
  for (std::size_t i = 0; i < hits.shape.beams(); ++i) {
    const double range = std::hypot(hits.x[i], hits.y[i], hits.z[i]);
    if (hits.material[i] == clients::material::kAsphalt && range > 8 && range < 20) {
      ++asphalt;
      if (out.range_m[i] > 0) {
        ++asphalt_detected;
        // Beyond 8 m the road is seen at more than 77 degrees: the specular lobe (sigma 30) is
        // gone and a calibrated sensor reads Gamma(theta) = Gamma(0) cos(theta), 10 % cos(theta)
        // for asphalt (seed 002, eq. 4).
        const double cos_theta = -hits.z[i] / range;
        reflectivity_error += std::fabs(out.reflectivity[i] - 10.0 * cos_theta);
      }
    }
    if (hits.material[i] == clients::material::kRetroreflector && out.range_m[i] > 0)
      retro_reflectivity.insert(out.reflectivity[i]);
  }
  REQUIRE(asphalt > 100);
  CHECK(double(asphalt_detected) / double(asphalt) > 0.99);
  // Mean error within the rounding to whole percent plus the detector noise.
  CHECK(reflectivity_error / double(asphalt_detected) < 1.0);
  REQUIRE_FALSE(retro_reflectivity.empty());
  CHECK(*retro_reflectivity.begin() > 100);
}

TEST_CASE("VLP-16 packets pass the checks real consumers make", "[format][velodyne]") {
  FrameReturns last;
  const auto packets = run("vlp16", PhysicsMode::kIdeal, 2, 3, &last);
  const SensorModel& model = *find_sensor_model("vlp16");
  velodyne::SpecDecoder decoder(model);
  int data = 0, position = 0, data_since_position = 0;
  int previous_azimuth = -1;
  std::uint32_t previous_stamp = 0;
  for (const auto& p : packets) {
    if (p.channel == PacketChannel::kTelemetry) {
      ++position;
      REQUIRE(p.bytes.size() == velodyne::kPositionPacketSize);
      CHECK(data_since_position == velodyne::kPositionEveryDataPackets);
      data_since_position = 0;
      // GPRMC with a valid XOR checksum and CR LF.
      const std::string nmea(reinterpret_cast<const char*>(p.bytes.data()) + 0xCE);  // NOLINT
      REQUIRE(nmea.rfind("$GPRMC,", 0) == 0);
      const auto star = nmea.find('*');
      std::uint8_t sum = 0;
      for (std::size_t i = 1; i < star; ++i) sum ^= static_cast<std::uint8_t>(nmea[i]);
      CHECK(std::stoi(nmea.substr(star + 1, 2), nullptr, 16) == sum);
      CHECK(nmea.substr(star + 3) == "\r\n");
      CHECK(p.bytes[0xCA] == 2);
      CHECK(load_le<std::uint32_t>(p.bytes, 0xC6) == velodyne::micros_past_hour(p.time_s));
      continue;
    }
    ++data;
    ++data_since_position;
    REQUIRE(p.bytes.size() == 1206);
    CHECK(p.bytes[1204] == 0x37);
    CHECK(p.bytes[1205] == 0x22);
    for (std::size_t b = 0; b < 12; ++b) {
      CHECK(p.bytes[100 * b] == 0xFF);
      CHECK(p.bytes[100 * b + 1] == 0xEE);
      const int az = load_le<std::uint16_t>(p.bytes, 100 * b + 2);
      REQUIRE(az < 36000);
      if (previous_azimuth >= 0) {
        const int step = (az - previous_azimuth + 36000) % 36000;
        // Two sequences per block at 600 rpm: 0.398 degree, sent in whole hundredths.
        CHECK(step >= 39);
        CHECK(step <= 40);
      }
      previous_azimuth = az;
    }
    const std::uint32_t stamp = load_le<std::uint32_t>(p.bytes, 1200);
    if (previous_stamp) CHECK(std::abs(int(stamp - previous_stamp) - 1327) <= 1);
    previous_stamp = stamp;
    std::vector<velodyne::Point> pts;
    CHECK(decoder.decode(p.bytes, pts) == velodyne::DecodeError::kNone);
  }
  // 3 frames of 1808 sequences at 24 per packet.
  CHECK(data == 3 * 1808 / 24);
  CHECK(position == data / 14);
}

TEST_CASE("VLP-16 round trip: decoded points land on the engine's hits", "[format][velodyne]") {
  const auto packets = run("vlp16", PhysicsMode::kIdeal, 2, 1);
  const auto pattern = pattern_for("vlp16");
  const auto hits = scene_frame(pattern, 0);
  velodyne::SpecDecoder decoder(*pattern.model);
  std::vector<velodyne::Point> points;
  for (const auto& p : packets)
    if (p.channel == PacketChannel::kData) decoder.decode(p.bytes, points);
  std::size_t valid = 0;
  for (auto m : hits.material) valid += m != 0;
  // 1808 sequences fill 75 whole packets; the last 8 wait for the next frame's packet.
  std::size_t in_packets = 0;
  for (std::size_t i = 0; i < std::size_t{75} * 24 * 16; ++i) in_packets += hits.material[i] != 0;
  CHECK(points.size() == in_packets);
  CHECK(in_packets > valid * 99 / 100);
  for (std::size_t k = 0; k < points.size(); k += 7) {
    const auto& p = points[k];
    // Find the hit this point came from by (sequence, laser): points are in firing order.
    // Laser k fires 2.304 k us into its sequence, while the head turns.
    const double firing_offset_deg = p.laser * 2.304 * 360.0 / (1808 * 55.296);
    const std::size_t column =
        static_cast<std::size_t>(std::lround((p.azimuth_deg - firing_offset_deg) / 360.0 * 1808) +
                                 1808) %
        1808;
    const std::size_t beam = column * 16 + p.laser;
    if (hits.material[beam] == 0) continue;
    const Eigen::Vector3d hit(hits.x[beam], hits.y[beam], hits.z[beam]);
    INFO("laser " << p.laser << " azimuth " << p.azimuth_deg);
    CHECK(std::fabs(p.distance_m - hit.norm()) <= 0.001 + 1e-5);  // half the 2 mm quantum
    // Direction: the block azimuth is rounded to 0.01 degree (error 0.005) and the decoder
    // interpolates with the rounded step to the next block (error up to 0.01 more).
    const double angle = std::acos(
        std::clamp(Eigen::Vector3d(p.x, p.y, p.z).normalized().dot(hit.normalized()), -1.0, 1.0));
    CHECK(angle * 180 / M_PI < 0.015);
  }
}

TEST_CASE("OS1-64 LEGACY packets pass the checks real consumers make, and round trip",
          "[format][ouster]") {
  const auto packets = run("os1-64", PhysicsMode::kIdeal, 2, 2);
  const auto pattern = pattern_for("os1-64");
  const SensorIdentity identity{992200000001ull, 0x123456};
  const auto metadata_text = ouster::metadata_json(pattern, identity, {});
  const auto json = nlohmann::json::parse(metadata_text);
  for (const char* section :
       {"sensor_info", "beam_intrinsics", "imu_intrinsics", "lidar_intrinsics", "config_params",
        "lidar_data_format", "calibration_status"}) {
    CHECK(json.contains(section));
  }
  CHECK(json.size() == 7);
  CHECK(json["sensor_info"]["initialization_id"] == 0x123456);
  CHECK(json["sensor_info"]["prod_sn"] == "992200000001");
  CHECK(json["sensor_info"]["status"] == "RUNNING");
  CHECK(json["config_params"]["udp_dest"] != "");
  CHECK(json["config_params"]["udp_port_lidar"] == 7502);
  CHECK(json["lidar_data_format"]["pixel_shift_by_row"].size() == 64);
  const auto metadata = ouster::parse_metadata(metadata_text);
  ouster::SpecDecoder decoder(metadata);

  int data = 0, imu = 0;
  std::vector<ouster::Column> columns;
  for (const auto& p : packets) {
    if (p.channel == PacketChannel::kTelemetry) {
      ++imu;
      REQUIRE(p.bytes.size() == ouster::kImuPacketSize);
      CHECK(load_le<float>(p.bytes, 32) == 1.0f);  // one g up
      continue;
    }
    ++data;
    REQUIRE(p.bytes.size() == 12608);
    const std::size_t before = columns.size();
    REQUIRE(decoder.decode(p.bytes, columns) == ouster::DecodeError::kNone);
    CHECK(columns[before].measurement_id % 16 == 0);
    for (std::size_t k = before; k < columns.size(); ++k) {
      CHECK(columns[k].status == 0xFFFFFFFFu);
      CHECK(columns[k].encoder_count == columns[k].measurement_id * 90112u / 1024u);
      if (k > before) {
        CHECK(columns[k].measurement_id == columns[k - 1].measurement_id + 1);
        CHECK(columns[k].frame_id == columns[k - 1].frame_id);
      }
    }
  }
  CHECK(data == 2 * 64);
  CHECK(imu == 2 * 10);
  CHECK(columns[1024].frame_id == columns[0].frame_id + 1);
  for (std::size_t k = 1; k < columns.size(); ++k) {
    CHECK(std::llabs(static_cast<long long>(columns[k].timestamp_ns - columns[k - 1].timestamp_ns) -
                     97656) <= 1);
  }
  // Round trip through the SDK's xyz formula: the point is the engine's hit.
  const auto hits = scene_frame(pattern, 1);
  std::size_t compared = 0;
  for (std::size_t k = 1024; k < 2048; ++k) {
    const auto& column = columns[k];
    for (int row = 0; row < 64; ++row) {
      const std::size_t beam = std::size_t{column.measurement_id} * 64 + row;
      if (hits.material[beam] == 0) {
        CHECK(column.pixels[row].range_mm == 0);
        continue;
      }
      const auto xyz = decoder.to_xyz(column, row);
      const double error =
          std::hypot(xyz[0] - hits.x[beam], xyz[1] - hits.y[beam], xyz[2] - hits.z[beam]);
      REQUIRE(error <= 0.0005 + 1e-4);  // half the 1 mm quantum, plus float rows
      ++compared;
    }
  }
  CHECK(compared > 30000);
}
