// The emulated sensors' own APIs, as drivers and SDKs call them: Ouster HTTP and TCP 7501 (each
// SDK generation's request sequence), the Velodyne web interface.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
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
