// The daemon under a hostile neighbour: web pages that try to change state, slow clients, storms
// of requests. Each case is an attack the audit of issue 14 tried, run against the real daemon.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::api_port;
using test::port_of;
using test::scene_rows;
}  // namespace

TEST_CASE("Web pages cannot change state; tools and allowed pages can", "[e2e][http][hostile]") {
  // The audit: with no token a page on any origin changed the weather (POST, text/plain, any
  // Origin answered 200; Host unchecked, so DNS rebinding worked too), and the emulated sensor
  // APIs took a plain GET or a form POST, e.g. sending the output stream elsewhere.
  const std::string sensor_ip = "127.0.0.9";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--physics",
                              "ideal", "--http", "127.0.0.1:0", "--sensor-ip", sensor_ip,
                              "--api-port", api_port(), "--http-allowed-origins",
                              "http://dashboard.example:3000", "--http-allowed-hosts", "lidaremu"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  const std::string port = base.substr(base.rfind(':') + 1);
  const std::string weather = base + "/api/v1/sensors/os1-64-0/weather";
  const std::string rain = R"({"rain_mm_per_h": 25})";
  const auto put = [&](const std::string& body, const std::vector<std::string>& headers) {
    return test::http_request("PUT", weather, body, "", headers);
  };
  // What a browser sends for a cross-site form or fetch, refused each way.
  CHECK(test::http_request("POST", weather, rain, "",
                           {"Content-Type: text/plain", "Origin: http://evil.example"})
            .status == 405);
  CHECK(put(rain, {"Content-Type: text/plain"}).status == 415);
  CHECK(put(rain, {"Content-Type: application/x-www-form-urlencoded"}).status == 415);
  const auto cross = put(rain, {"Origin: http://evil.example"});
  CHECK(cross.status == 403);
  CHECK_THAT(cross.body, Catch::Contains("http_allowed_origins"));
  CHECK(put(rain, {"Origin: null"}).status == 403);
  CHECK(put(rain, {"Sec-Fetch-Site: cross-site"}).status == 403);
  // DNS rebinding: the page's own name in Host, and its origin the same.
  const auto rebound =
      put(rain, {"Host: evil.example:" + port, "Origin: http://evil.example:" + port});
  CHECK(rebound.status == 403);
  CHECK_THAT(rebound.body, Catch::Contains("DNS-rebinding"));
  auto now = nlohmann::json::parse(test::http_request("GET", weather).body);
  CHECK(now["rain_mm_per_h"] == 0);
  // A tool (no browser headers), a page from the daemon's own origin, an allowed page, an
  // allowed host name: accepted.
  CHECK(put(R"({"rain_mm_per_h": 1})", {}).status == 200);
  CHECK(put(R"({"rain_mm_per_h": 2})",
            {"Origin: http://127.0.0.1:" + port, "Sec-Fetch-Site: same-origin"})
            .status == 200);
  CHECK(put(R"({"rain_mm_per_h": 3})",
            {"Origin: http://dashboard.example:3000", "Sec-Fetch-Site: cross-site"})
            .status == 200);
  CHECK(put(R"({"rain_mm_per_h": 4})", {"Host: lidaremu:" + port}).status == 200);
  CHECK(put(R"({"rain_mm_per_h": 5})", {"Content-Type: application/json; charset=utf-8"}).status ==
        200);
  now = nlohmann::json::parse(test::http_request("GET", weather).body);
  CHECK(now["rain_mm_per_h"] == 5);

  // The emulated Ouster: the SDK's writes are GETs (cmd/set_config_param) and POSTs; a browser's
  // are refused by what the browser says about them.
  const std::string api = "http://" + sensor_ip + ":" + api_port();
  const auto staged_dest = [&] {
    const auto r = test::http_request("GET", api + "/api/v1/sensor/config?staging=true");
    return nlohmann::json::parse(r.body)["udp_dest"].get<std::string>();
  };
  const std::string before = staged_dest();
  const std::string steer = api + "/api/v1/sensor/cmd/set_config_param?args=udp_dest+6.6.6.6";
  CHECK(test::http_request("GET", steer, "", "", {"Sec-Fetch-Site: cross-site"}).status == 403);
  CHECK(test::http_request("GET", steer, "", "", {"Host: evil.example"}).status == 403);
  CHECK(test::http_request("POST", api + "/api/v1/sensor/config?staging=true&reinit=false",
                           R"({"udp_dest": "6.6.6.6"})", "",
                           {"Content-Type: text/plain", "Origin: http://evil.example"})
            .status == 403);
  CHECK(test::http_request("GET", api + "/api/v1/sensor/cmd/reinitialize", "", "",
                           {"Sec-Fetch-Site: same-site"})
            .status == 403);
  CHECK(staged_dest() == before);
  // Reading stays open (a browser cannot read the answer cross-origin anyway).
  CHECK(test::http_request("GET", api + "/api/v1/sensor/metadata/sensor_info", "", "",
                           {"Sec-Fetch-Site: cross-site"})
            .status == 200);
  // TCP 7501 takes one command per line: a browser's text/plain POST would run its body's lines.
  // Its first line is HTTP: the connection closes before anything runs.
  const auto form =
      test::tcp_exchange(sensor_ip, 7501,
                         "POST / HTTP/1.1\r\nHost: " + sensor_ip +
                             ":7501\r\nContent-Type: text/plain\r\n\r\nset_config_param udp_dest "
                             "6.6.6.6\nreinitialize\n",
                         3s);
  CHECK(form.closed);
  CHECK(form.bytes.empty());
  CHECK(staged_dest() == before);
  // The SDK, as it sends them: accepted.
  CHECK(
      test::http_request("GET", api + "/api/v1/sensor/cmd/set_config_param?args=udp_dest+127.0.0.7")
          .status == 200);
  CHECK(staged_dest() == "127.0.0.7");
  const auto line =
      test::tcp_exchange(sensor_ip, 7501, "set_config_param udp_dest 127.0.0.8\n", 2s);
  CHECK(line.bytes == "set_config_param\n");
  CHECK(staged_dest() == "127.0.0.8");
  CHECK(daemon.stop() == 0);
}

namespace {

// One GET over a fresh connection, as a monitoring probe sends it; the status line's code and
// how long the answer took.
std::pair<int, double> timed_get(const std::string& ip, std::uint16_t port,
                                 const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  test::TcpReply reply;
  try {
    reply = test::tcp_exchange(
        ip, port, "GET " + path + " HTTP/1.1\r\nHost: " + ip + "\r\nConnection: close\r\n\r\n", 5s);
  } catch (const std::runtime_error&) {
    return {0, 0.0};  // no connection: counted as unanswered by the caller
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int status = reply.bytes.starts_with("HTTP/1.1 ") ? std::stoi(reply.bytes.substr(9, 3)) : 0;
  return {status, seconds};
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

TEST_CASE("A reinitialisation storm on one sensor does not starve the others or /healthz",
          "[e2e][http][hostile]") {
  // The audit: reinitialize waited for the old pipeline's threads on the io thread, which also
  // receives every sensor's input and answers HTTP: 291 requests in 15 s cut a neighbour from
  // 753 to 81 packets/s and /healthz to 192 ms.
  test::UdpReceiver target_out, neighbour_out;
  const std::string config = "/tmp/lidaremu-storm.toml";
  {
    std::ofstream f(config);
    f << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"off\"\n"
      << "[[sensor]]\nname = \"target\"\nmodel = \"os1-64\"\nhits = \"udp://127.0.0.1:0\"\n"
      << "out = \"" << target_out.url()
      << "\"\nsensor_ip = \"127.0.0.10\"\napi_port = " << api_port() << "\n"
      << "[[sensor]]\nname = \"neighbour\"\nmodel = \"vlp16\"\nsensor_id = 1\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << neighbour_out.url() << "\"\napi_port = 0\n";
  }
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  const auto ports = daemon.hits_ports();
  REQUIRE(ports.size() == 2);
  constexpr int kFrames = 60;  // 6 s of both sensors at 10 Hz, in real time
  std::atomic<bool> feeding{true};
  const auto feed = [&](std::uint16_t port, const std::string& model, const std::string& mode,
                        std::uint16_t sensor_id) {
    clients::UdpSender sender("udp://127.0.0.1:" + std::to_string(port));
    const auto pattern = clients::scan_for(model, 0, mode);
    const auto rows = scene_rows(pattern);
    clients::FrameStreamer streamer(sender, pattern, {.sensor_id = sensor_id, .speed = 1.0});
    for (int i = 0; i < kFrames; ++i) streamer.send_frame(rows);
  };
  std::thread target_engine([&] { feed(ports[0], "os1-64", "1024x10", 0); });
  std::thread neighbour_engine([&] {
    feed(ports[1], "vlp16", "", 1);
    feeding = false;
  });
  // The storm: reinitialize as fast as one client can ask, over the SDK's own endpoint.
  int accepted = 0, requests = 0;
  std::thread storm([&] {
    while (feeding) {
      const int status = timed_get("127.0.0.10", static_cast<std::uint16_t>(std::stoi(api_port())),
                                   "/api/v1/sensor/cmd/reinitialize")
                             .first;
      ++requests;
      accepted += status == 200;
    }
  });
  std::vector<double> health;
  int healthy = 0;
  while (feeding) {
    const auto [status, seconds] = timed_get("127.0.0.1", port_of(base), "/healthz");
    healthy += status == 200;
    health.push_back(seconds);
    std::this_thread::sleep_for(20ms);
  }
  target_engine.join();
  neighbour_engine.join();
  storm.join();
  const auto neighbour_packets = neighbour_out.receive(1'000'000, 1s, 3s).size();
  CHECK(daemon.stop() == 0);
  std::remove(config.c_str());
  std::cout << "reinitialisation storm: " << requests << " requests (" << accepted
            << " answered 200) in 6 s; /healthz p50 " << percentile(health, 0.5) * 1e3
            << " ms, p99 " << percentile(health, 0.99) * 1e3 << " ms, max "
            << percentile(health, 1.0) * 1e3 << " ms; neighbour " << neighbour_packets
            << " packets\n";
  INFO(daemon.output());
  // A storm: in the normal build a reinitialisation takes milliseconds and one client asks for
  // dozens; a sanitized daemon takes a second or two over each (and answers /healthz as slowly).
  CHECK(requests >= (test::kSanitized ? 3 : 20));
  CHECK(accepted == requests);  // a reinitialisation asked while one is under way waits for it
  // Pipelines were rebuilt at most every 100 ms: before, a client asking in a loop had the io
  // thread build 1,200 OS1-64 pipelines a second, whose memory churn starved the neighbour.
  const auto rebuilt = daemon.counter("lidaremu_reinitialisations_total{sensor=\"target\"}");
  CHECK(rebuilt >= (test::kSanitized ? 3 : 10));
  CHECK(rebuilt <= 6.5 / 0.1 + 1);
  CHECK(healthy == static_cast<int>(health.size()));
  // The neighbour was not starved: nothing dropped by the kernel, and its frames processed and
  // sent but for at most one of 60. (While every request built a pipeline, 900-1,200 a second,
  // CI saw the neighbour lose 10 frames; a CPU stall over 50 ms can still restart its pacing a
  // margin later, and the catch-up (pacing_schedule.hpp) keeps that to one frame.)
  // Only where the build keeps real time: under ThreadSanitizer each reinitialisation's new
  // pipeline costs so much CPU that the two cores fall behind the neighbour's input whatever the
  // io thread does.
  if (!test::kSanitized) {
    CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"neighbour\"}") <= 1);
    CHECK(daemon.counter("lidaremu_input_kernel_drops_total{sensor=\"neighbour\"}") == 0);
    CHECK(daemon.counter("lidaremu_frames_processed_total{sensor=\"neighbour\"}") >= kFrames - 1);
    CHECK(neighbour_packets >= static_cast<std::size_t>((kFrames - 1) * 1808 / 24));
    CHECK(percentile(health, 0.99) < 0.1);
  }
}

namespace {

// A slowloris client: a connection that sends the start of a request and then a header byte
// now and then, never finishing.
class SlowClient {
 public:
  SlowClient(const std::string& ip, std::uint16_t port, const std::string& start) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, ip.c_str(), &to.sin_addr);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
    trickle(start);
  }
  ~SlowClient() { ::close(fd_); }
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;
  void trickle(const std::string& bytes) {
    if (connected_) (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  [[nodiscard]] bool connected() const { return connected_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace

TEST_CASE("Slow clients never lock out /healthz or TCP 7501", "[e2e][http][hostile]") {
  // The audit: 40 slow connections filled the 32-connection cap for 10 s each (slowloris), on
  // the control endpoint and on TCP 7501 alike; /healthz went unanswered.
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--physics",
                              "ideal", "--http", "127.0.0.1:0", "--sensor-ip", "127.0.0.11",
                              "--api-port", api_port(), "--foxglove", "off"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::uint16_t control_port = port_of(test::control_url(daemon));
  std::vector<std::unique_ptr<SlowClient>> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(std::make_unique<SlowClient>("127.0.0.1", control_port,
                                                "GET /healthz HTTP/1.1\r\nHost: x\r\n"));
    slow.push_back(std::make_unique<SlowClient>("127.0.0.11", 7501, "get_sensor"));
  }
  std::vector<double> health;
  int healthy = 0, answered_7501 = 0, probes = 0;
  const auto until = std::chrono::steady_clock::now() + 8s;
  while (std::chrono::steady_clock::now() < until) {
    for (auto& s : slow) s->trickle("X");  // a byte each, and again after every probe
    const auto [status, seconds] = timed_get("127.0.0.1", control_port, "/healthz");
    healthy += status == 200;
    health.push_back(seconds);
    const auto line = test::tcp_exchange("127.0.0.11", 7501, "get_sensor_info\n", 5s, "}\n");
    answered_7501 += line.bytes.find("\"prod_line\"") != std::string::npos;
    ++probes;
    std::this_thread::sleep_for(200ms);
  }
  std::cout << "slowloris: 40 slow connections on each port; " << healthy << "/" << probes
            << " /healthz answered (p99 " << percentile(health, 0.99) * 1e3 << " ms), "
            << answered_7501 << "/" << probes << " TCP 7501 commands answered\n";
  CHECK(healthy == probes);
  CHECK(answered_7501 == probes);
  if (!test::kSanitized) CHECK(percentile(health, 0.99) < 0.1);
  // Slow clients are closed at the request deadline (5 s), not kept for ever.
  CHECK(daemon.stop() == 0);
}

TEST_CASE("Clients fetching beam tables do not hold up /healthz", "[e2e][http][hostile]") {
  // An OS1-128 2048x10's table is 6 MiB. Computed for every request, then copied twice into each
  // answer, it took the io thread 55 ms a request (page faults on a virtual machine): two
  // clients fetching it in a loop held /healthz up 40 ms at the median, 180 ms at worst.
  test::DaemonProcess daemon({"--model", "os1-128", "--mode", "2048x10", "--hits",
                              "udp://127.0.0.1:0", "--physics", "ideal", "--http", "127.0.0.1:0",
                              "--api-port", "0", "--foxglove", "off"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 10s));
  const std::uint16_t control_port = port_of(test::control_url(daemon));
  std::atomic<bool> stop{false};
  std::atomic<int> tables{0}, whole{0};
  std::vector<std::thread> fetchers;
  for (int i = 0; i < 2; ++i) {
    fetchers.emplace_back([&] {
      while (!stop) {
        const auto reply = test::tcp_exchange(
            "127.0.0.1", control_port,
            "GET /api/v1/sensors/os1-128-0/beams HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            5s);
        ++tables;
        whole += reply.bytes.starts_with("HTTP/1.1 200") &&
                 reply.bytes.size() > std::size_t{2048} * 128 * 24;
      }
    });
  }
  std::vector<double> health;
  int healthy = 0;
  const auto until = std::chrono::steady_clock::now() + 4s;
  while (std::chrono::steady_clock::now() < until) {
    const auto [status, seconds] = timed_get("127.0.0.1", control_port, "/healthz");
    healthy += status == 200;
    health.push_back(seconds);
    std::this_thread::sleep_for(50ms);
  }
  stop = true;
  for (auto& f : fetchers) f.join();
  std::cout << "beam tables: " << whole << "/" << tables << " whole 6 MiB tables served; "
            << healthy << "/" << health.size() << " /healthz answered (p50 "
            << percentile(health, 0.5) * 1e3 << " ms, p99 " << percentile(health, 0.99) * 1e3
            << " ms)\n";
  CHECK(whole == tables);
  CHECK(tables >= 10);
  CHECK(healthy == static_cast<int>(health.size()));
  if (!test::kSanitized) CHECK(percentile(health, 0.99) < 0.1);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("A thread whose body throws stops the daemon in order instead of terminating it",
          "[hostile]") {
  // The audit: an exception on the emit thread (a host name in --out) ended in std::terminate,
  // exit 134, the frames in flight and the exit counters lost.
  daemon::reset_thread_failures();
  std::atomic<int> stop_requests{0};
  daemon::set_stop_request([&] { ++stop_requests; });
  std::atomic<bool> handed_on{false};
  std::thread worker([&] {
    daemon::run_guarded(
        "a test thread", [] { throw std::runtime_error("no such host"); },
        [&] { handed_on = true; });
  });
  worker.join();  // returned: no std::terminate
  CHECK(daemon::a_thread_failed());
  CHECK(stop_requests == 1);
  CHECK(handed_on);
  // A body that finishes is no failure; an after_failure that throws is contained too.
  daemon::reset_thread_failures();
  daemon::run_guarded("fine", [] {});
  CHECK_FALSE(daemon::a_thread_failed());
  std::thread worse([] {
    daemon::run_guarded(
        "worse", [] { throw 42; }, [] { throw std::logic_error("also broken"); });
  });
  worse.join();
  CHECK(daemon::a_thread_failed());
  CHECK(stop_requests == 2);
  daemon::set_stop_request({});
  daemon::reset_thread_failures();
}
