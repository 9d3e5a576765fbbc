// The emulated sensors' own APIs, as drivers and SDKs call them: Ouster HTTP and TCP 7501 (each
// SDK generation's request sequence), the Velodyne web interface.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::api_port;
using test::free_udp_port;
using test::hits_url;
using test::scene_rows;
}  // namespace

namespace {

// An engine streaming one frame's raw rows again and again in real time, until destroyed.
class RawEngine {
 public:
  RawEngine(const test::DaemonProcess& daemon, const core::ScanPattern& pattern,
            const std::vector<float>& rows)
      : thread_([this, url = hits_url(daemon), pattern, &rows] {
          clients::UdpSender sender(url);
          clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0, .raw = true});
          while (!done_) streamer.send_frame(rows);
        }) {}
  ~RawEngine() {
    done_ = true;
    thread_.join();
  }
  RawEngine(const RawEngine&) = delete;
  RawEngine& operator=(const RawEngine&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

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
  std::optional<RawEngine> engine(std::in_place, daemon, pattern, rows);
  const std::string log = "/tmp/lidaremu-ouster-client-" + std::to_string(::getpid()) + ".log";
  const std::string command = "python3 " + std::string(LIDAREMU_TEST_SUPPORT_DIR) + "/" + script +
                              " " + leading_args + "127.0.0.2 " + api_port() + " " +
                              std::to_string(free_udp_port()) + " " +
                              std::to_string(free_udp_port()) + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());  // NOLINT(cert-env33-c)
  engine.reset();
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

TEST_CASE("A return mode the model's packets cannot carry is refused; the unit keeps sending",
          "[e2e][api][hostile]") {
  // The bug this catches: `returns=Dual` posted to an HDL-64E (no dual layout) started a
  // pipeline without an encoder, and the daemon died at the next frame.
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "hdl64e", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--sensor-ip", "127.0.0.5", "--api-port", api_port(),
                              "--pace", "afap", "--physics", "ideal"});
  const std::string base = "http://127.0.0.5:" + api_port();
  const auto refused = test::http_request("POST", base + "/cgi/setting", "returns=Dual", "",
                                          {"Content-Type: application/x-www-form-urlencoded"});
  CHECK(refused.status == 400);
  CHECK_THAT(refused.body, Catch::Contains("no dual-return layout"));
  const auto pattern = clients::scan_for("hdl64e", 0, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(scene_rows(pattern));
  CHECK(data.receive(300, 3s, 10s).size() >= 300);
  CHECK(daemon.stop() == 0);
}

namespace {

// The lidar stream, each packet's init_id (RNG19: header bytes 4-6) with its kernel receive
// time (SO_TIMESTAMPNS, CLOCK_REALTIME): what left before a moment and what after, whatever the
// reading thread's delay.
class StampedReceiver {
 public:
  StampedReceiver() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    const int buffer = 32 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
    const timeval wait{.tv_sec = 0, .tv_usec = 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the socket API
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&at), sizeof at) == 0);
    socklen_t size = sizeof at;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &size);  // NOLINT: the socket API
    port_ = ntohs(at.sin_port);
    reader_ = std::thread([this] { read(); });
  }
  ~StampedReceiver() {
    stop_ = true;
    reader_.join();
    ::close(fd_);
  }
  StampedReceiver(const StampedReceiver&) = delete;
  StampedReceiver& operator=(const StampedReceiver&) = delete;
  [[nodiscard]] std::string url() const { return "udp://127.0.0.1:" + std::to_string(port_); }
  struct Stamp {
    std::uint32_t init_id;
    std::int64_t at_ns;
  };
  std::vector<Stamp> stamps() {
    std::lock_guard lock(mutex_);
    return stamps_;
  }

 private:
  void read() {
    std::vector<std::uint8_t> buffer(70000);
    std::array<char, 256> control{};
    while (!stop_) {
      iovec io{buffer.data(), buffer.size()};
      msghdr m{};
      m.msg_iov = &io;
      m.msg_iovlen = 1;
      m.msg_control = control.data();
      m.msg_controllen = control.size();
      const ssize_t n = ::recvmsg(fd_, &m, 0);
      if (n < 8) continue;
      std::int64_t at_ns = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec t{};
          std::memcpy(&t, CMSG_DATA(c), sizeof t);
          at_ns = std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
        }
      }
      const std::uint32_t init_id = buffer[4] | buffer[5] << 8 | buffer[6] << 16;
      std::lock_guard lock(mutex_);
      stamps_.push_back({init_id, at_ns});
    }
  }
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<Stamp> stamps_;
  std::thread reader_;
};

std::int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE(
    "Ouster reinitialisation as the unit does it: the old stream stops at the answer, "
    "INITIALIZING until the new one streams, never interleaved",
    "[e2e][api][ouster]") {
  // Both generations' requests: firmware 3.1's POST with reinit, the TCP 7501 reinitialize of
  // the older SDKs, and two reinitialisations 30 ms apart (an intermediate configuration's
  // packets must not mix into the new stream).
  StampedReceiver lidar;
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--hits-format",
                              "raw7", "--out", lidar.url(), "--profile", "rng19", "--physics",
                              "ideal", "--sensor-ip", "127.0.0.31", "--api-port", api_port()});
  const std::string base = "http://127.0.0.31:" + api_port();
  const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
  const auto rows = scene_rows(pattern);
  std::optional<RawEngine> engine(std::in_place, daemon, pattern, rows);
  const auto init_id = [&] {
    const auto info = nlohmann::json::parse(
        test::http_request("GET", base + "/api/v1/sensor/metadata/sensor_info").body);
    return std::make_pair(info["initialization_id"].get<std::uint32_t>(),
                          info["status"].get<std::string>());
  };
  // Running until the new configuration streams (statuses seen on the way).
  const auto wait_running = [&](std::set<std::string>& seen) {
    for (int i = 0; i < 100; ++i) {
      const auto [id, status] = init_id();
      seen.insert(status);
      if (status == "RUNNING") return id;
      std::this_thread::sleep_for(50ms);
    }
    return 0U;
  };
  std::this_thread::sleep_for(1500ms);
  struct Reinit {
    std::uint32_t retired;     // the init_id no packet may carry after...
    std::int64_t answered_ns;  // ...this moment
  };
  std::vector<Reinit> reinits;
  std::set<std::string> statuses;
  // 1. Firmware 3.1: POST the config with reinit.
  auto before = init_id().first;
  REQUIRE(test::http_request("POST", base + "/api/v1/sensor/config?reinit=true", "{}").status ==
          200);
  reinits.push_back({before, realtime_ns()});
  auto now = wait_running(statuses);
  CHECK(now != before);
  std::this_thread::sleep_for(500ms);
  // 2. TCP 7501, as SDK 0.10-0.14 and ouster_example send it.
  before = now;
  CHECK(test::tcp_exchange("127.0.0.31", 7501, "reinitialize \n", 3s, "\n").bytes ==
        "reinitialize\n");
  reinits.push_back({before, realtime_ns()});
  now = wait_running(statuses);
  CHECK(now != before);
  std::this_thread::sleep_for(500ms);
  // 3. Twice, 30 ms apart.
  before = now;
  REQUIRE(test::http_request("GET", base + "/api/v1/sensor/cmd/reinitialize").status == 200);
  const auto first_answer = realtime_ns();
  std::this_thread::sleep_for(30ms);
  const auto intermediate = init_id().first;
  REQUIRE(test::http_request("GET", base + "/api/v1/sensor/cmd/reinitialize").status == 200);
  reinits.push_back({before, first_answer});
  reinits.push_back({intermediate, realtime_ns()});
  now = wait_running(statuses);
  CHECK(now != intermediate);
  std::this_thread::sleep_for(500ms);
  engine.reset();
  CHECK(daemon.stop() == 0);
  CHECK(statuses.contains("RUNNING"));
  const auto stamps = lidar.stamps();
  REQUIRE(stamps.size() > 100);
  // No packet of a retired configuration after its answer.
  std::size_t late = 0;
  for (const auto& r : reinits) {
    for (const auto& s : stamps) late += s.init_id == r.retired && s.at_ns > r.answered_ns;
  }
  CHECK(late == 0);
  // Never interleaved: each init_id's packets come in one run, and the runs in reinit order.
  std::vector<std::uint32_t> runs;
  for (const auto& s : stamps) {
    if (runs.empty() || runs.back() != s.init_id) runs.push_back(s.init_id);
  }
  const std::set<std::uint32_t> distinct(runs.begin(), runs.end());
  CHECK(distinct.size() == runs.size());
  CHECK(runs.back() == now);
}
