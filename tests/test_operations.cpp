// What operators run beside the daemon: Prometheus (its own checker and a real server scraping
// /metrics), and the documentation of every metric family.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/daemon/ops/capture.hpp"
#include "lidaremu/daemon/ops/metrics.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {

// Three sensors (a Livox unit's side channels have families of their own), the live view and
// traffic: every family /metrics can show has samples.
struct BusyDaemon {
  test::UdpReceiver out_a, out_b, out_c;
  std::string config = "/tmp/lidaremu-ops-" + std::to_string(::getpid()) + ".toml";
  std::string pcap = "/tmp/lidaremu-ops-" + std::to_string(::getpid()) + ".pcap";
  std::unique_ptr<test::DaemonProcess> daemon;
  std::string base;

  BusyDaemon() {
    {
      std::ofstream f(config);
      f << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"127.0.0.1:0\"\n"
        << "pcap = \"" << pcap << "\"\n"
        << "[[sensor]]\nname = \"roof\"\nmodel = \"vlp16\"\nhits = \"udp://127.0.0.1:0\"\n"
        << "out = \"" << out_a.url() << "\"\napi_port = 0\npace = \"afap\"\n"
        << "[[sensor]]\nname = \"front\"\nmodel = \"os1-32\"\nsensor_id = 1\n"
        << "hits = \"udp://127.0.0.1:0\"\nout = \"" << out_b.url()
        << "\"\n"
        // An address of its own, so that its TCP 7501 port's families are exposed too.
        << "sensor_ip = \"127.0.0.23\"\napi_port = " << test::api_port() << "\n"
        << "[[sensor]]\nname = \"side\"\nmodel = \"livox-mid360\"\nsensor_id = 2\n"
        << "scan_pattern = \"test-pattern\"\nhits = \"udp://127.0.0.1:0\"\nout = \"" << out_c.url()
        << "\"\ntelemetry = \"" << out_c.url() << "\"\n";
    }
    daemon = std::make_unique<test::DaemonProcess>(std::vector<std::string>{"--config", config});
    REQUIRE(daemon->wait_for_output("/api/v1/sensors)", 5s));
    base = test::control_url(*daemon);
    const auto pattern = clients::scan_for("vlp16", 600, "");
    std::vector<float> rows;
    clients::DemoScene().render(core::BeamGeometry(pattern), rows);
    clients::UdpSender sender(test::hits_url(*daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
    for (int i = 0; i < 3; ++i) streamer.send_frame(rows);
    REQUIRE(out_a.receive(200, 2s, 10s).size() >= 200);
  }
  ~BusyDaemon() {
    std::remove(config.c_str());
    std::remove(pcap.c_str());
  }
};

std::string run_capture(const std::string& command) {
  const std::string out = "/tmp/lidaremu-ops-cmd-" + std::to_string(::getpid()) + ".txt";
  const int rc = std::system((command + " > " + out + " 2>&1").c_str());  // NOLINT(cert-env33-c)
  std::string text = test::slurp(out);
  std::remove(out.c_str());
  return std::to_string(WEXITSTATUS(rc)) + "\n" + text;
}

}  // namespace

TEST_CASE("/metrics is the Prometheus exposition format: promtool check metrics is clean",
          "[e2e][metrics]") {
  // The audit: no # HELP or # TYPE lines, so Prometheus took counters and the histogram as
  // untyped; samples of one family were scattered between sensors.
  BusyDaemon busy;
  const auto metrics = test::http_request("GET", busy.base + "/metrics");
  REQUIRE(metrics.status == 200);
  const std::string file = "/tmp/lidaremu-ops-metrics-" + std::to_string(::getpid()) + ".txt";
  std::ofstream(file) << metrics.body;
  const std::string checked = run_capture("promtool check metrics < " + file);
  std::remove(file.c_str());
  INFO(checked);
  CHECK(checked == "0\n");  // exit 0 and nothing said: no problem, no lint
  // Every family the daemon knows is there, typed, with samples of both sensors together.
  for (const auto name : daemon::metric_family_names()) {
    INFO(name);
    CHECK(metrics.body.find("# TYPE " + std::string(name) + " ") != std::string::npos);
  }
  const auto roof = metrics.body.find("lidaremu_packets_out_total{sensor=\"roof\"}");
  const auto front = metrics.body.find("lidaremu_packets_out_total{sensor=\"front\"}");
  REQUIRE(roof != std::string::npos);
  REQUIRE(front != std::string::npos);
  CHECK(metrics.body.find("# TYPE", roof) > front);  // no other family between them
  CHECK(busy.daemon->stop() == 0);
}

TEST_CASE("Every metric family is documented in docs/metrics.md", "[metrics][docs]") {
  const std::string doc = test::slurp(std::string(LIDAREMU_TEST_DOCS_DIR) + "/metrics.md");
  REQUIRE_FALSE(doc.empty());
  for (const auto name : daemon::metric_family_names()) {
    INFO(name);
    CHECK(doc.find("`" + std::string(name) + "`") != std::string::npos);
  }
}

TEST_CASE("A real Prometheus server scrapes the daemon and answers a query", "[e2e][metrics]") {
  BusyDaemon busy;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("lidaremu-prometheus-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string target = busy.base.substr(std::string("http://").size());
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: lidaremu\n    static_configs:\n"
      << "      - targets: ['" << target << "']\n";
  // The port is free when chosen, but another test may take it before Prometheus binds it (CI
  // saw "bind: address already in use"): start again on a fresh port when the log says so.
  const auto log = dir / "log";
  const auto start_prometheus = [&](const std::string& port) {
    const std::string command = "prometheus --config.file=" + (dir / "prometheus.yml").string() +
                                " --storage.tsdb.path=" + (dir / "data").string() +
                                " --web.listen-address=127.0.0.1:" + port + " > " + log.string() +
                                " 2>&1 & echo $! > " + (dir / "pid").string();
    REQUIRE(std::system(command.c_str()) == 0);  // NOLINT(cert-env33-c)
    return std::stoi(test::slurp((dir / "pid").string()));
  };
  std::string port = std::to_string(test::free_tcp_port());
  int pid = start_prometheus(port);
  int restarts = 0;
  double packets = 0;
  for (int attempt = 0; attempt < 60 && packets == 0; ++attempt) {
    std::this_thread::sleep_for(500ms);
    if (test::slurp(log.string()).find("address already in use") != std::string::npos &&
        restarts < 5) {
      ::kill(pid, SIGTERM);
      for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(50ms);
      ++restarts;
      port = std::to_string(test::free_tcp_port());
      pid = start_prometheus(port);
      continue;
    }
    const std::string query =
        "http://127.0.0.1:" + port +
        "/api/v1/query?query=lidaremu_packets_out_total%7Bsensor%3D%22roof%22%7D";
    const auto reply = test::http_request("GET", query);
    if (reply.status != 200) continue;
    const auto answer = nlohmann::json::parse(reply.body, nullptr, false);
    if (answer.is_discarded() || answer["data"]["result"].empty()) continue;
    packets = std::stod(answer["data"]["result"][0]["value"][1].get<std::string>());
  }
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(50ms);
  INFO(test::slurp((dir / "log").string()));
  CHECK(packets >= 200);
  CHECK(busy.daemon->stop() == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A capture the file size limit cuts off ends at its last whole record, and says why",
          "[capture][hostile]") {
  // The review: --pcap on a full disk dropped packets with no counter and no log (libpcap's
  // dumper ignored write errors). The file size limit (RLIMIT_FSIZE) fails writes the same way,
  // with EFBIG, in this process alone.
  const std::string file = "/tmp/lidaremu-fsize-" + std::to_string(::getpid()) + ".pcap";
  constexpr rlim_t kLimit = 200 * 1024;
  constexpr int kPackets = 2000;  // 2.4 MB of packets: past the limit
  rlimit previous{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &previous) == 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of death
  rlimit small = previous;
  small.rlim_cur = kLimit;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  int error = 0;
  std::uint64_t dropped = 0;
  {
    daemon::CaptureFile capture(file, "pcap");
    const auto lane = capture.lane(64, 1206);
    for (int i = 0; i < kPackets; ++i) {
      std::vector<std::uint8_t> payload(1206, 0);
      payload[1] = static_cast<std::uint8_t>(i & 0xFF);
      payload[2] = static_cast<std::uint8_t>(i >> 8);
      lane->record(1.0 + i * 1e-3, {0x7F000002u, 2000}, {0x7F000001u, 2368}, payload);
      if (i % 32 == 31) capture.flush();  // the lane never fills: every loss is the limit's
    }
    capture.flush();
    error = capture.error();
    dropped = lane->dropped();
  }
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);
  CHECK(error == EFBIG);
  CHECK(std::filesystem::file_size(file) <= kLimit);
  // What is in the file reads whole, in order from the first packet; the rest was counted.
  core::PcapReader reader(file);
  int written = 0;
  while (auto d = reader.next()) {
    REQUIRE(d->payload.size() == 1206);
    CHECK((d->payload[1] | (d->payload[2] << 8)) == written);
    ++written;
  }
  CHECK(reader.frames_skipped() == 0);
  INFO(written << " packets written, " << dropped << " counted as left out");
  CHECK(written > 100);
  CHECK(written < kPackets);
  CHECK(dropped > 0);
  CHECK(written + static_cast<int>(dropped) <= kPackets);
  std::remove(file.c_str());
}

TEST_CASE("Capture lanes: packets from many threads reach the file in order, a full lane counts",
          "[capture]") {
  // The audit: --pcap took a lock and wrote the file per packet on every sending thread. Now
  // each thread queues into its own lane; one writer thread writes.
  const std::string file = "/tmp/lidaremu-lanes-" + std::to_string(::getpid()) + ".pcap";
  constexpr int kThreads = 4, kPackets = 2000;
  std::uint64_t dropped = 0;
  {
    daemon::CaptureFile capture(file, "pcap");
    std::vector<std::shared_ptr<daemon::CaptureFile::Lane>> lanes;
    lanes.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) lanes.push_back(capture.lane(t == 0 ? 2 : 4096, 1206));
    std::vector<std::thread> senders;
    senders.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      senders.emplace_back([&, t] {
        for (int i = 0; i < kPackets; ++i) {
          std::vector<std::uint8_t> payload(1206, static_cast<std::uint8_t>(t));
          payload[1] = static_cast<std::uint8_t>(i & 0xFF);
          payload[2] = static_cast<std::uint8_t>(i >> 8);
          lanes[t]->record(1.0 + i * 1e-3, {0x7F000002u, static_cast<std::uint16_t>(2000 + t)},
                           {0x7F000001u, 2368}, payload);
        }
      });
    }
    for (auto& s : senders) s.join();
    capture.flush();
    for (int t = 1; t < kThreads; ++t) CHECK(lanes[t]->dropped() == 0);
    dropped = lanes[0]->dropped();
  }
  // Every packet written is whole; per lane, in the order recorded; the tiny lane's losses
  // are exactly the packets missing.
  core::PcapReader reader(file);
  std::vector<int> last(kThreads, -1);
  std::vector<int> written(kThreads, 0);
  while (auto d = reader.next()) {
    const int t = d->source_port - 2000;
    REQUIRE(t >= 0);
    REQUIRE(t < kThreads);
    REQUIRE(d->payload.size() == 1206);
    const int i = d->payload[1] | (d->payload[2] << 8);
    CHECK(i > last[t]);
    last[t] = i;
    ++written[t];
  }
  for (int t = 1; t < kThreads; ++t) CHECK(written[t] == kPackets);
  CHECK(written[0] + static_cast<int>(dropped) == kPackets);
  std::remove(file.c_str());
}

TEST_CASE("Capture lanes: a lane let go still has its packets written, each lane in its order",
          "[capture]") {
  // Each lane is its own ring to the writer (a real-time sender never waits on another thread).
  // The writer merges what the lanes hold when it looks by time; when it looks depends on when
  // it wakes, so across lanes only each lane's own order is certain.
  const std::string file = "/tmp/lidaremu-merge-" + std::to_string(::getpid()) + ".pcap";
  {
    daemon::CaptureFile capture(file, "pcap");
    auto early = capture.lane(8, 64);
    auto late = capture.lane(8, 64);
    const std::vector<std::uint8_t> payload(64, 0);
    for (int i = 0; i < 4; ++i) {
      early->record(1.0 + 0.2 * i, {0x7F000002u, 3000}, {0x7F000001u, 2368}, payload);
    }
    for (int i = 0; i < 4; ++i) {
      late->record(1.1 + 0.2 * i, {0x7F000002u, 3001}, {0x7F000001u, 2368}, payload);
    }
    late.reset();  // its sensor stopped: what it queued is still written
    capture.flush();
    auto again = capture.lane(8, 64);
    again->record(2.0, {0x7F000002u, 3002}, {0x7F000001u, 2368}, payload);
  }  // the end writes what is queued
  core::PcapReader reader(file);
  std::map<int, std::vector<double>> by_port;
  std::vector<int> ports;
  while (auto d = reader.next()) {
    by_port[d->source_port].push_back(d->capture_time_s);
    ports.push_back(d->source_port);
  }
  REQUIRE(ports.size() == 9);
  for (int lane = 0; lane < 2; ++lane) {
    const auto& times = by_port[3000 + lane];
    REQUIRE(times.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(times[i] == Approx(1.0 + 0.1 * lane + 0.2 * static_cast<double>(i)).margin(1e-6));
    }
  }
  CHECK(ports.back() == 3002);  // recorded after the flush: after everything before it
  std::remove(file.c_str());
}

TEST_CASE("docs/hostile-input.md: at least 30 cases, each test it names exists, each counter too",
          "[docs]") {
  std::istringstream doc(test::slurp(std::string(LIDAREMU_TEST_DOCS_DIR) + "/hostile-input.md"));
  const std::string tests_dir = std::string(LIDAREMU_TEST_DATA) + "/..";
  const auto families = daemon::metric_family_names();
  int rows = 0;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| ") || line.starts_with("| input") || line.starts_with("|---"))
      continue;
    ++rows;
    INFO(line);
    // Every counter named exists.
    for (auto at = line.find("`lidaremu_"); at != std::string::npos;
         at = line.find("`lidaremu_", at + 1)) {
      std::string name = line.substr(at + 1, line.find_first_of("`{", at + 1) - at - 1);
      CHECK(std::find(families.begin(), families.end(), name) != families.end());
    }
    // Every "test_file: Test name" in the last cell is a TEST_CASE in that file.
    const std::string cell = line.substr(line.rfind(" | ") + 3);
    std::istringstream parts(cell);
    int named = 0;
    for (std::string part; std::getline(parts, part, ';');) {
      const auto colon = part.find(": ");
      if (colon == std::string::npos) continue;
      std::string file =
          part.substr(part.find_first_not_of(' '), colon - part.find_first_not_of(' '));
      std::string name = part.substr(colon + 2);
      name = name.substr(0, name.find(" ..."));
      name = name.substr(0, name.find(" ("));
      while (!name.empty() && (name.back() == ' ' || name.back() == '|')) name.pop_back();
      const std::string source = test::slurp(tests_dir + "/" + file + ".cpp");
      INFO(file << ": " << name);
      CHECK_FALSE(source.empty());
      CHECK(source.find("TEST_CASE(\"" + name) != std::string::npos);
      ++named;
    }
    CHECK(named >= 1);
  }
  CHECK(rows >= 30);
}

TEST_CASE("Every driver setting in docs/drivers.md makes one revolution", "[docs]") {
  // The velodyne driver's packet rate per `model` (ros-drivers/velodyne, velodyne_driver's
  // driver.cpp) and its count: npackets = ceil(rate / (rpm / 60)).
  const std::map<std::string, double> driver_rate{
      {"VLP16", 754.0},      {"32C", 1507.0},     {"32E", 1808.0},   {"64E", 2600.0},
      {"64E_S2.1", 3472.17}, {"64E_S3", 5787.03}, {"VLS128", 6253.9}};
  std::istringstream doc(test::slurp(std::string(LIDAREMU_TEST_DOCS_DIR) + "/drivers.md"));
  int rows = 0;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `") || line.starts_with("| `--") ||
        std::count(line.begin(), line.end(), '|') != 7) {
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream split(line.substr(2));
    for (std::string cell; std::getline(split, cell, '|');) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    REQUIRE(cells.size() >= 6);
    INFO(line);
    ++rows;
    const std::string model = cells[0].substr(1, cells[0].size() - 2);
    const bool dual = cells[1] == "dual";
    const auto* m = core::find_sensor_model(model);
    REQUIRE(m != nullptr);
    const auto scan = core::make_rpm_scan(*m, 600);
    const auto encoder = core::make_encoder(
        *scan.pattern, {}, dual ? core::ReturnMode::kDual : core::ReturnMode::kStrongest);
    REQUIRE(encoder);
    const double rate = 1.0 / encoder->data_packet_period_s();
    const double per_turn = rate * scan.pattern->frame_period_s;
    CHECK(std::stod(cells[2]) == Approx(rate).margin(0.06));
    const std::string driver_model = cells[3].substr(1, cells[3].size() - 2);
    REQUIRE(driver_rate.contains(driver_model));
    const double driver_count = std::ceil(driver_rate.at(driver_model) / 10.0);
    for (const std::string& setting : {cells[4], cells[5]}) {
      if (setting == "defaults") {
        // The driver's own count is a revolution, within the one packet it rounds up.
        CHECK(driver_count - per_turn >= 0.0);
        CHECK(driver_count - per_turn < 1.0);
      } else if (setting.starts_with("`npackets: ")) {
        // A revolution's packets, to the packet (the driver cannot count fractions).
        CHECK(std::abs(std::stoi(setting.substr(11)) - per_turn) < 1.0);
      } else {
        CHECK(setting == "`cut_angle: 0.0`");
      }
    }
  }
  CHECK(rows == 11);  // every Velodyne model, in each return mode it has
}

TEST_CASE("README and docs/: every relative link leads to a file", "[docs]") {
  // The README is the front door and the reference lives in docs/: links between them must not
  // break when a section moves.
  const std::filesystem::path root = std::filesystem::path(LIDAREMU_TEST_DOCS_DIR).parent_path();
  std::vector<std::filesystem::path> pages{root / "README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  int links = 0;
  for (const auto& page : pages) {
    const std::string text = test::slurp(page.string());
    for (auto at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
      const auto end = text.find(')', at);
      std::string target = text.substr(at + 2, end - at - 2);
      if (target.starts_with("http") || target.starts_with('#') || target.starts_with("mailto"))
        continue;
      target = target.substr(0, target.find('#'));
      INFO(page.filename().string() << " -> " << target);
      CHECK(std::filesystem::exists(page.parent_path() / target));
      ++links;
    }
  }
  CHECK(links > 20);
}
