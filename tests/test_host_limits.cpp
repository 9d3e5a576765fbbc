// What the host gives the daemon, under hostile or careless load (issue 33): reloads that must
// not freeze the APIs or keep their memory, a disk that fills, a configuration larger than the
// host, requests that outlive the sensor they were for. Each case is what the adversarial review
// (or the soak) found, run against the real daemon.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/pcap.hpp"
#include "raw_connection.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;
using test::RawConnection;

TEST_CASE("A reload of a large scan table never freezes /healthz or a unit's API",
          "[e2e][hostile][reload]") {
  // The review: SIGHUP parsed the config (a 256 MiB Livox scan table included) on the io thread,
  // which also answers /healthz and every unit's API: they froze for 2-10 s. The file is now read
  // and its sensors built on a thread of their own; the io thread only swaps them in.
  const std::string stem = "/tmp/lidaremu-big-reload-" + std::to_string(::getpid());
  const std::string table = stem + ".csv";
  {
    // 4,000,000 points of valid rows (about 110 MiB), as livox_laser_simulation writes them.
    std::string csv = "Time/s,Azimuth/deg,Zenith/deg\n";
    char line[64];
    for (int i = 0; i < 4'000'000; ++i) {
      const int n = std::snprintf(line, sizeof line, "%.7f,%.5f,%.5f\n", i * 1e-6,
                                  std::fmod(i * 0.137, 360.0), 45.0 + (i % 97) * 0.5);
      csv.append(line, static_cast<std::size_t>(n));
    }
    std::ofstream(table) << csv;
  }
  test::UdpReceiver livox_out, ouster_out;
  const std::string config = stem + ".toml";
  const auto write = [&](double rain) {
    std::ofstream(config) << "[daemon]\nhttp = \"127.0.0.1:0\"\nfoxglove = \"off\"\n"
                          << "[[sensor]]\nname = \"livox\"\nmodel = \"livox-mid360\"\n"
                          << "scan_pattern = \"" << table << "\"\napi_port = 0\n"
                          << "hits = \"udp://127.0.0.1:0\"\nout = \"" << livox_out.url() << "\"\n"
                          << "weather = { rain_mm_per_h = " << rain << " }\n"
                          << "[[sensor]]\nname = \"ouster\"\nmodel = \"os1-64\"\nsensor_id = 1\n"
                          << "hits = \"udp://127.0.0.1:0\"\nout = \"" << ouster_out.url() << "\"\n"
                          << "sensor_ip = \"127.0.0.25\"\napi_port = " << test::api_port() << "\n";
  };
  write(0);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 30s));
  const std::uint16_t control = test::port_of(test::control_url(daemon));
  // Probes while three reloads run: /healthz on the control port, and the Ouster unit's TCP 7501
  // (its API, served by the same io thread).
  std::atomic<bool> probing{true};
  std::vector<double> health, unit;
  std::thread prober([&] {
    while (probing) {
      const auto timed = [](auto ask) {
        const auto start = std::chrono::steady_clock::now();
        const bool ok = ask();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return ok ? s : 99.0;
      };
      health.push_back(timed([&] {
        RawConnection c("127.0.0.1", control);
        c.send_some("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        return c
            .receive(
                5s,
                [](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; })
            .starts_with("HTTP/1.1 200");
      }));
      unit.push_back(timed([] {
        RawConnection c("127.0.0.25", 7501);
        c.send_some("get_sensor_info\n");
        return c.receive(5s, [](const std::string& got) {
                  return got.ends_with("\n");
                }).find("\"prod_line\"") != std::string::npos;
      }));
      std::this_thread::sleep_for(10ms);
    }
  });
  std::this_thread::sleep_for(300ms);  // probes of the steady state first
  for (int reload = 1; reload <= 3; ++reload) {
    write(reload);
    daemon.send_signal(SIGHUP);
    const std::string done = "reloaded " + config;
    for (const auto until = std::chrono::steady_clock::now() + 60s;
         std::chrono::steady_clock::now() < until;) {
      daemon.read_output(100ms);
      std::size_t n = 0;
      for (auto at = daemon.output().find(done); at != std::string::npos;
           at = daemon.output().find(done, at + 1)) {
        ++n;
      }
      if (n >= static_cast<std::size_t>(reload)) break;
    }
  }
  std::this_thread::sleep_for(300ms);
  probing = false;
  prober.join();
  const auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 99.0 : *std::max_element(v.begin(), v.end());
  };
  std::cout << "reloads of a " << std::filesystem::file_size(table) / (1 << 20)
            << " MiB scan table: " << health.size() << " /healthz probes, slowest "
            << worst(health) * 1e3 << " ms; " << unit.size() << " TCP 7501 probes, slowest "
            << worst(unit) * 1e3 << " ms\n";
  CHECK(daemon.output().find("SIGHUP: keeping") == std::string::npos);
  CHECK(health.size() >= 10);
  CHECK(worst(health) < 5.0);  // every probe answered
  // The unit's port closes when its sensor retires and opens when the new one starts, the same
  // io handler: a probe can meet that gap only where a sanitizer stretches it.
  const auto unanswered = std::count(unit.begin(), unit.end(), 99.0);
  CHECK(unanswered <= (test::kSanitized ? 3 : 0));
  if (!test::kSanitized) {
    CHECK(worst(health) < 0.1);
    CHECK(worst(unit) < 0.1);
  }
  CHECK(daemon.stop() == 0);
  std::filesystem::remove(table);
  std::filesystem::remove(config);
}

TEST_CASE("A full disk ends --pcap at its last whole record; the stream goes on, counted and said",
          "[e2e][hostile][capture]") {
  // The review: --pcap on a full disk dropped packets with no counter and no log. Here the disk
  // is a 1 MiB tmpfs (mounting one needs root, as CI runs; test_operations covers the writer with
  // the file size limit everywhere).
  const std::string dir = "/tmp/lidaremu-full-disk-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  if (std::system(("mount -t tmpfs -o size=1m tmpfs " + dir + " 2>/dev/null").c_str()) != 0) {
    WARN("cannot mount a 1 MiB tmpfs here (not root): the full-disk case is not run");
    std::filesystem::remove(dir);
    return;
  }
  // Unmounted however the test ends (declared before the daemon: after it has gone).
  struct Unmount {
    std::string dir;
    ~Unmount() {
      if (std::system(("umount " + dir).c_str()) == 0) std::filesystem::remove(dir);
    }
  } unmount{dir};
  const std::string pcap = dir + "/out.pcap";
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--pcap", pcap, "--pace", "afap", "--http", "127.0.0.1:0",
                              "--api-port", "0", "--foxglove", "off", "--physics", "ideal"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  // Frames of about 75 packets (1,248 bytes each in the capture) until the disk is full: 11 fill
  // it, 20 are sent at least (a sanitized daemon drops frames it cannot keep up with).
  std::vector<test::UdpReceiver::Datagram> received;
  std::thread driver([&] { received = data.receive(100'000, 3s, 90s); });
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(test::hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  const auto rows = test::scene_rows(pattern);
  nlohmann::json health;
  for (int i = 0; i < 100; ++i) {
    streamer.send_frame(rows);
    // The capture's writer keeps up: every loss is the disk's.
    std::this_thread::sleep_for(test::kSanitized ? 200ms : 20ms);
    if (i >= 19 && i % 10 == 9) {
      health = nlohmann::json::parse(test::http_request("GET", base + "/healthz").body);
      if (health.value("status", "") == "degraded") break;
    }
  }
  driver.join();
  INFO(health.dump());
  CHECK(health.value("status", "") == "degraded");
  REQUIRE(health.contains("captures"));
  CHECK(health["captures"][0].value("writing", true) == false);
  CHECK(health["captures"][0].value("error", "").starts_with("ENOSPC"));
  REQUIRE(daemon.stop() == 0);
  // A Velodyne's last packet of a frame waits for the next frame's first columns: the stop sends
  // it.
  for (auto& d : data.receive(10, 300ms, 1s)) received.push_back(std::move(d));
  CHECK(daemon.output().find("ENOSPC (No space left on device): the capture ends") !=
        std::string::npos);
  CHECK(daemon.counter("lidaremu_capture_write_errors_total{capture=\"pcap\",reason=\"ENOSPC\"}") ==
        1);
  // The stream went on whole: every data packet sent reached the driver's socket.
  const auto sent = daemon.counter("lidaremu_packets_out_total{sensor=\"vlp16-0\"}");
  const auto telemetry = daemon.counter("lidaremu_telemetry_packets_out_total{sensor=\"vlp16-0\"}");
  if (!test::kSanitized) CHECK(sent >= std::uint64_t{19} * 75);
  CHECK(received.size() == sent);
  // The capture holds whole packets (data and position packets) from the first on; the rest are
  // counted as left out of it.
  std::uint64_t captured = 0;
  {
    core::PcapReader reader(pcap);
    while (auto d = reader.next()) {
      CHECK((d->payload.size() == 1206 || d->payload.size() == 512));
      ++captured;
    }
    CHECK(reader.frames_skipped() == 0);
  }
  CHECK(captured > 500);
  CHECK(captured + daemon.counter("lidaremu_capture_dropped_total{sensor=\"vlp16-0\"}") ==
        sent + telemetry);
}

namespace {
// A process's resident memory, in MB (0 when it cannot be read).
double resident_mb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}
}  // namespace

TEST_CASE("A storm of reloads gives its memory back", "[e2e][hostile][reload]") {
  // The review: hundreds of SIGHUPs on a multi-sensor config took RSS from 196 MB to 1.4-1.8 GB
  // and kept it (glibc's arenas keep what they freed). After a storm, within 5 % + 10 MB. Once
  // 55 MB more stayed (the free tops of threads' arenas, under thresholds glibc had raised): the
  // daemon fixes them now, and 0.4-3.6 MB more stays.
  const std::string config = "/tmp/lidaremu-reload-storm-" + std::to_string(::getpid()) + ".toml";
  // Each reload's file sets a new seed: every sensor restarts (an unchanged one would run on).
  const auto write = [&](int seed) {
    std::ofstream f(config + ".next");
    f << "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\n";
    int id = 0;
    for (const char* model : {"vlp16", "vlp32c", "os1-64", "os1-128"}) {
      f << "[[sensor]]\nmodel = \"" << model << "\"\nsensor_id = " << id++
        << "\nhits = \"udp://127.0.0.1:0\"\napi_port = 0\nseed = " << seed << "\n";
    }
    f.close();
    std::filesystem::rename(config + ".next", config);
  };
  write(0);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor os1-128-3", 10s));
  std::this_thread::sleep_for(1s);
  const double steady = resident_mb(daemon.pid());
  const auto reloads = [&] {
    std::size_t n = 0;
    for (auto at = daemon.output().find("SIGHUP: reloaded"); at != std::string::npos;
         at = daemon.output().find("SIGHUP: reloaded", at + 1)) {
      ++n;
    }
    return n;
  };
  for (int i = 1; i <= 60; ++i) {
    write(i);
    daemon.send_signal(SIGHUP);
    daemon.read_output(50ms);
  }
  // The storm's reloads coalesce; wait until they are done: the first may still be building
  // (seconds under ThreadSanitizer), then until no more come.
  for (int i = 0; i < 120 && reloads() == 0; ++i) daemon.read_output(500ms);
  for (std::size_t seen = 0; seen != reloads();) {
    seen = reloads();
    daemon.read_output(1500ms);
  }
  // The retired sets drain and are freed on the reaper's thread, then the heap is trimmed: the
  // smallest sample of the next 10 s (every 250 ms, until one is within the bound).
  double after = resident_mb(daemon.pid());
  std::string samples;
  for (int i = 0; i < 40 && after > steady * 1.05 + 10; ++i) {
    std::this_thread::sleep_for(250ms);
    const double now = resident_mb(daemon.pid());
    samples += " " + std::to_string(std::lround(now));
    after = std::min(after, now);
  }
  std::cout << "reload storm: 60 SIGHUPs, " << reloads() << " reloads; resident " << steady
            << " MB before, " << after << " MB after (samples, MB:" << samples << ")\n";
  CHECK(reloads() >= 2);
  if (!test::kSanitized) CHECK(after <= steady * 1.05 + 10);  // sanitizers keep freed memory
  CHECK(daemon.stop() == 0);
  std::filesystem::remove(config);
}

namespace {
// A config of `count` VLP-16s (no API, no live view), written to `file`.
void write_vlp16s(const std::string& file, int count, const std::string& daemon_keys = "") {
  std::ofstream f(file);
  f << "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\n" << daemon_keys;
  for (int i = 0; i < count; ++i) {
    f << "[[sensor]]\nmodel = \"vlp16\"\nsensor_id = " << i
      << "\nhits = \"udp://127.0.0.1:0\"\napi_port = 0\n";
  }
}

// The "need about N MiB" of the daemon's start-up line.
double estimated_mib(const std::string& output) {
  const auto at = output.find("need about ");
  return at == std::string::npos ? -1 : std::stod(output.substr(at + 11));
}
}  // namespace

TEST_CASE("The memory estimate is what the sensors hold; a config over the limit is refused",
          "[e2e][hostile][memory]") {
  // The review: 1,000 sensors in one config OOM-killed the host (about 26 MB per VLP-16, nothing
  // estimated or capped). The estimate is each pipeline's buffers, which start-up faults in.
  const std::string config = "/tmp/lidaremu-memory-" + std::to_string(::getpid()) + ".toml";
  for (const int count : {1, 8, 64}) {
    if (test::kSanitized && count > 8) continue;  // 192 threads under a sanitizer: too slow
    write_vlp16s(config, count);
    test::DaemonProcess daemon({"--config", config});
    REQUIRE(daemon.wait_for_output("sensor vlp16-" + std::to_string(count - 1) + " (", 30s));
    std::this_thread::sleep_for(500ms);
    const double resident = resident_mb(daemon.pid());
    const double estimate = estimated_mib(daemon.output());
    std::cout << count << " VLP-16: estimated " << estimate << " MiB, resident " << resident
              << " MiB\n";
    // Sanitizers add their own shadow memory: the estimate is the daemon's, checked plain.
    if (!test::kSanitized) CHECK(std::abs(resident - estimate) <= 0.25 * estimate);
    CHECK(daemon.stop() == 0);
  }
  // Over the limit: refused at start with each sensor's estimate, and on a reload.
  write_vlp16s(config, 8, "memory_limit_mib = 100\n");
  CHECK_THROWS_WITH(test::DaemonProcess({"--config", config}),
                    Catch::Contains("too much for this host (vlp16-0 ") &&
                        Catch::Contains("raise --memory-limit"));
  write_vlp16s(config, 1, "memory_limit_mib = 100\n");
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor vlp16-0 (", 10s));
  write_vlp16s(config, 8, "memory_limit_mib = 100\n");
  daemon.send_signal(SIGHUP);
  CHECK(daemon.wait_for_output("keeping the running configuration: 8 sensor(s) need about", 30s));
  // More sensors than a daemon runs: refused whatever the memory.
  write_vlp16s(config, 257, "memory_limit_mib = 1000000\n");
  daemon.send_signal(SIGHUP);
  CHECK(daemon.wait_for_output("257 sensors: a daemon runs at most 256", 30s));
  CHECK(daemon.stop() == 0);
  std::filesystem::remove(config);
}

TEST_CASE("A request on a connection a reload left open is refused, not fatal",
          "[e2e][hostile][reload]") {
  // Found by the soak: an Ouster client's kept-alive connection outlives a reload (the old API's
  // session goes on); its next reinitialize reached the retired sensor, whose input socket was
  // closed, and the io thread failed ("local_endpoint: Bad file descriptor"): the daemon stopped.
  const std::string config = "/tmp/lidaremu-late-request-" + std::to_string(::getpid()) + ".toml";
  const std::string hits = "udp://127.0.0.1:" + std::to_string(test::free_udp_port());
  // Each reload's file sets a new seed, so that the sensor restarts (an unchanged one runs on).
  const auto write = [&](int seed) {
    std::ofstream(config) << "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\n[[sensor]]\nname = "
                          << "\"ouster\"\nmodel = \"os1-64\"\nhits = \"" << hits << "\"\n"
                          << "sensor_ip = \"127.0.0.30\"\napi_port = " << test::api_port()
                          << "\nseed = " << seed << "\n";
  };
  write(0);
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor ouster", 10s));
  const auto port = static_cast<std::uint16_t>(std::stoi(test::api_port()));
  const auto request = [](const std::string& path) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.30\r\n\r\n";
  };
  const auto whole = [](const std::string& got) {
    const auto head = got.find("\r\n\r\n");
    if (head == std::string::npos) return false;
    const auto length = got.find("Content-Length: ");
    return length != std::string::npos &&
           got.size() >= head + 4 + std::stoul(got.substr(length + 16));
  };
  // Kept-alive connections asking to reinitialise as fast as they are answered, across the
  // reload: some requests reach the old sensor between its retirement and its end.
  std::vector<std::unique_ptr<RawConnection>> kept;
  for (int i = 0; i < 8; ++i) {
    kept.push_back(std::make_unique<RawConnection>("127.0.0.30", port));
    kept.back()->send_some(request("/api/v1/sensor/metadata/sensor_info"));
    REQUIRE(kept.back()->receive(3s, whole).starts_with("HTTP/1.1 200"));
  }
  std::atomic<bool> asking{true};
  // Frames in flight, so that a retired pipeline takes its time to drain (the window in which
  // its sensor still exists and a rebuild it had waiting comes due).
  std::thread engine([&] {
    clients::UdpSender sender(hits);
    const auto pattern = clients::scan_for("os1-64", 0, "1024x10");
    const auto rows = test::scene_rows(pattern);
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    while (asking) streamer.send_frame(rows);
  });
  std::atomic<int> refused{0};
  std::thread client([&] {
    while (asking) {
      for (auto& c : kept) {
        c->send_some(request("/api/v1/sensor/cmd/reinitialize"));
        refused += c->receive(1s, whole).find("removed by a reload") != std::string::npos ? 1 : 0;
      }
    }
  });
  for (int reload = 1; reload <= 3; ++reload) {
    write(reload);
    daemon.send_signal(SIGHUP);
    std::this_thread::sleep_for(700ms);
  }
  asking = false;
  client.join();
  engine.join();
  std::cout << "late requests refused as removed by a reload: " << refused << '\n';
  // The daemon runs on, its new unit answering.
  const auto fresh = test::tcp_exchange("127.0.0.30", 7501, "get_sensor_info\n", 3s, "}\n");
  CHECK(fresh.bytes.find("\"prod_line\"") != std::string::npos);
  CHECK(daemon.stop() == 0);
  std::filesystem::remove(config);
}
