// RoboSense models in the daemon: their settings, and the real lidaremud on loopback fed by an
// engine over UDP, its MSOP and DIFOP streams read by a client that, as rs_driver and nebula do,
// decodes nothing before a DIFOP has arrived.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

TEST_CASE("RoboSense settings: ports, rotation rates and return modes a real unit has",
          "[settings][robosense]") {
  daemon::SensorFlags f;
  f.model = "rs-helios";
  const auto s = daemon::sensor_from_flags(f);
  CHECK(s.out.port == 6699);        // MSOP
  CHECK(s.telemetry.port == 7788);  // DIFOP
  CHECK(s.api_port == 0);           // drivers ask a RoboSense unit nothing
  CHECK(s.pipeline.return_mode == core::ReturnMode::kStrongest);
  CHECK(s.pattern.columns_per_frame == 1800);  // 0.2 degree at 600 rpm
  f.rpm = 1200;
  CHECK(daemon::sensor_from_flags(f).pattern.columns_per_frame == 900);
  f.calibration_out = "/tmp/angle.csv";  // rs_driver's angle file
  CHECK_NOTHROW(daemon::sensor_from_flags(f));
  for (const auto& [model, key, value, expected] :
       {std::tuple{"rs-helios", "rpm", "900",
                   "--rpm: rpm 900 is not one of 600..1200 in steps of 600"},
        std::tuple{"rs-helios", "return_mode", "first-last",
                   "dual|strongest|last|first (this model's return modes)"},
        std::tuple{"rs-bpearl", "return_mode", "first",
                   "dual|strongest|last (this model's return modes)"},
        std::tuple{"rs-bpearl", "rpm", "300", "--rpm: rpm 300 is not one of 600..1200"},
        std::tuple{"rs-bpearl", "metadata_out", "/tmp/x.json",
                   "nothing for a RoboSense model (Ouster only)"}}) {
    INFO(model << " " << key);
    daemon::SensorFlags bad;
    bad.model = model;
    const std::string k = key;
    if (k == "rpm") bad.rpm = std::stoi(value);
    if (k == "return_mode") bad.return_mode = value;
    if (k == "metadata_out") bad.metadata_out = value;
    CHECK_THROWS_WITH(daemon::sensor_from_flags(bad), Catch::Contains(expected));
  }
}

namespace {

// One MSOP or DIFOP datagram in arrival order.
struct Arrival {
  double at_s;
  bool difop;
  const std::vector<std::uint8_t>* bytes;
};

std::vector<Arrival> in_arrival_order(const std::vector<test::UdpReceiver::Datagram>& msop,
                                      const std::vector<test::UdpReceiver::Datagram>& difop) {
  std::vector<Arrival> all;
  for (const auto& d : msop) all.push_back({d.arrival_s, false, &d.bytes});
  for (const auto& d : difop) all.push_back({d.arrival_s, true, &d.bytes});
  std::stable_sort(all.begin(), all.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at_s < b.at_s; });
  return all;
}

}  // namespace

TEST_CASE(
    "RS-Helios end to end: a DIFOP a second, and a DIFOP-first client's points only "
    "after its first DIFOP, each on the engine's hit",
    "[e2e][robosense]") {
  const auto& model = *core::find_sensor_model("rs-helios");
  test::UdpReceiver msop_socket, difop_socket;
  const auto angle_file = std::filesystem::temp_directory_path() /
                          ("lidaremu-helios-" + std::to_string(::getpid()) + ".csv");
  test::DaemonProcess daemon({"--model", "rs-helios", "--hits", "udp://127.0.0.1:0", "--out",
                              msop_socket.url(), "--telemetry", difop_socket.url(), "--physics",
                              "ideal", "--pace", "realtime", "--idle-timeout-ms", "200",
                              "--calibration-out", angle_file.string()});
  // Its start-up line names the side channel drivers wait for.
  CHECK_THAT(daemon.output(),
             Catch::Contains(", DIFOP " + difop_socket.url() + ", from 127.0.0.2"));
  const auto pattern = clients::scan_for("rs-helios", 600, "");
  const auto rows = test::scene_rows(pattern);
  constexpr int kFrames = 30;  // 3 s at 10 Hz
  std::thread engine([&] {
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < kFrames; ++f) streamer.send_frame(rows);
  });
  std::vector<test::UdpReceiver::Datagram> difop;
  std::thread difop_listener([&] { difop = difop_socket.receive(10, 2s, 10s); });
  const auto msop = msop_socket.receive(std::size_t{kFrames} * 150, 2s, 10s);
  engine.join();
  difop_listener.join();
  REQUIRE(daemon.stop() == 0);
  // rs_driver's angle.csv as written: the row's angles, "vertical,horizontal" a line.
  CHECK(test::slurp(angle_file.string()) == core::robosense::angle_csv(model));
  std::filesystem::remove(angle_file);

  // 150 MSOP packets a turn, 1500 a second; a DIFOP about once a second of sensor time. A
  // sanitized daemon falls behind real time and drops whole frames (counted, as the admission
  // does): fewer packets, and a DIFOP may wait for the next packet after a dropped frame.
  REQUIRE(msop.size() >= (test::kSanitized ? std::size_t{150} : std::size_t{kFrames - 1} * 150));
  if (!test::kSanitized) CHECK(test::steady_rate(msop, 150, 150) == Approx(1500).epsilon(0.02));
  REQUIRE(difop.size() >= (test::kSanitized ? 2U : 3U));
  std::vector<double> difop_times;
  for (const auto& d : difop) {
    core::robosense::DifopInfo info;
    REQUIRE(core::robosense::read_difop(d.bytes, *model.robosense.format, info) ==
            core::robosense::DifopError::kNone);
    CHECK(info.return_mode == 0x04);  // strongest
    CHECK(info.rpm == 600);
    // The unit states its own address and the ports it sends to.
    CHECK(info.lidar_ip == std::array<std::uint8_t, 4>{127, 0, 0, 2});
    CHECK(info.msop_port == msop_socket.port());
    CHECK(info.difop_port == difop_socket.port());
    difop_times.push_back(info.time_s);
  }
  for (std::size_t i = 1; i < difop_times.size(); ++i) {
    CHECK(difop_times[i] - difop_times[i - 1] == Approx(1.0).margin(test::kSanitized ? 0.3 : 0.01));
  }

  // The client starts listening for DIFOP half a second late (its DIFOP port opened after the
  // MSOP one, as happens when a driver restarts): until a DIFOP reaches it, no point.
  core::robosense::SpecDecoder decoder(model);
  std::size_t before = 0, after = 0, points_before = 0, compared = 0;
  for (const Arrival& a : in_arrival_order(msop, difop)) {
    if (a.difop) {
      if (a.at_s >= 0.5) decoder.on_difop(*a.bytes);
      continue;
    }
    std::vector<core::robosense::Point> points;
    const auto error = decoder.decode(*a.bytes, points);
    if (!decoder.has_difop()) {
      CHECK(error == core::robosense::DecodeError::kNoDifop);
      ++before;
      points_before += points.size();
      continue;
    }
    REQUIRE(error == core::robosense::DecodeError::kNone);
    ++after;
    for (const auto& p : points) {
      const auto column = static_cast<std::size_t>(std::lround(p.block_azimuth / 20.0)) % 1800;
      const float* row = &rows[(column * 32 + p.channel) * 7];
      REQUIRE(row[6] != 0);  // a return where the engine hit nothing would be invented
      const Eigen::Vector3d hit(row[0], row[1], row[2]);
      // Within half the 2.5 mm quantum (the rows are floats: 1e-5 m more).
      REQUIRE((Eigen::Vector3d(p.x, p.y, p.z) - hit).norm() <= 0.00125 + 2e-5);
      ++compared;
    }
  }
  INFO(before << " MSOP packets before the first DIFOP the client saw, " << after << " after");
  CHECK(before > (test::kSanitized ? 0 : 300));  // about a second's worth
  CHECK(points_before == 0);
  CHECK(after > (test::kSanitized ? 0 : 1000));
  CHECK(compared > (test::kSanitized ? 0 : 100000));
}
