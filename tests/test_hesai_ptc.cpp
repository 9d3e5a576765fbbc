// Hesai PTC (TCP 9347) against the real lidaremud process: each driver's session as its source
// runs it (nebula's for the XT32, QT64, OT128 and AT128; the Hesai SDK's start order), every
// reply the length the driver requires, and the running unit's packets after the changes.
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

namespace {

// A PTC client written from the facts (FORMATS-HESAI-ROBOSENSE.md "Hesai PTC"): one TCP
// connection, requests one after another, as nebula's hardware interface holds it.
class PtcClient {
 public:
  PtcClient(const std::string& ip, std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, ip.c_str(), &to.sin_addr);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0);
    // A set command rebuilds the sensor's pipeline before it answers: an AT128's takes seconds in
    // a sanitized daemon.
    const timeval timeout{test::kSanitized ? 60 : 5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~PtcClient() { ::close(fd_); }
  PtcClient(const PtcClient&) = delete;
  PtcClient& operator=(const PtcClient&) = delete;

  struct Reply {
    std::uint8_t command = 0, code = 0xFF;
    std::vector<std::uint8_t> payload;
    bool closed = false;
  };
  void send_raw(const std::vector<std::uint8_t>& bytes) {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  Reply request(std::uint8_t command, const std::vector<std::uint8_t>& payload = {}) {
    send_raw(core::hesai::ptc::frame(command, 0, payload));
    return read_reply();
  }
  Reply read_reply() {
    Reply r;
    std::array<std::uint8_t, 8> header{};
    if (!read_exactly(header.data(), header.size())) {
      r.closed = true;
      return r;
    }
    const auto h = core::hesai::ptc::parse_header(header);
    REQUIRE(h);
    r.command = h->command;
    r.code = h->return_code;
    r.payload.resize(h->payload_size);
    REQUIRE(read_exactly(r.payload.data(), r.payload.size()));
    return r;
  }

 private:
  bool read_exactly(std::uint8_t* at, std::size_t n) {
    while (n > 0) {
      const ssize_t got = ::recv(fd_, at, n, 0);
      if (got <= 0) return false;
      at += got;
      n -= static_cast<std::size_t>(got);
    }
    return true;
  }
  int fd_ = -1;
};

std::vector<std::uint8_t> be16(std::uint16_t v) {
  return {static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

}  // namespace

TEST_CASE("PTC on TCP 9347: nebula's start-up sequence against the running Pandar XT32",
          "[e2e][hesai][ptc]") {
  namespace ptc = core::hesai::ptc;
  test::UdpReceiver data, gps, moved_data;
  test::DaemonProcess daemon({"--model", "pandar-xt32", "--hits", "udp://127.0.0.1:0",
                              "--hits-format", "raw7", "--out", data.url(), "--telemetry",
                              gps.url(), "--physics", "ideal", "--return-mode", "dual",
                              "--sensor-ip", "127.0.0.4"});
  CHECK(daemon.output().find("PTC tcp 127.0.0.4:9347") != std::string::npos);
  const auto pattern = clients::scan_for("pandar-xt32", 600, "");
  const auto rows = test::scene_rows(pattern);
  std::atomic<bool> done{false};
  std::thread engine([&] {
    clients::UdpSender sender(test::hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0, .raw = true});
    while (!done) streamer.send_frame(rows);
  });
  const auto& model = *core::find_sensor_model("pandar-xt32");
  {
    PtcClient client("127.0.0.4", 9347);
    // 1. Inventory: nebula takes the sensor model from its model byte.
    const auto inventory = client.request(ptc::kGetInventory);
    REQUIRE(inventory.code == ptc::kOk);
    CHECK(inventory.command == ptc::kGetInventory);
    REQUIRE(inventory.payload.size() == ptc::kInventorySize);
    CHECK(inventory.payload[ptc::kInventoryModelAt] == 25);  // PandarXT32
    CHECK(inventory.payload[ptc::kInventoryLinesAt] == 32);
    CHECK(inventory.payload[0] != 0);  // a serial number
    // 2. Calibration: the CSV nebula parses, the unit's angles.
    const auto calibration = client.request(ptc::kGetCalibration);
    REQUIRE(calibration.code == ptc::kOk);
    const auto angles = core::hesai::parse_calibration_csv(
        std::string(calibration.payload.begin(), calibration.payload.end()));
    CHECK(angles.elevation_deg == model.elevation_deg);
    CHECK(angles.azimuth_offset_deg == model.azimuth_offset_deg);
    // 3. Config and status: what setup_sensor compares with its own settings.
    auto config_reply = client.request(ptc::kGetConfig);
    REQUIRE(config_reply.code == ptc::kOk);
    REQUIRE(config_reply.payload.size() == ptc::kConfigSize);
    auto config = ptc::parse_config(config_reply.payload);
    CHECK(config.spin_rate == 600);
    CHECK(config.return_mode == ptc::kPtcLastStrongest);
    CHECK(config.destination_port == test::port_of(data.url()));
    CHECK(config.gps_port == test::port_of(gps.url()));
    CHECK(config.ip == std::array<std::uint8_t, 4>{127, 0, 0, 4});
    const auto status = client.request(ptc::kGetStatus);
    REQUIRE(status.code == ptc::kOk);
    REQUIRE(status.payload.size() == ptc::kStatusSize);
    CHECK(((status.payload[4] << 8) | status.payload[5]) == 600);  // motor speed
    // 4. setup_sensor's set-commands for a config that differs: strongest, 1200 rpm, a new
    // destination; sync angle, clock source, standby, lidar range as nebula sends them.
    const auto port = test::port_of(moved_data.url());
    std::vector<std::uint8_t> destination{127, 0, 0, 1};
    for (const auto b : be16(port)) destination.push_back(b);
    for (const auto b : be16(test::port_of(gps.url()))) destination.push_back(b);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcStrongest}).code == ptc::kOk);
    CHECK(client.request(ptc::kSetSpinRate, be16(1200)).code == ptc::kOk);
    CHECK(client.request(ptc::kSetDestination, destination).code == ptc::kOk);
    CHECK(client.request(ptc::kSetSyncAngle, {0, 0, 0}).code == ptc::kOk);
    CHECK(client.request(ptc::kSetClockSource, {0}).code == ptc::kOk);
    CHECK(client.request(ptc::kSetStandbyMode, {0}).code == ptc::kOk);
    CHECK(client.request(ptc::kSetLidarRange, {0, 0, 0, 0x0E, 0x10}).code == ptc::kOk);
    config = ptc::parse_config(client.request(ptc::kGetConfig).payload);
    CHECK(config.spin_rate == 1200);
    CHECK(config.return_mode == ptc::kPtcStrongest);
    CHECK(config.destination_port == port);
    // Refused with a return code, the connection kept: an unknown command, a return mode and a
    // rate the unit does not have, a short payload.
    CHECK(client.request(0x99).code == ptc::kUnsupportedCommand);
    CHECK(client.request(ptc::kSetReturnMode, {9}).code == ptc::kInvalidParameter);
    CHECK(client.request(ptc::kSetSpinRate, be16(900)).code == ptc::kInvalidParameter);
    CHECK(client.request(ptc::kSetDestination, {127, 0}).code == ptc::kInvalidParameter);
    CHECK(client.request(ptc::kGetInventory).code == ptc::kOk);
  }
  // The running unit now sends strongest returns at 1200 rpm to the new destination.
  const auto moved = moved_data.receive(300, 3s, 10s);
  REQUIRE(moved.size() >= 300);
  const core::hesai::SpecDecoder decoder(*model.hesai.format,
                                         {model.elevation_deg, model.azimuth_offset_deg});
  std::size_t strongest_1200 = 0;
  for (const auto& p : moved) {
    std::vector<core::hesai::Point> points;
    core::hesai::PacketInfo info;
    REQUIRE(decoder.decode(p.bytes, points, &info) == core::hesai::DecodeError::kNone);
    strongest_1200 += info.return_mode == core::hesai::kStrongest && info.motor_rpm == 1200;
  }
  CHECK(strongest_1200 == moved.size());
  // Not PTC: the connection closes, the server keeps serving.
  {
    PtcClient stranger("127.0.0.4", 9347);
    stranger.send_raw({'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1'});
    CHECK(stranger.read_reply().closed);
  }
  {
    PtcClient greedy("127.0.0.4", 9347);
    greedy.send_raw({0x47, 0x74, 0x07, 0x00, 0x7F, 0xFF, 0xFF, 0xFF});  // a 2 GiB payload
    CHECK(greedy.read_reply().closed);
  }
  PtcClient after("127.0.0.4", 9347);
  CHECK(after.request(ptc::kGetInventory).code == ptc::kOk);
  // The GPS packets on the telemetry port (nebula's gnss_port): one a second, from the unit's
  // address, each naming the whole second it follows (the set-commands above rebuilt the
  // pipeline, whose new encoder counts afresh: around them a second may be missing or twice).
  const auto gps_packets = gps.receive(2, 3s, 6s);
  REQUIRE(gps_packets.size() >= 2);
  std::int64_t previous_second = 0;
  for (const auto& p : gps_packets) {
    core::hesai::GpsInfo info;
    REQUIRE(core::hesai::read_gps_packet(p.bytes, info) == core::hesai::GpsError::kNone);
    CHECK(p.source_ip == 0x7F000004u);
    CHECK(info.pps_locked);
    CHECK(info.nmea.rfind("$GPRMC,", 0) == 0);
    const double now_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(std::fabs(static_cast<double>(info.unix_second) - now_s) < 10.0);  // the wall clock
    if (previous_second != 0) CHECK(info.unix_second >= previous_second);
    previous_second = info.unix_second;
  }
  done = true;
  engine.join();
  CHECK(daemon.stop() == 0);
  // The stranger and the greedy header, counted as what they were.
  CHECK(daemon.counter("lidaremu_api_connections_closed_total{sensor=\"pandar-xt32-0\",api=\"ptc\","
                       "reason=\"malformed\"}") == 2);
  // The settings that changed rebuilt the pipeline (those asked together, once or twice).
  CHECK(daemon.counter("lidaremu_reinitialisations_total{sensor=\"pandar-xt32-0\"}") >= 1);
}

TEST_CASE("PTC: a return mode the model has not is refused, and the unit keeps sending",
          "[e2e][hesai][ptc][hostile]") {
  namespace ptc = core::hesai::ptc;
  // The Pandar40P has no first-return mode: a pipeline started with it would have no encoder.
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-40p", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--physics", "ideal", "--pace",
                              "afap", "--sensor-ip", "127.0.0.6"});
  {
    PtcClient client("127.0.0.6", 9347);
    const auto inventory = client.request(ptc::kGetInventory);
    REQUIRE(inventory.code == ptc::kOk);
    CHECK(inventory.payload[ptc::kInventoryModelAt] == 0);  // Pandar40P
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcFirst}).code == ptc::kInvalidParameter);
    CHECK(ptc::parse_config(client.request(ptc::kGetConfig).payload).return_mode ==
          ptc::kPtcStrongest);
  }
  const auto pattern = clients::scan_for("pandar-40p", 0, "");
  clients::UdpSender sender(test::hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(test::scene_rows(pattern));
  CHECK(data.receive(150, 3s, 10s).size() >= 150);  // 180 single packets a turn
  CHECK(daemon.stop() == 0);
}

TEST_CASE("PTC: the QT64's own return-mode codes, and its first + last packets",
          "[e2e][hesai][ptc]") {
  namespace ptc = core::hesai::ptc;
  // nebula's hesai_common: on the QT64, 0 last, 2 its dual (first + last), 3 first; no strongest.
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-qt64", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--physics", "ideal", "--pace",
                              "afap", "--sensor-ip", "127.0.0.12"});
  {
    PtcClient client("127.0.0.12", 9347);
    const auto inventory = client.request(ptc::kGetInventory);
    REQUIRE(inventory.code == ptc::kOk);
    CHECK(inventory.payload[ptc::kInventoryModelAt] == 15);  // PandarQT64
    CHECK(inventory.payload[ptc::kInventoryLinesAt] == 64);
    CHECK(ptc::parse_config(client.request(ptc::kGetConfig).payload).return_mode == ptc::kPtcLast);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcStrongest}).code == ptc::kInvalidParameter);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcFirstStrongest}).code ==
          ptc::kInvalidParameter);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcQt64Dual}).code == ptc::kOk);
    CHECK(ptc::parse_config(client.request(ptc::kGetConfig).payload).return_mode ==
          ptc::kPtcQt64Dual);
  }
  const auto pattern = clients::scan_for("pandar-qt64", 0, "");
  clients::UdpSender sender(test::hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(test::scene_rows(pattern));
  const auto packets = data.receive(300, 3s, 10s);  // 300 dual packets a turn
  REQUIRE(packets.size() >= 300);
  const auto& model = *core::find_sensor_model("pandar-qt64");
  const auto& format = *model.hesai.format;
  const core::hesai::SpecDecoder decoder(format, {model.elevation_deg, model.azimuth_offset_deg});
  std::size_t first_last = 0, points_total = 0;
  for (const auto& p : packets) {
    std::vector<core::hesai::Point> points;
    core::hesai::PacketInfo info;
    REQUIRE(p.bytes.size() == 1072);
    REQUIRE(decoder.decode(p.bytes, points, &info) == core::hesai::DecodeError::kNone);
    first_last += info.return_mode == core::hesai::kFirstLast && info.return_num == 2;
    points_total += points.size();
  }
  CHECK(first_last == packets.size());
  CHECK(points_total > 1000);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("PTC: nebula's OT128 session (FORMATS-MORE.md 1.7), then its packets decode",
          "[e2e][hesai][ptc]") {
  namespace ptc = core::hesai::ptc;
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-ot128", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--physics", "ideal", "--pace",
                              "afap", "--sensor-ip", "127.0.0.13"});
  {
    // nebula's order, each reply at least (or exactly) the length nebula needs: a shorter one,
    // or a return code other than 0, ends nebula's start-up.
    PtcClient client("127.0.0.13", 9347);
    const auto inventory = client.request(ptc::kGetInventory);  // 1
    REQUIRE(inventory.code == ptc::kOk);
    CHECK(inventory.command == ptc::kGetInventory);
    REQUIRE(inventory.payload.size() >= 162);
    CHECK(inventory.payload[106] == 42);  // OT128
    CHECK(inventory.payload[108] == 128);
    const auto config = client.request(ptc::kGetConfig);  // 2
    REQUIRE(config.code == ptc::kOk);
    REQUIRE(config.payload.size() >= 47);
    // The daemon's default is strongest; nebula's Pandar128E4X default is Dual, which it sets.
    CHECK(ptc::parse_config(config.payload).return_mode == ptc::kPtcStrongest);
    CHECK(ptc::parse_config(config.payload).spin_rate == 600);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcLastStrongest}).code == ptc::kOk);
    CHECK(client.request(ptc::kSetSyncAngle, {0, 0, 0}).code == ptc::kOk);  // 3
    const auto ptp = client.request(ptc::kGetPtpConfig);                    // 4
    REQUIRE(ptp.code == ptc::kOk);
    REQUIRE(ptp.payload.size() >= 5);
    CHECK(ptp.payload[1] == 3);  // automotive, as an OT128 sends it on the wire
    CHECK(ptp.payload[2] == 0);  // domain
    CHECK(ptp.payload[3] == 1);  // L2
    CHECK(ptp.payload[4] == 1);  // TSN switch
    CHECK(client.request(ptc::kSetPtpConfig, {3, 0, 1, 1}).code == ptc::kOk);
    const auto lock = client.request(ptc::kGetPtpLockOffset);  // 5
    REQUIRE(lock.code == ptc::kOk);
    REQUIRE(lock.payload.size() >= 1);
    CHECK(lock.payload[0] == 100);
    CHECK(client.request(ptc::kSetPtpLockOffset, {50}).code == ptc::kOk);
    CHECK(client.request(ptc::kGetPtpLockOffset).payload == std::vector<std::uint8_t>{50});
    const auto hires = client.request(ptc::kGetHighResolution);  // 6
    REQUIRE(hires.code == ptc::kOk);
    CHECK(hires.payload == std::vector<std::uint8_t>{0});                  // exactly one byte
    CHECK(client.request(ptc::kSetHighResolution, {1}).code == ptc::kOk);  // hires_mode: true
    const auto blockage = client.request(ptc::kGetUpCloseBlockage);        // 7
    REQUIRE(blockage.code == ptc::kOk);
    CHECK(blockage.payload == std::vector<std::uint8_t>{0});
    const auto range = client.request(ptc::kGetLidarRange);  // 8
    REQUIRE(range.code == ptc::kOk);
    CHECK(range.payload == std::vector<std::uint8_t>{0, 0, 0, 0x0E, 0x10});  // exactly 5 bytes
    const auto calibration = client.request(ptc::kGetCalibration);           // 9
    REQUIRE(calibration.code == ptc::kOk);
    const auto angles = core::hesai::parse_calibration_csv(
        std::string(calibration.payload.begin(), calibration.payload.end()));
    CHECK(angles.elevation_deg.size() == 128);
    CHECK(client.request(ptc::kSetLidarRange, {0, 0, 0, 0x0E, 0x10}).code == ptc::kOk);  // 10
    // The periodic polls, every second in nebula.
    const auto status = client.request(ptc::kGetStatus);
    REQUIRE(status.code == ptc::kOk);
    CHECK(status.payload.size() >= 54);
    const auto monitor = client.request(ptc::kGetLidarMonitor);
    REQUIRE(monitor.code == ptc::kOk);
    CHECK(monitor.payload.size() >= 64);
  }
  // Its packets: 861 bytes, decoded by the spec decoder with the angles PTC served.
  const auto pattern = clients::scan_for("pandar-ot128", 0, "");
  clients::UdpSender sender(test::hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(test::scene_rows(pattern));
  const auto packets = data.receive(1800, 3s, 10s);  // 1,800 dual packets a turn
  REQUIRE(packets.size() >= 1800);
  const auto& model = *core::find_sensor_model("pandar-ot128");
  const core::hesai::SpecDecoder decoder(*model.hesai.format,
                                         {model.elevation_deg, model.azimuth_offset_deg});
  std::size_t points_total = 0;
  for (const auto& p : packets) {
    std::vector<core::hesai::Point> points;
    core::hesai::PacketInfo info;
    REQUIRE(p.bytes.size() == 861);
    REQUIRE(decoder.decode(p.bytes, points, &info) == core::hesai::DecodeError::kNone);
    CHECK(info.crcs_checked == 3);
    points_total += points.size();
  }
  CHECK(points_total > 10000);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("PTC: nebula's AT128 session serves the binary correction; its passes decode",
          "[e2e][hesai][ptc]") {
  namespace ptc = core::hesai::ptc;
  const auto& model = *core::find_sensor_model("pandar-at128");
  // Raw rows cannot name the pass a hit was cast in: refused, with the reason.
  daemon::SensorFlags raw;
  raw.model = "pandar-at128";
  raw.hits_format = "raw7";
  CHECK_THROWS_WITH(daemon::sensor_from_flags(raw), Catch::Contains("three mirror facets"));

  const auto dir = std::filesystem::temp_directory_path() / "lidaremu_at128_test";
  std::filesystem::create_directories(dir);
  const auto dat_out = (dir / "PandarAT128.dat").string();
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-at128", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--physics", "ideal", "--pace",
                              "afap", "--return-mode", "dual", "--sensor-ip", "127.0.0.14",
                              "--calibration-out", dat_out});
  const auto file_bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>());
  };
  const auto shipped = file_bytes(std::string(LIDAREMU_TEST_DATA) + "/hesai/PandarAT128.dat");
  REQUIRE(shipped.size() == 47176);
  // --calibration-out writes the correction nebula and the SDK load, byte for byte.
  CHECK(file_bytes(dat_out) == shipped);
  {
    PtcClient client("127.0.0.14", 9347);
    const auto inventory = client.request(ptc::kGetInventory);
    REQUIRE(inventory.code == ptc::kOk);
    REQUIRE(inventory.payload.size() >= 184);  // nebula's AT128 inventory
    CHECK(inventory.payload[170] == 48);       // AT128: nebula sets its spin rate over TCP
    CHECK(inventory.payload[172] == 128);
    const auto config = client.request(ptc::kGetConfig);
    REQUIRE(config.code == ptc::kOk);
    REQUIRE(config.payload.size() >= 47);
    CHECK(ptc::parse_config(config.payload).spin_rate == 200);
    CHECK(ptc::parse_config(config.payload).return_mode == ptc::kPtcLastStrongest);
    // 0x05: the .dat as it is (nebula parses from its first EE FF, the SDK needs it first).
    const auto calibration = client.request(ptc::kGetCalibration);
    REQUIRE(calibration.code == ptc::kOk);
    CHECK(calibration.payload == shipped);
    // 0xA9: no firing-time file (the SDK reads none for protocol 4.3).
    CHECK(client.request(ptc::kGetFiretimes).code == ptc::kUnsupportedCommand);
    const auto status = client.request(ptc::kGetStatus);
    REQUIRE(status.code == ptc::kOk);
    CHECK(status.payload.size() >= 58);
    CHECK(((status.payload[4] << 8) | status.payload[5]) == 200);
    // A rate the unit has not (its 400 rpm is not emulated) is refused; 200, the rate it has
    // (nebula sets it at every start), acknowledged without a reinitialisation (counted below).
    CHECK(client.request(ptc::kSetSpinRate, be16(400)).code == ptc::kInvalidParameter);
    CHECK(client.request(ptc::kSetSpinRate, be16(200)).code == ptc::kOk);
    CHECK(client.request(ptc::kSetReturnMode, {ptc::kPtcLastStrongest}).code == ptc::kOk);
  }
  // A turn's three passes, all decoded with the correction PTC served (test_hesai_encoder puts
  // every decoded point on its hit).
  const auto pattern = clients::scan_for("pandar-at128", 0, "");
  const auto rows = test::scene_rows(pattern);
  clients::UdpSender sender(test::hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(rows);
  // 1,250 dual packets a pass. A turn is 921,600 beams through the physics before its first
  // packet: under ThreadSanitizer that takes seconds, so the waits are long (met at once here).
  const auto packets = data.receive(3750, 15s, 40s);
  REQUIRE(packets.size() >= 3750);
  const auto served = core::hesai::MirrorCorrection::parse(shipped);
  REQUIRE(served);
  const core::hesai::SpecDecoder decoder(*model.hesai.format,
                                         {model.elevation_deg, model.azimuth_offset_deg, &*served});
  std::size_t points_total = 0;
  for (const auto& p : packets) {
    std::vector<core::hesai::Point> points;
    REQUIRE(p.bytes.size() == 1118);
    REQUIRE(decoder.decode(p.bytes, points) == core::hesai::DecodeError::kNone);
    points_total += points.size();
  }
  CHECK(points_total > 10000);
  CHECK(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_reinitialisations_total{sensor=\"pandar-at128-0\"}") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("PTC in the Hesai SDK's start order: an idle connection is answered however late",
          "[e2e][hesai][ptc]") {
  namespace ptc = core::hesai::ptc;
  // The SDK opens PTC at Init and asks for the calibration (0x05) only after the first data
  // packet, on the same connection, never reconnecting: the engine may start long after it. A
  // request begun and left unfinished is another matter: it is closed after the request timeout.
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-xt32", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--sensor-ip", "127.0.0.15"});
  PtcClient idle("127.0.0.15", 9347);
  PtcClient stalled("127.0.0.15", 9347);
  stalled.send_raw({ptc::kMagic0, ptc::kMagic1, ptc::kGetCalibration});  // 3 of 8 header bytes
  std::this_thread::sleep_for(
      12s);  // an engine started 12 s after the driver; past the 5-s timeout
  const auto calibration = idle.request(ptc::kGetCalibration);
  CHECK_FALSE(calibration.closed);
  CHECK(calibration.code == ptc::kOk);
  CHECK_FALSE(calibration.payload.empty());
  const auto begun = std::chrono::steady_clock::now();
  const auto unfinished = stalled.read_reply();
  CHECK(unfinished.closed);
  // Closed by the unit (at once), not by the client's own 5-s receive timeout.
  CHECK(std::chrono::steady_clock::now() - begun < 2s);
  CHECK(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_api_connections_closed_total{sensor=\"pandar-xt32-0\",api=\"ptc\","
                       "reason=\"request_timeout\"}") == 1);
}

TEST_CASE("PTC 0xA9: the QT128 serves the firetime file its SDK parser reads, the angles with it",
          "[e2e][hesai][ptc][firetimes]") {
  namespace ptc = core::hesai::ptc;
  // The Hesai SDK asks a QT128 for its firing times over PTC (its 3.2 parser reads the answer:
  // an "EEFF" line, the loop count, then each loop's channel and time), after the calibration.
  const auto& model = *core::find_sensor_model("pandar-qt128");
  test::UdpReceiver data, gps;
  test::DaemonProcess daemon({"--model", "pandar-qt128", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", gps.url(), "--sensor-ip", "127.0.0.16"});
  PtcClient client("127.0.0.16", 9347);
  const auto calibration = client.request(ptc::kGetCalibration);
  REQUIRE(calibration.code == ptc::kOk);
  const auto firetimes = client.request(ptc::kGetFiretimes);
  REQUIRE(firetimes.code == ptc::kOk);
  const std::string text(firetimes.payload.begin(), firetimes.payload.end());
  CHECK(text.rfind("EEFF,", 0) == 0);
  const auto loops = core::hesai::parse_firetimes_file(text);
  CHECK(loops == model.hesai.firetime_us);
  REQUIRE(loops.size() == 2);
  CHECK(loops[0][32] == Approx(27.656));  // nebula's pandar_qt128 loop1, channel 33
  CHECK(loops[1][0] == Approx(2.312));    // its loop2, channel 1
  CHECK(daemon.stop() == 0);
}
