// lidaremu-bench against the real daemon: every frame accounted for, raw rows on schedule.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/bench.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/core/velodyne.hpp"
#include "lidaremu/daemon/settings.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::api_port;
using test::check_ouster_round_trip;
using test::check_velodyne_round_trip;
using test::free_udp_port;
using test::hits_url;
using test::scene_rows;
using test::valid_rows;
}  // namespace

namespace {

clients::BenchOptions short_bench(const std::vector<std::string>& sensors, double seconds) {
  clients::BenchOptions o;
  o.daemon = test::daemon_path();
  for (const auto& spec : sensors) o.sensors.push_back(clients::BenchSensor::parse(spec));
  o.seconds = seconds;
  o.warmup_seconds = 0.3;
  return o;
}

}  // namespace

TEST_CASE("lidaremu-bench loads the real daemon and accounts for every frame", "[e2e][bench]") {
  auto o = short_bench({"vlp16", "os1-32:512x10:rng19"}, 1.5);
  o.in_flight = 1;
  o.ceiling_seconds = 0.3;
  const auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 2);
  for (const auto& s : r.sensors) {
    INFO(s.label);
    CHECK(s.frames_sent >= 3);
    CHECK(s.frames_out == s.frames_sent);
    CHECK(s.daemon_datagrams_in == s.datagrams_sent);
    CHECK(s.daemon_frames_processed == s.frames_sent);
    CHECK(s.daemon_frames_dropped == 0);
    CHECK(s.daemon_batches_rejected == 0);
    CHECK(s.latency.frames > 0);
    CHECK(s.latency.p50_ms > 0);
    CHECK(s.latency.p50_ms <= s.latency.p99_ms);
    CHECK(s.latency.p99_ms <= s.latency.max_ms);
    CHECK(s.returns_out > 0);
    CHECK(s.returns_out < s.rays_sent);
  }
  CHECK(r.input_datagrams_lost == 0);
  CHECK(r.rays_per_s > 0);
  CHECK(r.returns_per_s > 0);
  CHECK(r.returns_per_s < r.rays_per_s);
  CHECK(r.daemon_cpu_ns_per_ray > 0);
  CHECK(r.ceiling_rays_per_s > r.rays_per_s);
  std::ostringstream report;
  clients::print_report(report, o, r);
  CHECK_THAT(report.str(), Catch::Contains("lidaremud reached"));
}

TEST_CASE("lidaremu-bench at twice real time sends raw rows on the sensor's schedule",
          "[e2e][bench]") {
  auto o = short_bench({"vlp16"}, 1.0);
  o.rate = 2;
  o.raw = true;
  o.warmup_seconds = 0.2;
  o.ceiling_seconds = 0;
  const auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 1);
  const auto& s = r.sensors[0];
  // 10 Hz at twice real time for 1.2 s: 24 frames, the first at once.
  CHECK(s.frames_sent >= 23);
  CHECK(s.frames_sent <= 26);
  CHECK(s.daemon_datagrams_in == s.datagrams_sent);
  // Every frame is processed or, when input outruns processing, dropped whole and counted.
  CHECK(s.daemon_frames_processed + s.daemon_frames_dropped == s.frames_sent);
  CHECK(s.frames_out > 0);
  // At full speed a VLP-16 frame takes a few milliseconds of its 50: all of them come out.
  if (!test::kSanitized) CHECK(s.frames_out == s.frames_sent);
  CHECK(r.ceiling_rays_per_s == 0);
}
