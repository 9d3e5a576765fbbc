// The real lidaremud process on loopback: hits in over UDP, packets out over UDP, decoded by
// the spec decoders. No mocks: real sockets, real process, real bytes.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/bench.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/velodyne.hpp"
#include "lidaremu/daemon/settings.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {

using test::hits_url;

std::vector<float> scene_rows(const core::ScanPattern& pattern) {
  std::vector<float> rows;
  clients::DemoScene().render(core::BeamGeometry(pattern), rows);
  return rows;
}

// Every decoded Velodyne point is compared with the row the engine sent for its beam.
std::size_t check_velodyne_round_trip(const std::vector<test::UdpReceiver::Datagram>& packets,
                                      const std::vector<float>& rows) {
  const auto& model = *core::find_sensor_model("vlp16");
  core::velodyne::SpecDecoder decoder(model);
  std::size_t compared = 0;
  for (const auto& d : packets) {
    std::vector<core::velodyne::Point> points;
    REQUIRE(decoder.decode(d.bytes, points) == core::velodyne::DecodeError::kNone);
    for (const auto& p : points) {
      const double firing_offset_deg = p.laser * 2.304 * 360.0 / (1808 * 55.296);
      const auto column =
          static_cast<std::size_t>(std::lround((p.azimuth_deg - firing_offset_deg) / 360.0 * 1808) +
                                   1808) %
          1808;
      const float* row = &rows[(column * 16 + p.laser) * 7];
      REQUIRE(row[6] != 0);  // a return where the engine hit nothing would be invented
      const Eigen::Vector3d hit(row[0], row[1], row[2]);
      REQUIRE(std::fabs(p.distance_m - hit.norm()) <= 0.001 + 1e-5);
      REQUIRE((Eigen::Vector3d(p.x, p.y, p.z) - hit).norm() <=
              0.001 + hit.norm() * 0.015 * M_PI / 180);
      ++compared;
    }
  }
  return compared;
}

std::size_t check_ouster_round_trip(const std::vector<test::UdpReceiver::Datagram>& packets,
                                    const std::vector<float>& rows,
                                    const std::string& metadata_file) {
  const auto metadata = core::ouster::parse_metadata(test::slurp(metadata_file));
  core::ouster::SpecDecoder decoder(metadata);
  std::size_t compared = 0;
  for (const auto& d : packets) {
    std::vector<core::ouster::Column> columns;
    REQUIRE(decoder.decode(d.bytes, columns) == core::ouster::DecodeError::kNone);
    for (const auto& c : columns) {
      for (int row = 0; row < 64; ++row) {
        const float* r = &rows[(std::size_t{c.measurement_id} * 64 + row) * 7];
        if (r[6] == 0) {
          REQUIRE(c.pixels[row].range_mm == 0);
          continue;
        }
        const auto xyz = decoder.to_xyz(c, row);
        REQUIRE(std::hypot(xyz[0] - r[0], xyz[1] - r[1], xyz[2] - r[2]) <= 0.0005 + 1e-4);
        ++compared;
      }
    }
  }
  return compared;
}

std::size_t valid_rows(const std::vector<float>& rows) {
  std::size_t n = 0;
  for (std::size_t i = 6; i < rows.size(); i += 7) n += rows[i] != 0;
  return n;
}

}  // namespace

TEST_CASE("VLP-16 end to end, framed and raw: decoded points are the engine's hits",
          "[e2e][velodyne]") {
  for (const std::string format : {"framed", "raw7"}) {
    INFO(format);
    test::UdpReceiver data, telemetry;
    test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--hits-format",
                                format, "--out", data.url(), "--telemetry", telemetry.url(),
                                "--physics", "ideal", "--pace", "afap", "--idle-timeout-ms",
                                "100"});
    const auto pattern = clients::scan_for("vlp16", 600, "");
    const auto rows = scene_rows(pattern);
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0, .raw = format == "raw7"});
    streamer.send_frame(rows);
    streamer.send_frame(rows);
    // Two frames of 1808 firings: 150 full packets, one more completed at shutdown.
    auto packets = data.receive(150, 3s, 20s);
    CHECK(packets.size() == 150);
    REQUIRE(daemon.stop() == 0);
    auto tail = data.receive(1, 500ms, 2s);
    packets.insert(packets.end(), tail.begin(), tail.end());
    CHECK(packets.size() == 151);
    const std::size_t compared = check_velodyne_round_trip(packets, rows);
    CHECK(compared == 2 * valid_rows(rows));
    CHECK(daemon.counter("lidaremu_rows_stored_total{sensor=\"vlp16-0\"}") == 2 * valid_rows(rows));
    CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"vlp16-0\"}") == 0);
    const auto position = telemetry.receive(10, 300ms, 2s);
    CHECK(position.size() == 151 / 14);
    for (const auto& p : position) CHECK(p.bytes.size() == 512);
  }
}

TEST_CASE("HDL-64E raw7 end to end: one frame per revolution (lasers with offsets)",
          "[e2e][velodyne][raw]") {
  // The audit saw thousands of incomplete frames: rows of one firing were located in columns
  // far apart, the "wrap" fired again and again.
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "hdl64e", "--hits", "udp://127.0.0.1:0", "--hits-format",
                              "raw7", "--out", data.url(), "--physics", "ideal", "--pace", "afap",
                              "--idle-timeout-ms", "100"});
  const auto pattern = clients::scan_for("hdl64e", 600, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0, .raw = true});
  streamer.send_frame(rows);
  streamer.send_frame(rows);
  // Two frames' packets (347 each at 600 rpm) come out; then the counters say how they came in.
  CHECK(data.receive(690, 3s, 20s).size() >= 690);
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_frames_complete_total{sensor=\"hdl64e-0\"}") == 2);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total{sensor=\"hdl64e-0\"}") == 0);
  CHECK(daemon.counter("lidaremu_rows_stored_total{sensor=\"hdl64e-0\"}") == 2 * valid_rows(rows));
}

TEST_CASE("OS1-64 end to end, framed and raw: decoded points are the engine's hits",
          "[e2e][ouster]") {
  for (const std::string format : {"framed", "raw7"}) {
    INFO(format);
    test::UdpReceiver data, imu;
    const std::string metadata = "/tmp/lidaremu-e2e-os1-64-" + format + ".json";
    test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--hits-format",
                                format, "--out", data.url(), "--telemetry", imu.url(), "--physics",
                                "ideal", "--pace", "afap", "--metadata-out", metadata,
                                "--idle-timeout-ms", "100"});
    const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
    const auto rows = scene_rows(pattern);
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0, .raw = format == "raw7"});
    streamer.send_frame(rows);
    streamer.send_frame(rows);
    const auto packets = data.receive(128, 3s, 20s);
    REQUIRE(packets.size() == 128);
    CHECK(check_ouster_round_trip(packets, rows, metadata) == 2 * valid_rows(rows));
    REQUIRE(daemon.stop() == 0);
    CHECK(imu.receive(20, 300ms, 2s).size() == 20);
    std::remove(metadata.c_str());
  }
}

TEST_CASE("Hostile datagrams are counted and never disturb the good input", "[e2e][hostile]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--pace", "afap"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::BatchHeader h{.column_count = 2};
  const auto good_batch =
      clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7));
  // Truncated, wrong identifier, failing verification.
  sender.send(std::span(good_batch).first(5));
  auto wrong_id = good_batch;
  wrong_id[4] = 'Z';
  sender.send(wrong_id);
  auto corrupt = good_batch;
  corrupt[0] = 0xFF, corrupt[1] = 0xFF, corrupt[2] = 0xFF;
  sender.send(corrupt);
  // Row count disagreeing with the header, unknown sensor, columns past the frame.
  h.column_count = 3;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  h.column_count = 2;
  h.sensor_id = 9;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  h.sensor_id = 0;
  h.first_column = 5000;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  // Random bytes and a Control message with NaN weather.
  std::vector<std::uint8_t> noise(1000);
  for (std::size_t i = 0; i < noise.size(); ++i)
    noise[i] = static_cast<std::uint8_t>(i * 7919 % 251);
  sender.send(noise);
  sender.send(clients::build_control({.fog_visibility_m = std::nanf("")}));
  // Then a whole good frame with poisoned rows in it: NaN, infinity, unknown material.
  const std::size_t valid = valid_rows(rows);
  std::size_t poisoned_valid = 0;
  for (std::size_t beam : {100u, 2000u, 3000u, 7000u}) poisoned_valid += rows[beam * 7 + 6] != 0;
  rows[100 * 7 + 0] = std::nanf("");
  rows[2000 * 7 + 2] = INFINITY;
  rows[3000 * 7 + 6] = 77;
  rows[7000 * 7 + 6] = 5000;
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(rows);
  const auto packets = data.receive(75, 3s, 20s);
  CHECK(packets.size() == 75);
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"";
  auto rejected = [&](const char* reason) {
    return daemon.counter("lidaremu_batches_rejected_total" + s + ",reason=\"" + reason + "\"}");
  };
  CHECK(rejected("too_short") == 1);
  CHECK(rejected("unknown_identifier") == 2);  // the wrong id and the noise
  CHECK(rejected("verify_failed") == 1);
  CHECK(rejected("row_count_mismatch") == 1);
  CHECK(rejected("unknown_sensor") == 1);
  CHECK(rejected("columns_out_of_range") == 1);
  CHECK(rejected("bad_layout") == 1);  // the NaN weather
  CHECK(daemon.counter("lidaremu_rows_non_finite_total" + s + "}") == 2);
  CHECK(daemon.counter("lidaremu_rows_unknown_material_total" + s + "}") == 2);
  CHECK(daemon.counter("lidaremu_rows_stored_total" + s + "}") == valid - poisoned_valid);
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s + "}") == 1);
  // The daemon said why, in its log (stderr is inherited; the counters above are the proof).
  const auto tail = data.receive(1, 500ms, 2s);
  auto all = packets;
  all.insert(all.end(), tail.begin(), tail.end());
  CHECK(check_velodyne_round_trip(all, scene_rows(pattern)) == valid - poisoned_valid);
}

// Streams 25 frames of the demo scene at the sensor's own rate through a realtime daemon and
// returns the packets that came out, with their arrival times.
std::vector<test::UdpReceiver::Datagram> stream_realtime(const char* model, std::size_t expected) {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", model, "--hits", "udp://127.0.0.1:0", "--out", data.url(),
                              "--telemetry", telemetry.url(), "--pace", "realtime"});
  const auto pattern = clients::scan_for(model, 0, "");
  const auto rows = scene_rows(pattern);
  std::thread engine([&] {
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < 25; ++f) streamer.send_frame(rows);
  });
  auto packets = data.receive(expected, 1s, 10s);
  engine.join();
  daemon.stop();
  return packets;
}

// Packets per second between packets[skip_head] and packets[size - skip_tail].
double steady_rate(const std::vector<test::UdpReceiver::Datagram>& packets, std::size_t skip_head,
                   std::size_t skip_tail) {
  const auto& first = packets[skip_head];
  const auto& last = packets[packets.size() - skip_tail];
  return double(packets.size() - skip_head - skip_tail) / (last.arrival_s - first.arrival_s);
}

TEST_CASE("Realtime pacing holds the real packet rates", "[e2e][pacing]") {
  SECTION("VLP-16: 754 packets per second") {
    const auto packets = stream_realtime("vlp16", 1500);
    REQUIRE(packets.size() > 1200);
    // Skip the start-up: measure over the steady stream.
    const double rate = steady_rate(packets, 100, 50);
    INFO("measured " << rate << " packets/s");
    CHECK(rate == Approx(1e6 / 1327.104).epsilon(0.01));
  }
  SECTION("OS1-64 1024x10: 64 packets per frame, 10 frames per second") {
    const auto packets = stream_realtime("os1-64", std::size_t{25} * 64);
    REQUIRE(packets.size() > 1200);
    std::map<std::uint16_t, int> per_frame;
    for (const auto& p : packets)
      ++per_frame[static_cast<std::uint16_t>(p.bytes[10] | (p.bytes[11] << 8))];
    for (const auto& [frame, count] : per_frame) CHECK(count == 64);
    const double rate = steady_rate(packets, 64, 64);
    INFO("measured " << rate << " packets/s");
    CHECK(rate == Approx(640).epsilon(0.01));
  }
}

TEST_CASE("Same input, config and seed give the same bytes, with 1 or 2 threads",
          "[e2e][determinism]") {
  for (const char* model : {"vlp16", "os1-64"}) {
    INFO(model);
    std::vector<std::vector<std::uint8_t>> runs[2];
    for (int run = 0; run < 2; ++run) {
      test::UdpReceiver data, telemetry;
      test::DaemonProcess daemon({"--model", model, "--hits", "udp://127.0.0.1:0", "--out",
                                  data.url(), "--telemetry", telemetry.url(), "--pace", "afap",
                                  "--clock", "sim", "--seed", "99", "--threads",
                                  run == 0 ? "1" : "2"});
      const auto pattern = clients::scan_for(model, 0, "");
      const auto rows = scene_rows(pattern);
      clients::UdpSender sender(hits_url(daemon));
      clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
      for (int f = 0; f < 3; ++f) streamer.send_frame(rows);
      const std::size_t expected = std::string(model) == "vlp16" ? 3 * 1808 / 24 : 3 * 64;
      for (auto& d : data.receive(expected, 3s, 20s)) runs[run].push_back(std::move(d.bytes));
      daemon.stop();
      REQUIRE(runs[run].size() == expected);
    }
    CHECK(runs[0] == runs[1]);
  }
}

TEST_CASE("Start-up errors: a clear message and an exit code", "[e2e][hostile]") {
  // Exit codes as the README states: 2 usage, 3 configuration.
  const std::string binary = test::daemon_path();
  CHECK(WEXITSTATUS(std::system((binary + " --no-such-flag 2>/dev/null").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system((binary + " --rpm 5000 2>/dev/null").c_str())) == 3);
  CHECK(WEXITSTATUS(std::system((binary + " --help >/dev/null").c_str())) == 0);
  test::UdpReceiver taken;
  // The hits port is taken by another socket (UDP on the same address and port).
  try {
    test::DaemonProcess daemon({"--hits", "udp://127.0.0.1:" + std::to_string(taken.port())});
    FAIL("started on a taken port");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("cannot listen on") && Catch::Contains("pick another with --hits"));
  }
  try {
    test::DaemonProcess daemon({"--config", "/nonexistent/lidaremu.toml"});
    FAIL("started without a config");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("cannot open: No such file"));
  }
  // A device aborted start-up on out-of-memory, a FIFO hung it: both refused at once, exit 3.
  const std::string fifo = "/tmp/lidaremu-e2e-fifo.toml";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& config : {std::string("/dev/zero"), fifo}) {
    INFO(config);
    CHECK(WEXITSTATUS(std::system((binary + " --config " + config + " 2>/dev/null").c_str())) == 3);
  }
  std::remove(fifo.c_str());
}

TEST_CASE("The Python client's example reaches the daemon and comes out as a wall",
          "[e2e][python]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--pace", "afap"});
  const std::string command = std::string("PYTHONPATH=") + LIDAREMU_TEST_PYTHONPATH +
                              " /usr/bin/python3 " + LIDAREMU_TEST_PYTHON_EXAMPLES +
                              "/wall.py --frames 2 --distance 10 --port " +
                              std::to_string(daemon.hits_port());
  REQUIRE(std::system(command.c_str()) == 0);
  const auto packets = data.receive(150, 3s, 20s);
  REQUIRE(packets.size() == 150);
  daemon.stop();
  core::velodyne::SpecDecoder decoder(*core::find_sensor_model("vlp16"));
  std::size_t on_wall = 0, total = 0;
  for (const auto& p : packets) {
    std::vector<core::velodyne::Point> points;
    REQUIRE(decoder.decode(p.bytes, points) == core::velodyne::DecodeError::kNone);
    for (const auto& pt : points) {
      ++total;
      // Range quantum plus the azimuth quantum seen sideways (the wall spans +-78 degrees).
      on_wall += std::fabs(pt.x - 10.0) < 0.0011 + pt.distance_m * 0.015 * M_PI / 180;
    }
  }
  CHECK(total > 10000);
  CHECK(on_wall == total);
  CHECK(daemon.counter("lidaremu_frames_complete_total{sensor=\"vlp16-0\"}") == 2);
  CHECK(daemon.counter(
            "lidaremu_batches_rejected_total{sensor=\"vlp16-0\",reason=\"verify_failed\"}") == 0);
}

TEST_CASE("Weather from a Control message takes effect from the next batch on",
          "[e2e][physics][rain]") {
  test::UdpReceiver data, imu;
  const std::string metadata = "/tmp/lidaremu-e2e-weather-os1-64.json";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", imu.url(), "--pace", "afap", "--clock",
                              "sim", "--seed", "3", "--metadata-out", metadata});
  const auto pattern = clients::scan_for("os1-64", 0, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(rows);  // dry
  const auto dry = data.receive(64, 3s, 20s);
  sender.send(clients::build_control({.rain_mm_per_h = 100}));
  streamer.send_frame(rows);  // in heavy rain
  const auto rainy = data.receive(64, 3s, 20s);
  REQUIRE(daemon.stop() == 0);
  CHECK_THAT(daemon.output(), Catch::Contains("rain=100 mm/h"));
  REQUIRE(dry.size() == 64);
  REQUIRE(rainy.size() == 64);
  const auto decoder =
      core::ouster::SpecDecoder(core::ouster::parse_metadata(test::slurp(metadata)));
  const auto far_returns = [&](const std::vector<test::UdpReceiver::Datagram>& packets) {
    std::size_t far = 0;
    for (const auto& d : packets) {
      std::vector<core::ouster::Column> columns;
      REQUIRE(decoder.decode(d.bytes, columns) == core::ouster::DecodeError::kNone);
      for (const auto& c : columns) {
        for (const auto& px : c.pixels) far += px.range_mm > 30000;
      }
    }
    return far;
  };
  const std::size_t far_dry = far_returns(dry), far_rainy = far_returns(rainy);
  INFO("returns beyond 30 m: dry " << far_dry << ", 100 mm/h " << far_rainy);
  CHECK(far_dry > 500);
  CHECK(far_rainy < far_dry * 0.8);
}

TEST_CASE("--return-mode dual: the daemon sends VLP-16 dual-return packets at twice the rate",
          "[e2e][velodyne][dual]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--pace", "afap",
                              "--return-mode", "dual", "--physics", "ideal"});
  const auto pattern = clients::scan_for("vlp16", 0, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(scene_rows(pattern));
  const auto packets = data.receive(150, 3s, 20s);
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() >= 150);  // 1808 firing sequences, 12 per dual packet
  const auto& model = *core::find_sensor_model("vlp16");
  core::velodyne::SpecDecoder decoder(model);
  for (const auto& p : packets) {
    core::velodyne::PacketInfo info;
    std::vector<core::velodyne::Point> points;
    REQUIRE(decoder.decode(p.bytes, points, &info) == core::velodyne::DecodeError::kNone);
    CHECK(info.return_mode == core::velodyne::kDual);
  }
}

TEST_CASE("--pcap records what was sent, fragmented like a real capture, from the sensor's address",
          "[e2e][ouster][pcap]") {
  test::UdpReceiver data, imu;
  const std::string pcap = "/tmp/lidaremu-e2e-capture.pcap";
  const std::string metadata = "/tmp/lidaremu-e2e-capture.json";
  test::DaemonProcess daemon({"--model",
                              "os1-64",
                              "--profile",
                              "rng19",
                              "--hits",
                              "udp://127.0.0.1:0",
                              "--out",
                              data.url(),
                              "--telemetry",
                              imu.url(),
                              "--physics",
                              "ideal",
                              "--pace",
                              "afap",
                              "--metadata-out",
                              metadata,
                              "--idle-timeout-ms",
                              "100",
                              "--pcap",
                              pcap,
                              "--api-port",
                              "0"});
  const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(rows);
  streamer.send_frame(rows);
  const auto packets = data.receive(128, 3s, 20s);
  REQUIRE(packets.size() == 128);
  REQUIRE(daemon.stop() == 0);
  const auto imu_packets = imu.receive(20, 300ms, 2s);
  CHECK(imu_packets.size() == 20);
  // From the emulated unit's own address (127.0.0.2 for sensor id 0), as the newest Ouster
  // client requires.
  for (const auto& p : packets) CHECK(p.source_ip == 0x7F000002u);
  CHECK(check_ouster_round_trip(packets, rows, metadata) == 2 * valid_rows(rows));

  // The capture holds exactly what arrived, byte for byte, in order.
  core::PcapReader reader(pcap);
  std::vector<std::vector<std::uint8_t>> captured_data;
  std::size_t captured_imu = 0;
  while (auto d = reader.next()) {
    CHECK(d->source_ip == 0x7F000002u);
    if (d->destination_port == data.port()) captured_data.push_back(d->payload);
    if (d->destination_port == imu.port()) ++captured_imu;
  }
  REQUIRE(captured_data.size() == packets.size());
  for (std::size_t i = 0; i < packets.size(); ++i) CHECK(captured_data[i] == packets[i].bytes);
  CHECK(captured_imu == imu_packets.size());
  CHECK(core::ouster::footer_crc_valid(captured_data.front()));

  // tcpdump reads it: 12,544-byte packets travel as 9 IPv4 fragments of at most 1500 bytes.
  const std::string listing = "/tmp/lidaremu-e2e-capture.txt";
  REQUIRE(std::system(("tcpdump -nn -r " + pcap + " > " + listing + " 2>/dev/null").c_str()) == 0);
  std::ifstream lines(listing);
  std::size_t frames = 0, fragments = 0;
  for (std::string line; std::getline(lines, line);) {
    ++frames;
    fragments +=
        line.find("frag") != std::string::npos || line.find("ip-proto-17") != std::string::npos;
  }
  CHECK(frames == std::size_t{128} * 9 + imu_packets.size());
  CHECK(fragments >= std::size_t{128} * 8);
  std::remove(pcap.c_str());
  std::remove(metadata.c_str());
  std::remove(listing.c_str());
}

namespace {
// A UDP port nothing listens on now (bound and released).
std::uint16_t free_udp_port() {
  const test::UdpReceiver probe;
  return probe.port();
}
// Port 80, as drivers expect, when the test may bind it; otherwise another one.
std::string api_port() { return ::geteuid() == 0 ? "80" : "18080"; }
}  // namespace

namespace {

// An emulated OS1-64 at 127.0.0.2, fed raw rows in real time (the daemon finds each beam in
// whatever mode a client switches it to), while a client script from tests/support talks to it
// with HOST HTTP_PORT LIDAR_PORT IMU_PORT after `leading_args`. The script's exit status and
// transcript; the daemon must stop cleanly.
std::pair<int, std::string> run_ouster_client(const std::string& script,
                                              const std::string& leading_args) {
  test::UdpReceiver first_output;
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--hits-format",
                              "raw7", "--out", first_output.url(), "--physics", "ideal",
                              "--sensor-ip", "127.0.0.2", "--api-port", api_port()});
  CHECK(daemon.output().find("API http://127.0.0.2:" + api_port()) != std::string::npos);
  const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
  const auto rows = scene_rows(pattern);
  std::atomic<bool> done{false};
  std::thread engine([&] {
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0, .raw = true});
    while (!done) streamer.send_frame(rows);
  });
  const std::string log = "/tmp/lidaremu-ouster-client-" + std::to_string(::getpid()) + ".log";
  const std::string command = "python3 " + std::string(LIDAREMU_TEST_SUPPORT_DIR) + "/" + script +
                              " " + leading_args + "127.0.0.2 " + api_port() + " " +
                              std::to_string(free_udp_port()) + " " +
                              std::to_string(free_udp_port()) + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());  // NOLINT(cert-env33-c)
  done = true;
  engine.join();
  CHECK(daemon.stop() == 0);
  std::string transcript = test::slurp(log);
  std::remove(log.c_str());
  return {status, transcript};
}

}  // namespace

TEST_CASE("Ouster HTTP API and TCP 7501: the SDK client's exact request sequence", "[e2e][api]") {
  const auto [status, transcript] = run_ouster_client("ouster_client_sequence.py", "");
  INFO(transcript);
  CHECK(status == 0);
  CHECK(transcript.find("checks passed") != std::string::npos);
}

TEST_CASE("Ouster SDK generations: each older client's own request sequence configures the unit",
          "[e2e][api]") {
  // The audit: SDK 0.10-0.14 (and ouster-ros branches vendoring them) send the whole config as
  // `set_config_param .`; the API answered 400 and init_client failed. Each generation replays
  // its client's requests as sent (tests/support/ouster_sdk_generations.py) on a fresh unit.
  const std::string generation = GENERATE(as<std::string>{}, "http-0.10", "tcp-0.10", "tcp-1.x");
  INFO(generation);
  const auto [status, transcript] =
      run_ouster_client("ouster_sdk_generations.py", generation + " ");
  INFO(transcript);
  CHECK(status == 0);
  CHECK(transcript.find("all checks passed") != std::string::npos);
}

TEST_CASE("Velodyne web interface: the endpoints nebula and Autoware's monitor read",
          "[e2e][api]") {
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--sensor-ip", "127.0.0.3", "--api-port", api_port()});
  const std::string base = "http://127.0.0.3:" + api_port();
  const std::string fetch =
      "python3 -c \"import json,sys,urllib.request as u;"
      "d=json.load(u.urlopen(sys.argv[1],timeout=5));print(json.dumps(d))\" ";
  auto get = [&](const std::string& path) {
    const std::string out = "/tmp/lidaremu-velodyne-api.json";
    const int rc = std::system((fetch + base + path + " > " + out).c_str());  // NOLINT
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(out.c_str());
    return rc == 0 ? nlohmann::json::parse(text) : nlohmann::json();
  };
  const auto status = get("/cgi/status.json");
  CHECK(status["motor"]["rpm"] == 600);
  CHECK(status["gps"]["pps_state"] == "Locked");
  const auto diag = get("/cgi/diag.json");
  // The LM20 reading decodes to about 40 degrees C with the manual's formula.
  const double volts = diag["volt_temp"]["top"]["lm20_temp"].get<double>() * 5.0 / 4096;
  CHECK(-1481.96 + std::sqrt(2.1962e6 + (1.8639 - volts) / 3.88e-6) == Approx(40).margin(1));
  const auto snapshot = get("/cgi/snapshot.hdl");
  CHECK(snapshot["info"]["model"] == "VLP-16");
  CHECK(snapshot["settings"]["returns"] == "Strongest");
  // A settings POST as the web page sends it changes the running sensor.
  const std::string post =
      "python3 -c \"import urllib.request as u;u.urlopen(u.Request('" + base +
      "/cgi/setting',data=b'rpm=1200&returns=Dual',method='POST'),timeout=5)\"";
  REQUIRE(std::system(post.c_str()) == 0);  // NOLINT(cert-env33-c)
  const auto changed = get("/cgi/settings.json");
  CHECK(changed["rpm"] == 1200);
  CHECK(changed["returns"] == "Dual");
  // The same form from another site's page (a browser adds its Origin): refused, nothing changes.
  const auto cross = test::http_request(
      "POST", base + "/cgi/setting/host", "addr=6.6.6.6&dport=2368", "",
      {"Content-Type: application/x-www-form-urlencoded", "Origin: http://evil.example"});
  CHECK(cross.status == 403);
  CHECK(get("/cgi/settings.json")["host"]["addr"] == changed["host"]["addr"]);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("Ouster IMU packets follow the engine's sensor poses", "[e2e][ouster][imu]") {
  test::UdpReceiver data, imu;
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", imu.url(), "--physics", "ideal", "--pace",
                              "afap", "--clock", "sim", "--idle-timeout-ms", "100", "--api-port",
                              "0"});
  const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  // The car accelerates at 3 m/s^2 along x and yaws at 30 degrees per second; the engine sends
  // world-frame rows with the sensor's pose, one frame each 0.1 s of simulation time.
  constexpr double kAccel = 3.0, kYawRate = 30.0;
  std::size_t lidar_packets = 0;
  for (std::uint32_t f = 0; f < 5; ++f) {
    const double t = 0.1 * f;
    const double yaw = kYawRate * t * M_PI / 180;
    const Eigen::Isometry3d pose = Eigen::Translation3d(0.5 * kAccel * t * t, 0, 0) *
                                   Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ());
    std::vector<float> world = rows;
    for (std::size_t i = 0; i < world.size(); i += 7) {
      const Eigen::Vector3d p = pose * Eigen::Vector3d(world[i], world[i + 1], world[i + 2]);
      const Eigen::Vector3d n =
          pose.linear() * Eigen::Vector3d(world[i + 3], world[i + 4], world[i + 5]);
      for (int k = 0; k < 3; ++k) world[i + k] = float(p[k]), world[i + 3 + k] = float(n[k]);
    }
    const Eigen::Quaterniond q(pose.linear());
    clients::BatchHeader h{
        .frame = f,
        .column_count = 1024,
        .sim_time_ns = static_cast<std::uint64_t>(t * 1e9),
        .world_frame = true,
        .position = {float(pose.translation().x()), 0, 0},
        .orientation_xyzw = {float(q.x()), float(q.y()), float(q.z()), float(q.w())}};
    for (const auto& d : clients::build_frame_batches(h, 64, world, 97656, 60000)) sender.send(d);
    // One frame at a time: under the sanitizers a frame takes longer than 0.1 s to process.
    lidar_packets += data.receive(64, 2s, 20s).size();
  }
  REQUIRE(daemon.stop() == 0);
  INFO(daemon.output());
  REQUIRE(lidar_packets == std::size_t{5} * 64);
  const auto packets = imu.receive(50, 300ms, 3s);
  REQUIRE(packets.size() == 50);
  // The last frame's IMU packets: three poses known, so acceleration and yaw rate.
  const auto& last = packets.back().bytes;
  REQUIRE(last.size() == 48);
  const float ax = core::load_le<float>(last, 24), az = core::load_le<float>(last, 32);
  const float gz = core::load_le<float>(last, 44);
  // In the sensor frame, yawed by 12 degrees: the forward acceleration splits over x and y.
  const double yaw = kYawRate * 0.4 * M_PI / 180;
  CHECK(ax == Approx(kAccel * std::cos(yaw) / 9.80665).epsilon(0.01));
  CHECK(az == Approx(1.0).epsilon(0.001));
  CHECK(gz == Approx(kYawRate).epsilon(0.001));
  // The first frame's: one pose, the sensor reads as at rest.
  CHECK(core::load_le<float>(packets.front().bytes, 24) == Approx(0).margin(1e-6));
}

TEST_CASE("The daemon's HTTP endpoint: health, metrics, sensors, weather with a token",
          "[e2e][http]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--pace", "afap", "--http", "127.0.0.1:0", "--http-token", "s3cret",
                              "--api-port", "0"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  CHECK(test::http_request("GET", base + "/healthz").status == 200);
  // Traffic, then the metrics show it.
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  streamer.send_frame(scene_rows(pattern));
  streamer.send_frame(scene_rows(pattern));
  REQUIRE(data.receive(150, 2s, 10s).size() >= 150);
  const auto metrics = test::http_request("GET", base + "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("lidaremu_packets_out_total{sensor=\"vlp16-0\"}") != std::string::npos);
  CHECK(metrics.body.find("lidaremu_processing_seconds_bucket{sensor=\"vlp16-0\",le=\"+Inf\"}") !=
        std::string::npos);
  CHECK(metrics.body.find("lidaremu_processing_seconds_count{sensor=\"vlp16-0\"} ") !=
        std::string::npos);
  CHECK(metrics.body.find("lidaremu_frames_queued{sensor=\"vlp16-0\"}") != std::string::npos);
  const auto sensors =
      nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
  REQUIRE(sensors.size() == 1);
  CHECK(sensors[0]["model"] == "vlp16");
  CHECK(sensors[0]["rpm"] == 600);
  CHECK(sensors[0]["frames_processed"].get<int>() >= 1);
  // Changing the weather needs the token; values are checked like the config file's.
  const std::string weather = base + "/api/v1/sensors/vlp16-0/weather";
  CHECK(test::http_request("PUT", weather, R"({"rain_mm_per_h": 25})").status == 401);
  CHECK(test::http_request("PUT", weather, R"({"rain_mm_per_h": 25})", "wrong").status == 401);
  CHECK(test::http_request("PUT", weather, R"({"rain_mm_per_h": 9000})", "s3cret").status == 400);
  CHECK(test::http_request("PUT", weather, R"({"hail": 1})", "s3cret").status == 400);
  CHECK(test::http_request("PUT", weather, "not json", "s3cret").status == 400);
  const auto set =
      test::http_request("PUT", weather, R"({"rain_mm_per_h": 25, "visibility_m": 900})", "s3cret");
  CHECK(set.status == 200);
  const auto now = nlohmann::json::parse(test::http_request("GET", weather).body);
  CHECK(now["rain_mm_per_h"] == 25.0);
  CHECK(now["visibility_m"] == 900.0);
  CHECK(test::http_request("GET", base + "/api/v1/sensors/nope").status == 404);
  CHECK(test::http_request("GET", base + "/nothing").status == 404);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("--record, then lidaremu-send --replay with the same seed: the same packets",
          "[e2e][record]") {
  const std::string recording = "/tmp/lidaremu-e2e-recording.pcap";
  const std::vector<std::string> common{"--model",    "vlp16", "--hits",  "udp://127.0.0.1:0",
                                        "--pace",     "afap",  "--clock", "sim",
                                        "--seed",     "5",     "--rain",  "20",
                                        "--api-port", "0",     "--http",  "off"};
  auto with = [&](std::vector<std::string> extra, const test::UdpReceiver& out) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--out", out.url()});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  std::vector<std::vector<std::uint8_t>> original;
  {
    test::UdpReceiver data;
    test::DaemonProcess daemon(with({"--record", recording}, data));
    const auto pattern = clients::scan_for("vlp16", 600, "");
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
    const auto rows = scene_rows(pattern);
    for (int f = 0; f < 3; ++f) streamer.send_frame(rows);
    sender.send(std::vector<std::uint8_t>(40, 0xAB));  // a bad datagram is part of the run too
    for (auto& d : data.receive(226, 2s, 10s)) original.push_back(std::move(d.bytes));
    REQUIRE(daemon.stop() == 0);
    CHECK(
        daemon.counter(
            "lidaremu_batches_rejected_total{sensor=\"vlp16-0\",reason=\"unknown_identifier\"}") ==
        1);
  }
  REQUIRE(original.size() >= 226);
  test::UdpReceiver data;
  test::DaemonProcess daemon(with({}, data));
  const std::string replay = std::string(LIDAREMU_TEST_SEND) + " --replay " + recording +
                             " --speed 0 --hits " + hits_url(daemon) + " > /dev/null";
  REQUIRE(std::system(replay.c_str()) == 0);  // NOLINT(cert-env33-c)
  std::vector<std::vector<std::uint8_t>> replayed;
  for (auto& d : data.receive(original.size(), 2s, 10s)) replayed.push_back(std::move(d.bytes));
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter(
            "lidaremu_batches_rejected_total{sensor=\"vlp16-0\",reason=\"unknown_identifier\"}") ==
        1);
  REQUIRE(replayed.size() == original.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < original.size(); ++i) differing += replayed[i] != original[i];
  CHECK(differing == 0);
  std::remove(recording.c_str());
}

TEST_CASE("A sender allow-list refuses and counts everyone else", "[e2e][hostile]") {
  test::UdpReceiver data;
  // Only 127.0.0.9 may send; the test sends from 127.0.0.1.
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--allow", "127.0.0.9", "--api-port", "0", "--http",
                              "off"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  streamer.send_frame(scene_rows(pattern));
  CHECK(data.receive(10, 500ms, 2s).empty());
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_datagrams_refused_sender_total{sensor=\"vlp16-0\"}") > 0);
  CHECK(daemon.counter("lidaremu_rows_stored_total{sensor=\"vlp16-0\"}") == 0);
  CHECK(daemon.output().find("not on the allow-list") != std::string::npos);  // a log says why
}

TEST_CASE("A flood on one sensor's input does not delay another's packets",
          "[e2e][hostile][pacing]") {
  test::UdpReceiver calm_out, flooded_out;
  const std::string config = "/tmp/lidaremu-e2e-isolation.toml";
  {
    std::ofstream f(config);
    f << "[daemon]\nhttp = \"off\"\n"
      << "[[sensor]]\nname = \"calm\"\nmodel = \"vlp16\"\nsensor_id = 0\napi_port = 0\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << calm_out.url() << "\"\n"
      << "[[sensor]]\nname = \"flooded\"\nmodel = \"vlp16\"\nsensor_id = 1\napi_port = 0\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << flooded_out.url() << "\"\n";
  }
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor flooded", 5s));
  // Both inputs' ports, from the start-up lines.
  auto port_of = [&](const std::string& name) {
    const auto& out = daemon.output();
    const auto line = out.find("sensor " + name + " (");
    const auto at = out.find("hits udp://127.0.0.1:", line) + 21;
    return "udp://127.0.0.1:" + out.substr(at, out.find(' ', at) - at);
  };
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  std::atomic<bool> done{false};
  // The flooded input gets whole frames as fast as the loopback takes them (far beyond ten
  // times the sensor's rate) mixed with garbage.
  std::thread flood([&] {
    clients::UdpSender sender(port_of("flooded"));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
    const std::vector<std::uint8_t> junk(1400, 0x5A);
    while (!done) {
      streamer.send_frame(rows);
      for (int i = 0; i < 200; ++i) sender.send(junk);
    }
  });
  std::thread engine([&] {
    clients::UdpSender sender(port_of("calm"));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < 25; ++f) streamer.send_frame(rows);
  });
  const auto packets = calm_out.receive(1500, 1s, 10s);
  engine.join();
  done = true;
  flood.join();
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() > 1200);
  const double rate = steady_rate(packets, 100, 50);
  INFO("calm sensor: " << rate << " packets/s while its neighbour was flooded");
  CHECK(rate == Approx(1e6 / 1327.104).epsilon(0.01));
  if (!test::kSanitized)
    CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"calm\"}") == 0);
  CHECK(daemon.counter("lidaremu_batches_rejected_total{sensor=\"flooded\",reason="
                       "\"unknown_identifier\"}") > 1000);
  std::remove(config.c_str());
}

TEST_CASE("Columns out of order or twice, absurd rows, a frame that never completes",
          "[e2e][hostile]") {
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--physics", "ideal", "--pace", "afap",
                              "--idle-timeout-ms", "150", "--api-port", "0", "--http", "off"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  auto rows = scene_rows(pattern);
  // Absurd values: a hit 1e30 m away, a normal of length 0.
  rows[500 * 7 + 0] = 1e30f;
  rows[500 * 7 + 6] = 8;
  rows[900 * 7 + 3] = rows[900 * 7 + 4] = rows[900 * 7 + 5] = 0;
  rows[900 * 7 + 6] = 8;
  clients::UdpSender sender(hits_url(daemon));
  auto batches = clients::build_frame_batches(
      {.frame = 0, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame)}, 16, rows,
      0, 60000);
  // Frame 0: its batches last to first, the middle one twice.
  std::reverse(batches.begin(), batches.end());
  batches.insert(batches.begin() + 3, batches[batches.size() / 2]);
  for (const auto& b : batches) sender.send(b);
  // Frame 1: only its first half, then silence.
  auto half = clients::build_frame_batches(
      {.frame = 1, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame / 2)}, 16,
      std::span(rows).first(rows.size() / 2), 0, 60000);
  for (const auto& b : half) sender.send(b);
  const auto packets = data.receive(200, 1s, 10s);
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 1);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total" + s) == 1);  // the idle timeout ends it
  CHECK(daemon.counter("lidaremu_frames_processed_total" + s) == 2);
  CHECK(daemon.counter("lidaremu_rows_out_of_range_total" + s) == 4);  // in both frames
  // Both frames' packets went out: the whole first frame, the half second one (and the rest
  // of the second frame's firing sequences, empty, as the sensor's stream continues).
  CHECK(packets.size() >= 75 + 37);
}

TEST_CASE("Frame numbers: a stray far ahead and an engine restart do not silence the sensor",
          "[e2e][hostile]") {
  // The audit: one batch numbered 1,000 ahead made every later frame stale, and so did an
  // engine that restarted its frame counter. Now both start a new sequence (counted).
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--physics", "ideal", "--pace", "afap",
                              "--idle-timeout-ms", "100", "--api-port", "0", "--http", "off"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  const auto frame = [&](std::uint32_t number) {
    return clients::build_frame_batches(
        {.frame = number, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame)},
        16, rows, 0, 60000);
  };
  // Each frame's packets are awaited before the next is sent, so none is dropped for load.
  std::size_t packets = 0;
  const auto send_frame = [&](std::uint32_t f) {
    for (const auto& b : frame(f)) sender.send(b);
    packets += data.receive(75, 300ms, 5s).size();
  };
  send_frame(100);
  send_frame(101);
  sender.send(frame(2000).front());                                      // a stray batch, far ahead
  for (const std::uint32_t f : {102u, 103u, 0u, 1u, 2u}) send_frame(f);  // on, then a restart
  packets += data.receive(100, 500ms, 5s).size();
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 7);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total" + s) == 1);   // the stray's lone batch
  CHECK(daemon.counter("lidaremu_frames_resequenced_total" + s) == 3);  // 2000, 102, 0
  CHECK(daemon.counter("lidaremu_batches_stale_total" + s) == 0);
  CHECK(daemon.counter("lidaremu_frames_dropped_total" + s) == 0);
  CHECK(packets >= 7 * 75);
}

TEST_CASE("A host name in --out: the daemon resolves it and sends there", "[e2e]") {
  // The audit: `--out udp://HOSTNAME:2368` ended the daemon (an exception on the emit thread).
  // This machine's own name where it resolves to 127.0.0.1 (as /etc/hosts usually has it),
  // else "localhost"; either goes through the resolver.
  std::string host = "localhost";
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) {
    daemon::Endpoint e{name, 0};
    if (!daemon::resolve_host(e) && e.host == "127.0.0.1") host = name;
  }
  INFO("host " << host);
  test::UdpReceiver data;
  const std::string port = data.url().substr(data.url().rfind(':') + 1);
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://" + host + ":0", "--out",
                              "udp://" + host + ":" + port, "--physics", "ideal", "--pace", "afap",
                              "--api-port", "0", "--http", "off"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  streamer.send_frame(scene_rows(pattern));
  CHECK(data.receive(75, 1s, 10s).size() >= 75);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("SIGHUP reloads the config all at once, or keeps the running one and says why",
          "[e2e][reload]") {
  const std::string config = "/tmp/lidaremu-e2e-reload.toml";
  test::UdpReceiver out_a, out_b;
  auto write = [&](const std::string& text) {
    std::ofstream f(config);
    f << "[daemon]\nhttp = \"127.0.0.1:0\"\n" << text;
  };
  const std::string sensor_a =
      "[[sensor]]\nname = \"a\"\nmodel = \"vlp16\"\napi_port = 0\n"
      "hits = \"udp://127.0.0.1:0\"\nout = \"" +
      out_a.url() + "\"\n";
  write(sensor_a);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  // A second sensor and a new rate for the first.
  write(sensor_a +
        "rpm = 1200\n[[sensor]]\nname = \"b\"\nmodel = \"os1-32\"\nsensor_id = 1\n"
        "api_port = 0\nhits = \"udp://127.0.0.1:0\"\nout = \"" +
        out_b.url() + "\"\n");
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("reloaded", 30s));  // sanitized builds are slow
  auto sensors = nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
  REQUIRE(sensors.size() == 2);
  CHECK(sensors[0]["rpm"] == 1200);
  CHECK(sensors[1]["model"] == "os1-32");
  // A broken file: everything keeps running, the log says why.
  write("[[sensor]]\nmodel = \"vlp99\"\n");
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("keeping the running configuration", 30s));
  CHECK(daemon.output().find("vlp99") != std::string::npos);
  // A file that crashed the loader (a header nested 40,000 deep overflowed toml++'s stack) and
  // one that hung it (a FIFO): refused with the reason, nothing stops.
  {
    std::string deep = "[";
    for (int i = 0; i < 39999; ++i) deep += "a.";
    write(deep + "a]\n");
  }
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("levels deep", 30s));
  std::remove(config.c_str());
  REQUIRE(::mkfifo(config.c_str(), 0600) == 0);
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("not a regular file", 30s));
  std::remove(config.c_str());
  sensors = nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
  CHECK(sensors.size() == 2);
  // The reloaded sensor works: a frame in, packets out.
  const auto hits = sensors[0]["hits"].get<std::string>();
  clients::UdpSender sender(hits);
  const auto pattern = clients::scan_for("vlp16", 1200, "");
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  streamer.send_frame(scene_rows(pattern));
  CHECK(out_a.receive(30, 1s, 5s).size() >= 30);
  CHECK(daemon.stop() == 0);
  std::remove(config.c_str());
}

TEST_CASE("A signal sent the moment the daemon first speaks is handled, not fatal",
          "[e2e][reload]") {
  // The daemon once installed its handlers after printing its sensors and control address;
  // a supervisor quick enough met SIGHUP's default action (the process died, exit 129).
  for (int round = 0; round < 10; ++round) {
    test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                                "udp://127.0.0.1:9", "--api-port", "0", "--http", "127.0.0.1:0"});
    daemon.send_signal(SIGHUP);  // right after the first line, before the control endpoint
    REQUIRE(daemon.wait_for_output("nothing to reload", 5s));
    REQUIRE(daemon.stop() == 0);
  }
}

TEST_CASE("Control messages carry the sensor pose for raw rows; the IMU follows it",
          "[e2e][ouster][imu]") {
  test::UdpReceiver data, imu;
  test::DaemonProcess daemon({"--model",
                              "os1-64",
                              "--hits",
                              "udp://127.0.0.1:0",
                              "--hits-format",
                              "raw7",
                              "--out",
                              data.url(),
                              "--telemetry",
                              imu.url(),
                              "--physics",
                              "ideal",
                              "--pace",
                              "afap",
                              "--clock",
                              "sim",
                              "--idle-timeout-ms",
                              "100",
                              "--api-port",
                              "0",
                              "--http",
                              "off"});
  const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0, .raw = true});
  constexpr double kAccel = 2.0;  // m/s^2 along x, no rotation
  std::size_t lidar_packets = 0;
  for (int f = 0; f < 4; ++f) {
    const double t = 0.1 * f;
    clients::ControlMessage control;
    control.has_pose = true;
    control.pose_position = {0.5 * kAccel * t * t, 0, 0};
    sender.send(clients::build_control(control));
    streamer.send_frame(rows);
    // The idle timeout ends each raw frame; wait for its packets before the next one.
    lidar_packets += data.receive(64, 2s, 20s).size();
  }
  CHECK(lidar_packets == std::size_t{4} * 64);
  REQUIRE(daemon.stop() == 0);
  const auto packets = imu.receive(40, 300ms, 3s);
  REQUIRE(packets.size() >= 30);
  const auto& last = packets.back().bytes;
  CHECK(core::load_le<float>(last, 24) == Approx(kAccel / 9.80665).epsilon(0.01));
  CHECK(core::load_le<float>(last, 32) == Approx(1.0).epsilon(0.001));
  CHECK(daemon.counter("lidaremu_control_messages_total{sensor=\"os1-64-0\"}") == 4);
}

namespace {

clients::BenchOptions short_bench(const std::vector<std::string>& sensors, double seconds) {
  clients::BenchOptions o;
  o.daemon = test::daemon_path();
  for (const auto& spec : sensors) o.sensors.push_back(clients::BenchSensor::parse(spec));
  o.seconds = seconds;
  o.warmup_seconds = 0.3;
  return o;
}

}  // namespace

TEST_CASE("lidaremu-bench loads the real daemon and accounts for every frame", "[e2e][bench]") {
  auto o = short_bench({"vlp16", "os1-32:512x10:rng19"}, 1.5);
  o.in_flight = 1;
  o.ceiling_seconds = 0.3;
  const auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 2);
  for (const auto& s : r.sensors) {
    INFO(s.label);
    CHECK(s.frames_sent >= 3);
    CHECK(s.frames_out == s.frames_sent);
    CHECK(s.daemon_datagrams_in == s.datagrams_sent);
    CHECK(s.daemon_frames_processed == s.frames_sent);
    CHECK(s.daemon_frames_dropped == 0);
    CHECK(s.daemon_batches_rejected == 0);
    CHECK(s.latency.frames > 0);
    CHECK(s.latency.p50_ms > 0);
    CHECK(s.latency.p50_ms <= s.latency.p99_ms);
    CHECK(s.latency.p99_ms <= s.latency.max_ms);
    CHECK(s.returns_out > 0);
    CHECK(s.returns_out < s.rays_sent);
  }
  CHECK(r.input_datagrams_lost == 0);
  CHECK(r.rays_per_s > 0);
  CHECK(r.returns_per_s > 0);
  CHECK(r.returns_per_s < r.rays_per_s);
  CHECK(r.daemon_cpu_ns_per_ray > 0);
  CHECK(r.ceiling_rays_per_s > r.rays_per_s);
  std::ostringstream report;
  clients::print_report(report, o, r);
  CHECK_THAT(report.str(), Catch::Contains("lidaremud reached"));
}

TEST_CASE("lidaremu-bench at twice real time sends raw rows on the sensor's schedule",
          "[e2e][bench]") {
  auto o = short_bench({"vlp16"}, 1.0);
  o.rate = 2;
  o.raw = true;
  o.warmup_seconds = 0.2;
  o.ceiling_seconds = 0;
  const auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 1);
  const auto& s = r.sensors[0];
  // 10 Hz at twice real time for 1.2 s: 24 frames, the first at once.
  CHECK(s.frames_sent >= 23);
  CHECK(s.frames_sent <= 26);
  CHECK(s.daemon_datagrams_in == s.datagrams_sent);
  // Every frame is processed or, when input outruns processing, dropped whole and counted.
  CHECK(s.daemon_frames_processed + s.daemon_frames_dropped == s.frames_sent);
  CHECK(s.frames_out > 0);
  // At full speed a VLP-16 frame takes a few milliseconds of its 50: all of them come out.
  if (!test::kSanitized) CHECK(s.frames_out == s.frames_sent);
  CHECK(r.ceiling_rays_per_s == 0);
}

TEST_CASE("Input the kernel drops while the daemon cannot read is counted, datagram for datagram",
          "[e2e][hostile]") {
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              "udp://127.0.0.1:9", "--api-port", "0", "--http", "off", "--pace",
                              "afap"});
  // A stopped process reads nothing: 40 MB of 60 KB datagrams overflow its 16 MiB buffer.
  daemon.send_signal(SIGSTOP);
  clients::UdpSender sender(hits_url(daemon));
  const std::vector<std::uint8_t> junk(60000, 0x5A);
  constexpr std::uint64_t kSent = 700;
  for (std::uint64_t i = 0; i < kSent; ++i) REQUIRE(sender.send(junk));
  daemon.send_signal(SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  const auto in = daemon.counter("lidaremu_datagrams_in_total" + s);
  const auto dropped = daemon.counter("lidaremu_input_kernel_drops_total" + s);
  CHECK(in > 0);  // how many fit depends on the buffer the kernel granted (rmem_max)
  CHECK(dropped > 100);
  CHECK(in + dropped == kSent);
  CHECK(daemon.counter(
            "lidaremu_batches_rejected_total{sensor=\"vlp16-0\",reason=\"unknown_identifier\"}") ==
        in);
}
