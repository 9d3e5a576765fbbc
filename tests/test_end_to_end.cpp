// The real lidaremud process on loopback: hits in over UDP, packets out over UDP, decoded by
// the spec decoders. No mocks: real sockets, real process, real bytes. The data path: every
// model round trip, determinism, dual returns, captures, replays, poses.

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <span>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/core/velodyne.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::check_ouster_round_trip;
using test::check_velodyne_round_trip;
using test::hits_url;
using test::scene_rows;
using test::steady_rate;
using test::valid_rows;
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
    // From the unit's address and its own ports, as a real VLP-16 sends (its data port 2368,
    // its position port 8308), the host listening elsewhere.
    for (const auto& p : packets) {
      CHECK(p.source_ip == 0x7F000002u);
      CHECK(p.source_port == 2368);
    }
    for (const auto& p : position) CHECK(p.source_port == 8308);
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

TEST_CASE(
    "Same input, config and seed give the same bytes, with 1 or 2 threads, on any SIMD target",
    "[e2e][determinism]") {
  // The best instruction set with 1 and 2 threads, then the plainest this build has (SCALAR).
  const std::string plainest = core::simd::available_targets().back();
  const std::pair<const char*, std::string> runs_of[] = {
      {"1", "best"}, {"2", "best"}, {"2", plainest}};
  // Raw rows too: their beams found on the locating thread, with no worker beside it or one.
  const std::pair<const char*, const char*> inputs[] = {
      {"vlp16", "framed"}, {"os1-64", "framed"}, {"os1-64", "raw7"}};
  for (const auto& [model, format] : inputs) {
    INFO(model << ", " << format);
    const bool raw = std::string(format) == "raw7";
    std::vector<std::vector<std::uint8_t>> runs[3];
    for (int run = 0; run < 3; ++run) {
      const auto& [threads, target] = runs_of[run];
      INFO("threads " << threads << ", SIMD target " << target);
      test::UdpReceiver data, telemetry;
      test::DaemonProcess daemon({"--model",
                                  model,
                                  "--hits",
                                  "udp://127.0.0.1:0",
                                  "--hits-format",
                                  format,
                                  "--out",
                                  data.url(),
                                  "--telemetry",
                                  telemetry.url(),
                                  "--pace",
                                  "afap",
                                  "--clock",
                                  "sim",
                                  "--seed",
                                  "99",
                                  "--threads",
                                  threads,
                                  "--simd-target",
                                  target,
                                  "--idle-timeout-ms",
                                  "300"});
      const auto pattern = clients::scan_for(model, 0, "");
      const auto rows = scene_rows(pattern);
      clients::UdpSender sender(hits_url(daemon));
      clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0, .raw = raw});
      for (int f = 0; f < 3; ++f) streamer.send_frame(rows);
      const std::size_t expected = std::string(model) == "vlp16" ? 3 * 1808 / 24 : 3 * 64;
      for (auto& d : data.receive(expected, 3s, 20s)) runs[run].push_back(std::move(d.bytes));
      daemon.stop();
      REQUIRE(runs[run].size() == expected);
    }
    CHECK(runs[0] == runs[1]);
    CHECK(runs[0] == runs[2]);
  }
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

namespace {
// An Ouster frame's returns beyond 30 m: heavy rain takes many of them.
std::size_t far_returns(const core::ouster::SpecDecoder& decoder,
                        std::span<const test::UdpReceiver::Datagram> packets) {
  std::size_t far = 0;
  for (const auto& d : packets) {
    std::vector<core::ouster::Column> columns;
    REQUIRE(decoder.decode(d.bytes, columns) == core::ouster::DecodeError::kNone);
    for (const auto& c : columns) {
      for (const auto& px : c.pixels) far += px.range_mm > 30000;
    }
  }
  return far;
}
}  // namespace

TEST_CASE("Weather from a Control message takes effect from the next frame on",
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
  const std::size_t far_dry = far_returns(decoder, dry), far_rainy = far_returns(decoder, rainy);
  INFO("returns beyond 30 m: dry " << far_dry << ", 100 mm/h " << far_rainy);
  CHECK(far_dry > 500);
  CHECK(far_rainy < far_dry * 0.8);
}

TEST_CASE("Raw rows are located a receive at a time, yet a Control among them acts in its place",
          "[e2e][physics][rain][raw]") {
  // The daemon locates the raw datagrams of one receive together and stores them after; a
  // Control message among them must still act between the rows before it and those after. Sent
  // while the daemon is stopped, three turns of 29 datagrams wait in its buffer, the Control two
  // datagrams into the second turn; the first receive then takes the first turn, the second
  // turn's first two datagrams (which begin its frame) and the Control together. The second
  // frame began before the rain: it stays dry; the third is the first in rain.
  test::UdpReceiver data;
  const std::string metadata = "/tmp/lidaremu-e2e-raw-weather-os1-64.json";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--hits-format",
                              "raw7", "--out", data.url(), "--pace", "afap", "--clock", "sim",
                              "--seed", "3", "--idle-timeout-ms", "300", "--metadata-out",
                              metadata});
  const auto pattern = clients::scan_for("os1-64", 0, "");
  const auto rows = scene_rows(pattern);
  const auto parts = clients::raw_datagrams(rows, std::size_t{64} * 7);
  REQUIRE(parts.size() == 29);
  clients::UdpSender sender(hits_url(daemon));
  REQUIRE(daemon.freeze());
  for (const auto& part : parts) REQUIRE(sender.send(part.bytes));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i == 2) REQUIRE(sender.send(clients::build_control({.rain_mm_per_h = 100})));
    REQUIRE(sender.send(parts[i].bytes));
  }
  for (const auto& part : parts) REQUIRE(sender.send(part.bytes));
  daemon.send_signal(SIGCONT);
  const auto packets = data.receive(3 * 64, 3s, 30s);
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() == 3 * 64);
  const auto decoder =
      core::ouster::SpecDecoder(core::ouster::parse_metadata(test::slurp(metadata)));
  const auto frame = [&](std::size_t f) {
    return far_returns(decoder, std::span(packets).subspan(f * 64, 64));
  };
  const std::size_t first = frame(0), second = frame(1), third = frame(2);
  INFO("returns beyond 30 m: " << first << ", " << second << ", then in rain " << third);
  CHECK(first > 500);
  CHECK(second > first * 0.9);
  CHECK(third < first * 0.8);
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
