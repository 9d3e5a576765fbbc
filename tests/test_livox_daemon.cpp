// The Livox Mid-360 in the daemon: its settings, and the real lidaremud on loopback fed by an
// engine over UDP, a host doing Livox SDK2's discovery against it and reading its points from the
// unit's point port (56300, the only source SDK2 takes points from) onto the engine's hits.
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/net/address.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace livox = core::livox;

TEST_CASE("Livox settings: a scan table, SDK2's ports, first return, framed batches",
          "[settings][livox]") {
  daemon::SensorFlags f;
  f.model = "livox-mid360";
  f.scan_pattern = "test-pattern";
  const auto s = daemon::sensor_from_flags(f);
  CHECK(s.out.port == 56301);        // the host's point port
  CHECK(s.telemetry.port == 56401);  // the host's IMU port
  CHECK(s.data_source_port == 56300);
  CHECK(s.telemetry_source_port == 56400);
  CHECK(s.api_port == 56100);  // the unit's command port
  CHECK(s.pipeline.return_mode == core::ReturnMode::kFirst);
  REQUIRE(s.pattern.table);
  CHECK(s.pattern.table->firings() == core::kTestPatternFirings);
  CHECK(s.pattern.columns_per_frame == 5000);
  // A Velodyne unit sends from its own ports too (its drivers do not check them); the others
  // leave from any port.
  daemon::SensorFlags vlp;
  CHECK(daemon::sensor_from_flags(vlp).data_source_port == 2368);
  CHECK(daemon::sensor_from_flags(vlp).telemetry_source_port == 8308);
  daemon::SensorFlags os1;
  os1.model = "os1-64";
  CHECK(daemon::sensor_from_flags(os1).data_source_port == 0);
  // But never the very port a driver on this machine listens on (it binds every address
  // without SO_REUSEADDR): then any port.
  CHECK(daemon::source_port_for(2368, "127.0.0.1", 2368) == 0);
  CHECK(daemon::source_port_for(2368, "127.0.0.1", 40000) == 2368);
  CHECK(daemon::source_port_for(2368, "192.0.2.1", 2368) == 2368);  // TEST-NET-1: elsewhere
  CHECK(daemon::source_port_for(0, "127.0.0.1", 2368) == 0);
  CHECK(daemon::is_local_address("127.0.0.9"));
  CHECK_FALSE(daemon::is_local_address("192.0.2.1"));
  CHECK_FALSE(daemon::is_local_address("no address"));

  const auto csv = std::filesystem::temp_directory_path() /
                   ("lidaremu-livox-settings-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(csv) << "Time/s,Azimuth/deg,Zenith/deg\n0,0,90\n0,1,90\n0,2,91\n0,x,90\n";
  const std::string bad_file = csv.string();
  for (const auto& [key, value, expected] :
       {std::tuple{"scan_pattern", "", "--scan-pattern: no scan table: a CSV file"},
        std::tuple{"scan_pattern", "/nonexistent/mid360.csv", "/nonexistent/mid360.csv"},
        std::tuple{"scan_pattern", bad_file.c_str(), "line 5: expected three numbers"},
        std::tuple{"rpm", "600", "nothing for a Livox model (Velodyne, Hesai and RoboSense only)"},
        std::tuple{"mode", "1024x10", "nothing for a Livox model (Ouster only)"},
        std::tuple{"return_mode", "strongest", "expected first (this model's return modes"},
        std::tuple{"hits_format", "raw7", "framed for a Livox model"},
        std::tuple{"metadata_out", "/tmp/x.json", "nothing for a Livox model (Ouster only)"},
        std::tuple{"calibration_out", "/tmp/x.csv", "nothing for a Livox model"}}) {
    INFO(key << " = " << value);
    daemon::SensorFlags bad = f;
    const std::string k = key;
    if (k == "scan_pattern") bad.scan_pattern = value;
    if (k == "rpm") bad.rpm = std::stoi(value);
    if (k == "mode") bad.mode = value;
    if (k == "return_mode") bad.return_mode = value;
    if (k == "hits_format") bad.hits_format = value;
    if (k == "metadata_out") bad.metadata_out = value;
    if (k == "calibration_out") bad.calibration_out = value;
    CHECK_THROWS_WITH(daemon::sensor_from_flags(bad), Catch::Contains(expected));
  }
  std::filesystem::remove(csv);
  daemon::SensorFlags spinning;
  spinning.scan_pattern = "test-pattern";
  CHECK_THROWS_WITH(daemon::sensor_from_flags(spinning),
                    Catch::Contains("nothing for a Velodyne model (Livox only)"));
}

namespace {

// A host as Livox SDK2 is one: sends a command frame, takes the answer and the port it came from.
class SdkHost {
 public:
  SdkHost() : socket_(io_, {asio::ip::make_address_v4("127.0.0.1"), 0}) {
    socket_.non_blocking(true);
    socket_.set_option(asio::socket_base::broadcast(true));
  }
  // `answering`: take only an answer from that address (a broadcast reaches every unit on the
  // host, other tests' too).
  std::optional<std::pair<livox::CommandView, std::uint16_t>> ask(
      const std::string& address, std::uint16_t port, std::uint16_t command,
      std::span<const std::uint8_t> data, std::vector<std::uint8_t>& in,
      const std::string& answering = "") {
    std::vector<std::uint8_t> frame(livox::kMaxCommandFrame);
    frame.resize(livox::write_command(frame, {.sequence = 77, .command_id = command}, data));
    socket_.send_to(asio::buffer(frame), {asio::ip::make_address_v4(address), port});
    in.assign(2048, 0);
    asio::ip::udp::endpoint from;
    for (int i = 0; i < 500; ++i) {
      boost::system::error_code ec;
      const std::size_t n = socket_.receive_from(asio::buffer(in), from, 0, ec);
      if (!ec && !answering.empty() && from.address().to_string() != answering) {
        in.assign(2048, 0);
        continue;
      }
      if (!ec) {
        in.resize(n);
        livox::CommandView view;
        if (livox::read_command(in, view) != livox::CommandError::kNone) return std::nullopt;
        return std::make_pair(view, from.port());
      }
      std::this_thread::sleep_for(2ms);
    }
    return std::nullopt;
  }

 private:
  asio::io_context io_;
  asio::ip::udp::socket socket_;
};

}  // namespace

TEST_CASE(
    "Livox Mid-360 end to end: SDK2's discovery answered, points from port 56300 on the "
    "engine's hits, IMU from 56400 at 200 Hz",
    "[e2e][livox]") {
  test::UdpReceiver points_socket, imu_socket;
  // Sensor id 5: the unit at 127.0.0.7, apart from any other test's.
  test::DaemonProcess daemon({"--model", "livox-mid360", "--scan-pattern", "test-pattern",
                              "--sensor-id", "5", "--hits", "udp://127.0.0.1:0", "--out",
                              points_socket.url(), "--telemetry", imu_socket.url(), "--physics",
                              "ideal", "--pace", "realtime"});
  CHECK_THAT(daemon.output(), Catch::Contains("scan table the built-in test pattern"));
  CHECK_THAT(daemon.output(), Catch::Contains("Livox SDK2 discovery udp 56000, commands udp "
                                              "127.0.0.7:56100"));

  // Discovery, as SDK2 asks it (a broadcast from the host's address): the unit names itself,
  // its address and its command port, from its discovery port; then a configuration on the
  // command port, accepted from it.
  SdkHost host;
  std::vector<std::uint8_t> answer_bytes;
  const auto found =
      host.ask("255.255.255.255", livox::kDiscoveryPort, 0x0000, {}, answer_bytes, "127.0.0.7");
  REQUIRE(found);
  CHECK(found->second == livox::kDiscoveryPort);
  const auto& detection = found->first.data;
  REQUIRE(detection.size() == 24);
  CHECK(detection[0] == 0);                      // ret_code
  CHECK(detection[1] == livox::kDevTypeMid360);  // dev_type
  CHECK(std::vector<int>(detection.begin() + 18, detection.begin() + 22) ==
        std::vector<int>{127, 0, 0, 7});
  CHECK((detection[22] | detection[23] << 8) == livox::kCommandPorts.lidar);
  const std::array<std::uint8_t, 4> no_keys{0, 0, 0, 0};
  const auto configured =
      host.ask("127.0.0.7", livox::kCommandPorts.lidar, 0x0100, no_keys, answer_bytes);
  REQUIRE(configured);
  CHECK(configured->second == livox::kCommandPorts.lidar);
  CHECK(configured->first.header.command_id == 0x0100);
  CHECK(configured->first.data[0] == 0);  // return code: success

  // The engine casts the demo scene along each frame's beams (a table scan looks elsewhere every
  // frame) and sends them at the sensor's rate.
  const auto pattern = clients::scan_for("livox-mid360", 0, "", "test-pattern");
  const core::BeamGeometry geometry(pattern);
  constexpr int kFrames = 10;  // 1 s
  std::vector<std::vector<float>> frames(kFrames);
  for (std::uint32_t f = 0; f < kFrames; ++f) {
    clients::DemoScene().render(geometry, frames[f], nullptr, 1, 0.001, f);
  }
  std::thread engine([&] {
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.sensor_id = 5, .speed = 1.0});
    for (const auto& rows : frames) streamer.send_frame(rows);
  });
  std::vector<test::UdpReceiver::Datagram> imu;
  std::thread imu_listener([&] { imu = imu_socket.receive(200, 1s, 10s); });
  // 5,000 firings of 4 lasers a frame, 24 firings a packet: 2,083.3 packets a second.
  const auto packets = points_socket.receive(kFrames * 5000 / 24, 1s, 10s);
  engine.join();
  imu_listener.join();
  REQUIRE(daemon.stop() == 0);
  // Both answers counted on /metrics (here its copy in the exit summary).
  CHECK_THAT(daemon.output(), Catch::Contains("lidaremu_livox_sdk_datagrams_total{sensor="
                                              "\"livox-mid360-5\",outcome=\"answered\"} 2"));

  REQUIRE(packets.size() >= (test::kSanitized ? 200U : std::size_t{kFrames * 5000 / 24}));
  if (!test::kSanitized) CHECK(test::steady_rate(packets, 50, 50) == Approx(2083.3).epsilon(0.02));
  // Every packet a 96-point packet from the unit's address and point port; with no frame lost
  // (not sanitized), packet u carries firings 24u .. 24u + 23 of the stream, frame by frame.
  std::size_t compared = 0, off = 0, missing = 0, phantom = 0;
  std::vector<livox::Point> points;
  for (std::size_t u = 0; u < packets.size(); ++u) {
    const auto& p = packets[u];
    CHECK(p.source_port == livox::kPointPorts.lidar);
    CHECK(p.source_ip == 0x7F000007u);
    points.clear();
    livox::PacketInfo info;
    REQUIRE(livox::decode_points(p.bytes, points, &info) == livox::DecodeError::kNone);
    REQUIRE(points.size() == 96);
    CHECK(info.udp_count == static_cast<std::uint16_t>(u));
    CHECK(info.time_type == 1);  // PTP: livox_ros_driver2 keeps the packet's time
    if (test::kSanitized) continue;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::size_t firing = u * 24 + i / 4;
      const std::size_t frame = firing / 5000, column = firing % 5000;
      if (frame >= frames.size()) break;
      const float* row = &frames[frame][(column * 4 + i % 4) * 7];
      const bool hit = row[6] != 0;
      const bool returned = points[i].x != 0 || points[i].y != 0 || points[i].z != 0;
      if (hit && !returned) {
        ++missing;
        continue;
      }
      if (!hit) {
        phantom += returned;
        continue;
      }
      ++compared;
      const double d = std::hypot(points[i].x - row[0], points[i].y - row[1], points[i].z - row[2]);
      // Each coordinate rounded to the millimetre: 0.87 mm at most, plus the range's 0.05 mm.
      off += d > 0.00092 + 1e-5 * std::hypot(row[0], row[1], row[2]);
    }
  }
  if (!test::kSanitized) {
    std::size_t hits = 0;
    for (const auto& rows : frames) hits += test::valid_rows(rows);
    INFO(compared << " compared, " << off << " off, " << missing << " missing, " << phantom
                  << " where nothing was hit");
    CHECK(compared > hits * 9 / 10);  // the stream's last frame may end mid-packet
    CHECK(off == 0);
    CHECK(phantom == 0);
    CHECK(missing < hits / 100);  // under the 0.1 m blind zone, or beyond what returns
  }

  // IMU packets: 60 bytes from the unit's IMU port, 200 a second.
  REQUIRE(imu.size() >= (test::kSanitized ? 20U : 150U));
  for (const auto& d : imu) {
    CHECK(d.source_port == livox::kImuPorts.lidar);
    livox::ImuSample sample;
    CHECK(livox::decode_imu(d.bytes, sample) == livox::DecodeError::kNone);
  }
  if (!test::kSanitized) CHECK(test::steady_rate(imu, 20, 20) == Approx(200).epsilon(0.03));
}

TEST_CASE("Livox across a reload: the new pipeline sends from port 56300 while the old drains",
          "[e2e][livox][reload]") {
  // The mended fault: a reload's new pipeline could not bind 56300 while the old one still held
  // it, and sent from an ephemeral port, whose packets Livox SDK2 drops.
  test::UdpReceiver points_socket;
  const std::uint16_t hits_port = test::free_udp_port();
  const std::string config = "/tmp/lidaremu-livox-reload-" + std::to_string(::getpid()) + ".toml";
  const auto write = [&](double rain) {
    std::ofstream(config) << "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\n[[sensor]]\n"
                          << "model = \"livox-mid360\"\nscan_pattern = \"test-pattern\"\n"
                          << "sensor_id = 6\napi_port = 0\nhits = \"udp://127.0.0.1:" << hits_port
                          << "\"\nout = \"" << points_socket.url()
                          << "\"\nweather = { rain_mm_per_h = " << rain << " }\n";
  };
  write(0);
  test::DaemonProcess daemon({"--config", config});
  const auto pattern = clients::scan_for("livox-mid360", 0, "", "test-pattern");
  const core::BeamGeometry geometry(pattern);
  std::vector<float> rows;
  clients::DemoScene().render(geometry, rows);
  std::atomic<bool> sending{true};
  std::thread engine([&] {
    clients::UdpSender sender("udp://127.0.0.1:" + std::to_string(hits_port));
    clients::FrameStreamer streamer(sender, pattern, {.sensor_id = 6, .speed = 1.0});
    while (sending) streamer.send_frame(rows);
  });
  std::vector<test::UdpReceiver::Datagram> packets;
  std::thread listener([&] { packets = points_socket.receive(100'000, 2s, 4s); });
  std::this_thread::sleep_for(1500ms);
  write(5);
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("reloaded", 30s));
  listener.join();
  sending = false;
  engine.join();
  REQUIRE(daemon.stop() == 0);
  std::filesystem::remove(config);
  // Sent before, during and after the reload: every packet from the unit's point port.
  REQUIRE(packets.size() > (test::kSanitized ? 200U : 4000U));
  std::size_t elsewhere = 0;
  for (const auto& p : packets) elsewhere += p.source_port != livox::kPointPorts.lidar;
  CHECK(elsewhere == 0);
  CHECK_THAT(daemon.output(), !Catch::Contains("cannot send from"));
}

TEST_CASE("Livox SDK2's connection: the firmware type, then host ends that move the streams",
          "[e2e][livox]") {
  // SDK2, once it has found a unit: 0x0101 for the firmware type (it asks again and again
  // until the first key is 0x8010), then 0x0100 with its config's host ends for state
  // information, points and IMU (build_request.cpp); the unit sends there from then on.
  test::UdpReceiver configured_points, configured_imu, moved_points, moved_imu;
  // Sensor id 8: the unit at 127.0.0.10, apart from the other tests'.
  test::DaemonProcess daemon({"--model", "livox-mid360", "--scan-pattern", "test-pattern",
                              "--sensor-id", "8", "--hits", "udp://127.0.0.1:0", "--out",
                              configured_points.url(), "--telemetry", configured_imu.url(),
                              "--physics", "ideal", "--pace", "realtime"});
  SdkHost host;
  std::vector<std::uint8_t> in;
  const auto key_list = [](std::uint16_t key) {
    return std::vector<std::uint8_t>{
        1, 0, 0, 0, static_cast<std::uint8_t>(key & 0xFF), static_cast<std::uint8_t>(key >> 8)};
  };
  const auto fw = host.ask("127.0.0.10", livox::kCommandPorts.lidar, 0x0101, key_list(0x8010), in);
  REQUIRE(fw);
  REQUIRE(fw->first.data.size() == 8);
  CHECK(std::vector<int>(fw->first.data.begin(), fw->first.data.end()) ==
        std::vector<int>{0, 1, 0, 0x10, 0x80, 1, 0, 1});  // ret 0, one key, 0x8010 = 1
  // The host ends, each {address, host port, lidar port}, little-endian ports.
  const auto ends = [](std::uint16_t key, std::uint16_t host_port, std::uint16_t lidar_port) {
    return std::vector<std::uint8_t>{static_cast<std::uint8_t>(key & 0xFF),
                                     static_cast<std::uint8_t>(key >> 8),
                                     8,
                                     0,
                                     127,
                                     0,
                                     0,
                                     1,
                                     static_cast<std::uint8_t>(host_port & 0xFF),
                                     static_cast<std::uint8_t>(host_port >> 8),
                                     static_cast<std::uint8_t>(lidar_port & 0xFF),
                                     static_cast<std::uint8_t>(lidar_port >> 8)};
  };
  std::vector<std::uint8_t> settings{3, 0, 0, 0};
  for (const auto& kv : {ends(0x0005, 56201, 56200), ends(0x0006, moved_points.port(), 56300),
                         ends(0x0007, moved_imu.port(), 56400)}) {
    settings.insert(settings.end(), kv.begin(), kv.end());
  }
  const auto set = host.ask("127.0.0.10", livox::kCommandPorts.lidar, 0x0100, settings, in);
  REQUIRE(set);
  CHECK(std::vector<int>(set->first.data.begin(), set->first.data.end()) ==
        std::vector<int>{0, 0, 0});
  // Asked again, the unit reports where its points now go.
  const auto now = host.ask("127.0.0.10", livox::kCommandPorts.lidar, 0x0101, key_list(0x0006), in);
  REQUIRE(now);
  REQUIRE(now->first.data.size() == 3 + 4 + 8);
  CHECK((now->first.data[11] | now->first.data[12] << 8) == moved_points.port());
  // Points pointed at an address that is neither loopback nor the host asking (issue 33's
  // destination policy): refused with a non-zero return code, the stream stays.
  auto elsewhere = std::vector<std::uint8_t>{1, 0, 0, 0};
  auto away = ends(0x0006, 2000, 56300);
  away[4] = 8;  // 8.0.0.1
  elsewhere.insert(elsewhere.end(), away.begin(), away.end());
  const auto refused = host.ask("127.0.0.10", livox::kCommandPorts.lidar, 0x0100, elsewhere, in);
  REQUIRE(refused);
  REQUIRE_FALSE(refused->first.data.empty());
  CHECK(refused->first.data[0] != 0);

  const auto pattern = clients::scan_for("livox-mid360", 0, "", "test-pattern");
  const core::BeamGeometry geometry(pattern);
  std::vector<std::vector<float>> frames(3);
  for (std::uint32_t f = 0; f < frames.size(); ++f) {
    clients::DemoScene().render(geometry, frames[f], nullptr, 1, 0.001, f);
  }
  std::thread engine([&] {
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.sensor_id = 8, .speed = 1.0});
    for (const auto& rows : frames) streamer.send_frame(rows);
  });
  // One whole frame (208 packets) at least: under ThreadSanitizer a frame's physics takes over
  // three periods, and the admission drops the frames that waited behind the first.
  const auto points = moved_points.receive(208, 1s, 10s);
  const auto imu = moved_imu.receive(20, 1s, 10s);
  engine.join();
  REQUIRE(daemon.stop() == 0);
  REQUIRE(points.size() >= 208);
  for (const auto& p : points) {
    CHECK(p.source_ip == 0x7F00000Au);
    CHECK(p.source_port == livox::kPointPorts.lidar);  // still the port SDK2 takes points from
  }
  REQUIRE(imu.size() >= 20);
  CHECK(imu.front().source_port == livox::kImuPorts.lidar);
  // Nothing went to where the daemon was started to send.
  CHECK(configured_points.receive(1, 100ms, 200ms).empty());
  CHECK(configured_imu.receive(1, 100ms, 200ms).empty());
  CHECK(daemon.counter(
            "lidaremu_destination_changes_total{sensor=\"livox-mid360-8\",outcome=\"refused\"}") ==
        1);
  CHECK(daemon.counter(
            "lidaremu_destination_changes_total{sensor=\"livox-mid360-8\",outcome=\"accepted\"}") ==
        1);
}
