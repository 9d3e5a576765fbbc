// Hesai models in the daemon: their settings, the real lidaremud process on loopback fed by an
// engine over UDP, its packets decoded with the spec decoder and the calibration file the daemon
// wrote (as nebula does with udp_only), and the packet rate a real unit keeps.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/hesai/ptc.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

TEST_CASE("Hesai settings: ports, rotation rates and return modes a real unit has",
          "[settings][hesai]") {
  daemon::SensorFlags f;
  f.model = "pandar-xt32";
  const auto s = daemon::sensor_from_flags(f);
  CHECK(s.out.port == 2368);         // the manual's point-cloud port
  CHECK(s.telemetry.port == 10110);  // nebula's gnss_port
  CHECK(s.pattern.columns_per_frame == 2000);
  f.rpm = 1200;
  CHECK(daemon::sensor_from_flags(f).pattern.columns_per_frame == 1000);
  for (const auto& [key, value, expected] :
       {std::tuple{"rpm", "900", "--rpm: rpm 900 is not one of 600..1200 in steps of 600"},
        std::tuple{"mode", "1024x10", "nothing for a Hesai model (Ouster only)"},
        std::tuple{"return_mode", "triple",
                   "last|strongest|dual|first|first-strongest (this model's return modes)"},
        std::tuple{"metadata_out", "/tmp/x.json", "nothing for a Hesai model (Ouster only)"},
        std::tuple{"profile", "rng19", "nothing for a Hesai model (Ouster only)"}}) {
    INFO(key);
    daemon::SensorFlags bad;
    bad.model = "pandar-xt16";
    const std::string k = key;
    if (k == "rpm") bad.rpm = std::stoi(value);
    if (k == "mode") bad.mode = value;
    if (k == "return_mode") bad.return_mode = value;
    if (k == "metadata_out") bad.metadata_out = value;
    if (k == "profile") bad.profile = value;
    CHECK_THROWS_WITH(daemon::sensor_from_flags(bad), Catch::Contains(expected));
  }
  // The QT64 has no strongest mode: by default it reports the last, its dual is first + last.
  daemon::SensorFlags qt64;
  qt64.model = "pandar-qt64";
  CHECK(daemon::sensor_from_flags(qt64).pipeline.return_mode == core::ReturnMode::kLast);
  CHECK(daemon::sensor_from_flags(qt64).pattern.columns_per_frame == 600);  // 0.6 degree
  qt64.return_mode = "first-last";
  CHECK(daemon::sensor_from_flags(qt64).pipeline.return_mode == core::ReturnMode::kFirstLast);
  for (const char* refused : {"strongest", "dual", "first-strongest"}) {
    qt64.return_mode = refused;
    CHECK_THROWS_WITH(daemon::sensor_from_flags(qt64),
                      Catch::Contains("expected last|first-last|first (this model's"));
  }
  daemon::SensorFlags xt32m;
  xt32m.model = "pandar-xt32m";
  xt32m.return_mode = "first-strongest";  // its real capture's mode
  CHECK(daemon::sensor_from_flags(xt32m).pipeline.return_mode == core::ReturnMode::kFirstStrongest);
  CHECK(daemon::sensor_from_flags(xt32m).pattern.columns_per_frame == 2000);
  xt32m.return_mode = "first-last";
  CHECK_THROWS_WITH(daemon::sensor_from_flags(xt32m), Catch::Contains("this model's return modes"));
  daemon::SensorFlags velodyne;
  velodyne.calibration_out = "/tmp/x.csv";
  CHECK_THROWS_WITH(daemon::sensor_from_flags(velodyne),
                    Catch::Contains("nothing for a Velodyne model (Hesai and RoboSense only)"));
}

TEST_CASE("Pandar XT32 end to end, framed and raw, dual: decoded points are the engine's hits",
          "[e2e][hesai]") {
  const auto& model = *core::find_sensor_model("pandar-xt32");
  const auto& format = *model.hesai.format;
  for (const std::string hits_format : {"framed", "raw7"}) {
    INFO(hits_format);
    const auto calibration_file =
        std::filesystem::temp_directory_path() /
        ("lidaremu-xt32-" + std::to_string(::getpid()) + "-" + hits_format + ".csv");
    const auto firetimes_file =
        std::filesystem::temp_directory_path() /
        ("lidaremu-xt32-firetimes-" + std::to_string(::getpid()) + "-" + hits_format + ".csv");
    test::UdpReceiver data, telemetry;
    test::DaemonProcess daemon({"--model",
                                "pandar-xt32",
                                "--hits",
                                "udp://127.0.0.1:0",
                                "--hits-format",
                                hits_format,
                                "--out",
                                data.url(),
                                "--telemetry",
                                telemetry.url(),
                                "--physics",
                                "ideal",
                                "--pace",
                                "afap",
                                "--return-mode",
                                "dual",
                                "--idle-timeout-ms",
                                "100",
                                "--calibration-out",
                                calibration_file.string(),
                                "--firetimes-out",
                                firetimes_file.string()});
    const auto pattern = clients::scan_for("pandar-xt32", 600, "");
    const auto rows = test::scene_rows(pattern);
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0, .raw = hits_format == "raw7"});
    streamer.send_frame(rows);
    streamer.send_frame(rows);
    // Two turns of 2000 columns, 4 columns a dual packet.
    const auto packets = data.receive(1000, 3s, 20s);
    REQUIRE(daemon.stop() == 0);
    CHECK(packets.size() == 1000);
    // The calibration the daemon wrote is the unit's, and the decoder takes its angles from it.
    auto calibration = core::hesai::parse_calibration_csv(test::slurp(calibration_file));
    const auto shipped =
        core::hesai::parse_calibration_csv(test::slurp(test::data_path("hesai/PandarXT32.csv")));
    CHECK(calibration.elevation_deg == shipped.elevation_deg);
    CHECK(calibration.azimuth_offset_deg == shipped.azimuth_offset_deg);
    std::filesystem::remove(calibration_file);
    // With the firetime file too, as the Hesai SDK decodes (channel k fires 6 + 1.512 k us
    // after its block's azimuth: the SDK's PandarXT-32 file).
    calibration.firetime_us = core::hesai::parse_firetimes_file(test::slurp(firetimes_file));
    std::filesystem::remove(firetimes_file);
    REQUIRE(calibration.firetime_us.size() == 1);
    CHECK(calibration.firetime_us[0].front() == Approx(6.0));
    CHECK(calibration.firetime_us[0].back() == Approx(52.872));
    const core::hesai::SpecDecoder decoder(format, calibration);
    std::size_t compared = 0;
    std::uint32_t previous_sequence = 0;
    for (std::size_t i = 0; i < packets.size(); ++i) {
      std::vector<core::hesai::Point> points;
      core::hesai::PacketInfo info;
      REQUIRE(decoder.decode(packets[i].bytes, points, &info) == core::hesai::DecodeError::kNone);
      CHECK(info.return_mode == core::hesai::kLastStrongest);
      if (i > 0) CHECK(info.udp_sequence == previous_sequence + 1);
      previous_sequence = info.udp_sequence;
      for (const auto& p : points) {
        const auto column = static_cast<std::size_t>(std::lround(p.block_azimuth / 18.0)) % 2000;
        const float* row = &rows[(column * 32 + p.channel) * 7];
        REQUIRE(row[6] != 0);  // a return where the engine hit nothing would be invented
        const Eigen::Vector3d hit(row[0], row[1], row[2]);
        // Within half the 4 mm quantum along the beam and half the 0.01-degree azimuth quantum
        // across it (the rows are floats: 1e-5 m more).
        REQUIRE(std::fabs(p.distance_m - hit.norm()) <= 0.002 + 1e-5);
        REQUIRE((Eigen::Vector3d(p.x, p.y, p.z) - hit).norm() <=
                0.002 + 1e-5 + hit.norm() * 0.005 * M_PI / 180);
        ++compared;
      }
    }
    // Each hit twice a turn (dual: the one echo in the last and the strongest block).
    CHECK(compared == std::size_t{4} * test::valid_rows(rows));
    CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"pandar-xt32-0\"}") == 0);
  }
}

TEST_CASE("Realtime pacing holds the Pandar XT32's dual-return rate: 5000 packets/s",
          "[e2e][pacing][hesai]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "pandar-xt32", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--pace", "realtime",
                              "--return-mode", "dual"});
  const auto pattern = clients::scan_for("pandar-xt32", 0, "");
  const auto rows = test::scene_rows(pattern);
  std::thread engine([&] {
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < 15; ++f) streamer.send_frame(rows);
  });
  auto packets = data.receive(std::size_t{15} * 500, 1s, 10s);
  engine.join();
  daemon.stop();
  REQUIRE(packets.size() > 5000);
  const double rate = test::steady_rate(packets, 500, 500);
  INFO("measured " << rate << " packets/s");
  CHECK(rate == Approx(5000).epsilon(0.01));  // one packet every 200 us, as the real unit
}
