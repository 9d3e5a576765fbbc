// The daemon as an operator runs it: start-up errors, the control endpoint, host names,
// SIGHUP reloads, signals at any moment, and a driver on this host that binds the unit's port.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "raw_connection.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::api_port;
using test::hits_url;
using test::scene_rows;
}  // namespace

TEST_CASE("Start-up errors: a clear message and an exit code", "[e2e][hostile]") {
  // Exit codes as the README states: 2 usage, 3 configuration.
  const std::string binary = test::daemon_path();
  CHECK(WEXITSTATUS(std::system((binary + " --no-such-flag 2>/dev/null").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system((binary + " --rpm 5000 2>/dev/null").c_str())) == 3);
  // An instruction set this build or CPU does not run: usage, naming the choices.
  CHECK(WEXITSTATUS(std::system(
            (binary + " --simd-target neon 2>&1 | grep -q 'choose from: best, '").c_str())) == 0);
  CHECK(WEXITSTATUS(std::system((binary + " --simd-target neon 2>/dev/null").c_str())) == 2);
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
  // SIGHUPs in a burst: a reload under way (its sensors built and warmed on a thread of their
  // own) runs one more once it is done, so two or three reloads however they interleave, each
  // whole; the set is the file's.
  const auto reloads = [&] {
    std::size_t n = 0;
    const std::string& out = daemon.output();
    for (auto at = out.find("SIGHUP: reloaded"); at != std::string::npos;
         at = out.find("SIGHUP: reloaded", at + 1)) {
      ++n;
    }
    return n;
  };
  const std::size_t before = reloads();
  for (int i = 0; i < 3; ++i) {
    daemon.send_signal(SIGHUP);
    std::this_thread::sleep_for(20ms);
  }
  for (const auto until = std::chrono::steady_clock::now() + 30s;
       reloads() < before + 2 && std::chrono::steady_clock::now() < until;) {
    daemon.read_output(100ms);
  }
  daemon.read_output(500ms);
  CHECK(reloads() >= before + 2);
  CHECK(reloads() <= before + 3);
  sensors = nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
  REQUIRE(sensors.size() == 2);
  CHECK(sensors[0]["rpm"] == 1200);
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

TEST_CASE("Velodyne to this host's port 2368: packets leave from any port, so a driver there binds",
          "[e2e][velodyne]") {
  // The ROS velodyne driver binds every address on its port without SO_REUSEADDR: while any
  // socket on the machine holds 2368 it cannot start, and once it runs no socket can take 2368.
  // A unit sending to this very machine's 2368 therefore leaves from another port (a unit on
  // another host sends from 2368: the test above). Here the host's socket holds 127.0.0.1:2368.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(2368);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the socket API
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0) {
    ::close(fd);
    WARN("127.0.0.1:2368 is taken on this machine: not run");
    return;
  }
  const timeval wait{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  test::UdpReceiver telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              "udp://127.0.0.1:2368", "--telemetry", telemetry.url(), "--sensor-id",
                              "41", "--physics", "ideal", "--pace", "afap"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.sensor_id = 41, .speed = 5.0});
  streamer.send_frame(scene_rows(pattern));
  std::array<std::uint8_t, 1500> buffer{};
  sockaddr_in from{};
  socklen_t from_size = sizeof from;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the socket API
  const auto n = ::recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from),
                            &from_size);
  ::close(fd);
  REQUIRE(n == 1206);
  CHECK(ntohl(from.sin_addr.s_addr) == 0x7F00002Bu);  // the unit's address, 127.0.0.2 + 41
  CHECK(ntohs(from.sin_port) != 2368);
  // Its position packets go elsewhere: from its own port 8308.
  const auto position = telemetry.receive(1, 2s, 5s);
  REQUIRE_FALSE(position.empty());
  CHECK(position.front().source_port == 8308);
  CHECK(daemon.stop() == 0);
}

namespace {
// One sample of /metrics ("NAME{LABELS}"), or -1 when the exposition has none.
double metric(const std::string& base, const std::string& name_with_labels) {
  const std::string body = test::http_request("GET", base + "/metrics").body;
  const auto at = body.find("\n" + name_with_labels + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name_with_labels.size() + 2));
}
}  // namespace

TEST_CASE("A sensor's counters only go up: through reinitialisations and reloads, until removed",
          "[e2e][reload][metrics]") {
  // The review: an unauthenticated request that reinitialised a sensor (Ouster reinitialize, a
  // Hesai set-command) reset its /metrics counters, and so did every reload; Prometheus counters
  // must only go up while the sensor exists.
  const std::string config = "/tmp/lidaremu-e2e-kept-counters.toml";
  test::UdpReceiver out_roof, out_side;
  const std::string roof =
      "[[sensor]]\nname = \"roof\"\nmodel = \"os1-64\"\nhits = \"udp://127.0.0.1:0\"\nout = \"" +
      out_roof.url() + "\"\nsensor_ip = \"127.0.0.24\"\napi_port = " + api_port() + "\n";
  const std::string side =
      "[[sensor]]\nname = \"side\"\nmodel = \"vlp16\"\nsensor_id = 1\napi_port = 0\n"
      "hits = \"udp://127.0.0.1:0\"\nout = \"" +
      out_side.url() + "\"\n";
  const auto write = [&](const std::string& text) {
    std::ofstream(config) << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"off\"\n" << text;
  };
  write(roof + side);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  // Three frames, numbered on from `first_frame` (a sensor that ran on has seen the earlier ones).
  const auto feed = [&](const std::string& sensor, const std::string& model,
                        std::uint16_t sensor_id, test::UdpReceiver& out,
                        std::uint32_t first_frame = 0) {
    const auto sensors =
        nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
    std::string hits;
    for (const auto& s : sensors) {
      if (s["name"] == sensor) hits = s["hits"].get<std::string>();
    }
    REQUIRE_FALSE(hits.empty());
    clients::UdpSender sender(hits);
    const auto pattern = clients::scan_for(model, 0, model == "os1-64" ? "1024x10" : "");
    clients::FrameStreamer streamer(
        sender, pattern, {.sensor_id = sensor_id, .speed = 0, .first_frame = first_frame});
    for (int i = 0; i < 3; ++i) streamer.send_frame(scene_rows(pattern));
    CHECK(out.receive(20, 1s, 10s).size() >= 20);
  };
  const auto packets = [&](const std::string& sensor) {
    return metric(base, "lidaremu_packets_out_total{sensor=\"" + sensor + "\"}");
  };
  const auto datagrams = [&](const std::string& sensor) {
    return metric(base, "lidaremu_datagrams_in_total{sensor=\"" + sensor + "\"}");
  };
  feed("roof", "os1-64", 0, out_roof);
  feed("side", "vlp16", 1, out_side);
  const double roof_packets = packets("roof");
  const double roof_datagrams = datagrams("roof");
  const double side_packets = packets("side");
  REQUIRE(roof_packets > 0);
  REQUIRE(side_packets > 0);

  // An Ouster client reinitialises the unit (TCP 7501, as the SDK does): a new pipeline.
  const auto answer = test::tcp_exchange("127.0.0.24", 7501, "reinitialize\n", 5s, "\n");
  REQUIRE(answer.bytes == "reinitialize\n");
  for (const auto until = std::chrono::steady_clock::now() + 10s;
       metric(base, "lidaremu_reinitialisations_total{sensor=\"roof\"}") < 1 &&
       std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(metric(base, "lidaremu_reinitialisations_total{sensor=\"roof\"}") == 1);
  CHECK(packets("roof") >= roof_packets);
  CHECK(datagrams("roof") >= roof_datagrams);
  CHECK(metric(base, "lidaremu_api_requests_total{sensor=\"roof\",api=\"tcp7501\"}") == 1);

  // The output keeps every line: the n-th reload is done when its line is the n-th.
  const auto reloaded = [&](std::size_t n) {
    const auto until = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      std::size_t seen = 0;
      for (auto at = daemon.output().find("SIGHUP: reloaded"); at != std::string::npos;
           at = daemon.output().find("SIGHUP: reloaded", at + 1)) {
        ++seen;
      }
      if (seen >= n) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      daemon.read_output(50ms);
    }
  };
  // A reload that restarts the roof (a new seed) and keeps the side running: each keeps its
  // counters, and they go on counting.
  write(roof + "seed = 7\n" + side);
  daemon.send_signal(SIGHUP);
  REQUIRE(reloaded(1));
  CHECK(daemon.output().find("1 (re)started, 1 running on unchanged") != std::string::npos);
  CHECK(packets("roof") >= roof_packets);
  CHECK(packets("side") >= side_packets);
  CHECK(metric(base, "lidaremu_reinitialisations_total{sensor=\"roof\"}") == 1);
  CHECK(metric(base, "lidaremu_api_requests_total{sensor=\"roof\",api=\"tcp7501\"}") == 1);
  feed("side", "vlp16", 1, out_side, 3);
  const double side_after = packets("side");
  CHECK(side_after > side_packets);

  // Removed, then back: a new sensor of that name starts from nothing.
  write(roof + "seed = 7\n");
  daemon.send_signal(SIGHUP);
  REQUIRE(reloaded(2));
  CHECK(packets("side") == -1);
  write(roof + "seed = 7\n" + side);
  daemon.send_signal(SIGHUP);
  REQUIRE(reloaded(3));
  CHECK(packets("side") == 0);
  CHECK(packets("roof") >= roof_packets);
  CHECK(daemon.stop() == 0);
  std::remove(config.c_str());
}

TEST_CASE("SIGHUP leaves a sensor whose table is unchanged running as its clients left it",
          "[e2e][reload]") {
  // The soak: every SIGHUP retired and rebuilt every sensor, the file unchanged or not. Streams
  // lost frames, the units' API ports closed under their clients, what a driver had set through
  // them (a destination port) went back to the file's, and reloads every 2 s grew memory by
  // 60 MB in 3 minutes and the control endpoint's p99 to 289 ms.
  const std::string config = "/tmp/lidaremu-e2e-unchanged.toml";
  test::UdpReceiver out_kept, out_moved, out_changed;
  const std::string kept =
      "[[sensor]]\nname = \"kept\"\nmodel = \"os1-64\"\nmode = \"512x10\"\n"
      "hits = \"udp://127.0.0.1:0\"\nout = \"" +
      out_kept.url() + "\"\nsensor_ip = \"127.0.0.43\"\napi_port = " + api_port() + "\n";
  const std::string changed =
      "[[sensor]]\nname = \"changed\"\nmodel = \"vlp16\"\nsensor_id = 1\napi_port = 0\n"
      "hits = \"udp://127.0.0.1:0\"\nout = \"" +
      out_changed.url() + "\"\n";
  const auto write = [&](const std::string& text) {
    std::ofstream(config) << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"off\"\n" << text;
  };
  write(kept + changed);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);

  // A driver's session on TCP 7501 points the stream at another port and reinitialises.
  test::RawConnection session("127.0.0.43", 7501);
  REQUIRE(session.connected());
  const auto ask = [&](const std::string& line) {
    session.send_some(line + "\n");
    return session.receive(10s, [](const std::string& got) { return got.ends_with("\n"); });
  };
  CHECK(ask("set_config_param udp_port_lidar " + std::to_string(out_moved.port())) ==
        "set_config_param\n");
  CHECK(ask("reinitialize") == "reinitialize\n");
  for (const auto until = std::chrono::steady_clock::now() + 10s;
       metric(base, "lidaremu_reinitialisations_total{sensor=\"kept\"}") < 1 &&
       std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(metric(base, "lidaremu_reinitialisations_total{sensor=\"kept\"}") == 1);

  // The file changes the other sensor only.
  write(kept + changed + "rpm = 1200\n");
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("SIGHUP: reloaded", 30s));
  CHECK(daemon.output().find("1 (re)started, 1 running on unchanged") != std::string::npos);
  const auto sensors =
      nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
  REQUIRE(sensors.size() == 2);
  CHECK(sensors[1]["rpm"] == 1200);

  // The unchanged unit: the same session answers, no new reinitialisation, and its stream still
  // goes where the driver pointed it.
  CHECK(ask("get_config_param active").find(std::to_string(out_moved.port())) != std::string::npos);
  CHECK(metric(base, "lidaremu_reinitialisations_total{sensor=\"kept\"}") == 1);
  clients::UdpSender sender(sensors[0]["hits"].get<std::string>());
  const auto pattern = clients::scan_for("os1-64", 0, "512x10");
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  for (int i = 0; i < 3; ++i) streamer.send_frame(scene_rows(pattern));
  CHECK(out_moved.receive(20, 1s, 10s).size() >= 20);
  CHECK(out_kept.receive(1, 200ms, 500ms).empty());
  CHECK(daemon.stop() == 0);
  std::remove(config.c_str());
}

TEST_CASE("A reload whose changed sensor cannot start brings it back as it ran, the rest untouched",
          "[e2e][reload]") {
  const std::string config = "/tmp/lidaremu-e2e-fallback.toml";
  test::UdpReceiver out_kept, out_moving;
  const std::string port = api_port();
  // Another program holds the port the reload asks the second unit's web API to listen on.
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in held{};
  held.sin_family = AF_INET;
  held.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
  held.sin_addr.s_addr = htonl(0x7F00002Cu);  // 127.0.0.44
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  REQUIRE(::bind(holder, reinterpret_cast<const sockaddr*>(&held), sizeof held) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  const std::string kept =
      "[[sensor]]\nname = \"kept\"\nmodel = \"vlp16\"\napi_port = 0\nhits = \"udp://127.0.0.1:0\"\n"
      "out = \"" +
      out_kept.url() + "\"\n";
  const std::string moving =
      "[[sensor]]\nname = \"moving\"\nmodel = \"vlp16\"\nsensor_id = 1\nhits = "
      "\"udp://127.0.0.1:0\"\nout = \"" +
      out_moving.url() + "\"\nsensor_ip = \"127.0.0.44\"\n";
  const auto write = [&](const std::string& text) {
    std::ofstream(config) << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"off\"\n" << text;
  };
  write(kept + moving + "api_port = 0\n");
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  const auto hits_of = [&] {
    std::map<std::string, std::string> hits;
    for (const auto& s :
         nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body)) {
      hits[s["name"].get<std::string>()] = s["hits"].get<std::string>();
    }
    return hits;
  };
  const auto before = hits_of();

  write(kept + moving + "api_port = " + port + "\n");
  daemon.send_signal(SIGHUP);
  REQUIRE(daemon.wait_for_output("back to the previous configuration", 30s));
  daemon.read_output(500ms);
  // Both run, on the hit ports they had; the unchanged one was never restarted.
  CHECK(hits_of() == before);
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (auto at = daemon.output().find(text); at != std::string::npos;
         at = daemon.output().find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  CHECK(count("lidaremud: sensor kept (") == 1);
  CHECK(count("lidaremud: sensor moving (") >= 2);
  // Each sensor fed as an engine feeds it, a frame a period, until 30 packets came out. Two
  // frames suffice in the normal build; a sanitized daemon is so slow that a sensor brought back
  // (its physics not yet measured) drops its first frames as too old by the time it judges them,
  // and sends once a frame comes after 30 periods without one (FrameAdmission).
  const auto packets_out = [&](const std::string& name, test::UdpReceiver& out) {
    clients::UdpSender sender(before.at(name));
    const auto pattern = clients::scan_for("vlp16", 600, "");
    clients::FrameStreamer streamer(
        sender, pattern,
        {.sensor_id = static_cast<std::uint16_t>(name == "kept" ? 0 : 1), .speed = 1.0});
    const auto give_up = std::chrono::steady_clock::now() + (test::kSanitized ? 60s : 5s);
    std::size_t packets = 0;
    for (int frame = 0; packets < 30 && std::chrono::steady_clock::now() < give_up; ++frame) {
      if (frame < 2 || test::kSanitized) streamer.send_frame(scene_rows(pattern));
      packets += out.receive(30 - packets, 1s, 1s).size();
    }
    return packets;
  };
  CHECK(packets_out("kept", out_kept) >= 30);
  CHECK(packets_out("moving", out_moving) >= 30);
  CHECK(daemon.stop() == 0);
  ::close(holder);
  std::remove(config.c_str());
}

TEST_CASE("The daemon's output is read while nobody asks: a chatty daemon never blocks on it",
          "[e2e]") {
  // A stand-in for lidaremud (DaemonProcess runs any executable): it says where its hits go,
  // then prints 1 MiB, sixteen times what a pipe holds, then leaves a mark. Read only when
  // asked, its write blocked once the pipe was full, and the mark never came: a daemon logging
  // that much during a bench run had whichever thread logged stalled until the run ended.
  const std::string dir = "/tmp/lidaremu-e2e-chatty-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const std::string script = dir + "/chatty.sh";
  const std::string mark = dir + "/mark";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\n"
           "echo \"sensor s: hits udp://127.0.0.1:5555 \"\n"
           "head -c 1048576 /dev/zero | tr '\\0' x\n"
           "echo\n"
           "touch \"$1\"\n"
           "echo chatty-done\n"
           "trap 'kill $! 2>/dev/null; exit 0' TERM\n"  // stops as the daemon does: code 0
           "sleep 30 & wait $!\n";
  }
  ::chmod(script.c_str(), 0700);
  clients::DaemonProcess chatty(script, {mark});
  CHECK(chatty.hits_port() == 5555);
  bool marked = false;
  for (int i = 0; i < 100 && !marked; ++i) {  // no read asked for meanwhile
    std::this_thread::sleep_for(50ms);
    marked = ::access(mark.c_str(), F_OK) == 0;
  }
  CHECK(marked);
  CHECK(chatty.wait_for_output("chatty-done", 5s));
  CHECK(chatty.output().size() > (std::size_t{1} << 20));
  // Stopped twice: the second stop returns the first's code and signals nothing (its process is
  // gone; kill(-1) would have signalled every process this one may).
  CHECK(chatty.stop() == 0);
  CHECK(chatty.stop() == 0);
  chatty.send_signal(SIGTERM);
  std::remove(mark.c_str());
  std::remove(script.c_str());
  ::rmdir(dir.c_str());
}
