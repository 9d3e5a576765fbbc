// The engine examples against the real daemon: the C example (through liblidaremu_client.so),
// the engine-less Python example (ctypes over the same library, in ROS and Unity axes) and the
// CARLA bridge fed a semantic-lidar stream in CARLA's own frame. Each run's first whole frame is
// exported with object ids; every object must come out where its example put it, in the
// drivers' frame (x forward, y left, z up).
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <span>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/cloud_export.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {

// What a sanitized build's shared library needs inside a plain python3 process: the sanitizer's
// runtime first, and libstdc++ (python3 does not link it) for its exception interceptors.
std::string sanitizer_preload() {
#if defined(__SANITIZE_ADDRESS__)
  return "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libstdc++.so) "
         "ASAN_OPTIONS=detect_leaks=0 ";
#elif defined(__SANITIZE_THREAD__)
  return "LD_PRELOAD=$(gcc -print-file-name=libtsan.so):$(gcc -print-file-name=libstdc++.so) ";
#else
  return "";
#endif
}

// Runs `command` (with HITS replaced by the daemon's hit address) against a fresh daemon that
// exports its first whole frame; returns the points by object id.
std::map<std::uint32_t, std::vector<core::CloudPoint>> run_example(const std::string& command,
                                                                   const std::string& model) {
  const std::string dir = "/tmp/lidaremu-e2e-example-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  test::DaemonProcess daemon({"--model", model, "--hits", "udp://127.0.0.1:0", "--out",
                              "udp://127.0.0.1:9", "--physics", "ideal", "--api-port", "0",
                              "--http", "off", "--foxglove", "off", "--export", dir,
                              "--export-frames", "1"});
  std::string line = command;
  const std::string hits = "udp://127.0.0.1:" + std::to_string(daemon.hits_port());
  line.replace(line.find("HITS"), 4, hits);
  const std::string env = "PYTHONPATH=" LIDAREMU_TEST_CLIENT_PYTHON
                          " LIDAREMU_CLIENT_LIB=" LIDAREMU_TEST_CLIENT_LIB " " +
                          sanitizer_preload();
  INFO(env + line);
  REQUIRE(std::system((env + line + " > " + dir + ".log 2>&1").c_str()) == 0);
  // The frame's file, once written: at once here, seconds later in a sanitized daemon.
  const auto deadline = std::chrono::steady_clock::now() + (test::kSanitized ? 60s : 10s);
  const auto written = [&] {
    return std::filesystem::exists(dir) && !std::filesystem::is_empty(dir);
  };
  while (!written() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(300ms);
  CHECK(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_rows_non_finite_total{sensor=\"" + model + "-0\"}") == 0);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  std::map<std::uint32_t, std::vector<core::CloudPoint>> by_object;
  for (const auto& p : core::read_pcd(files[0].string()).points)
    by_object[p.object_id].push_back(p);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(dir + ".log");
  return by_object;
}

// Every point of the object satisfies `where`, and there are at least `at_least` of them.
template <typename Where>
void check_object(const std::map<std::uint32_t, std::vector<core::CloudPoint>>& by_object,
                  std::uint32_t id, std::size_t at_least, Where where) {
  INFO("object " << id);
  REQUIRE(by_object.contains(id));
  CHECK(by_object.at(id).size() >= at_least);
  std::size_t wrong = 0;
  for (const auto& p : by_object.at(id)) wrong += where(p) ? 0 : 1;
  CHECK(wrong == 0);
}

bool near(float value, float want, float tolerance) { return std::fabs(value - want) <= tolerance; }

// The engine harnesses' scene (tests/engines), in the drivers' frame: the sensor 1.8 m over a
// road, a wall 10 m ahead, and a box 5 m to the right (its face y = -5, x 4..6, 2 m high).
struct EngineYardIds {
  std::uint32_t road, wall, box;
};
void check_engine_yard(const std::map<std::uint32_t, std::vector<core::CloudPoint>>& by_object,
                       EngineYardIds ids) {
  CHECK(by_object.size() == 3);
  check_object(by_object, ids.road, 1000, [](const auto& p) { return near(p.z, -1.8f, 0.01f); });
  check_object(by_object, ids.wall, 100, [](const auto& p) { return near(p.x, 10.0f, 0.01f); });
  check_object(by_object, ids.box, 20, [](const auto& p) {
    return near(p.y, -5.0f, 0.01f) && p.x >= 3.99f && p.x <= 6.01f && p.z >= -1.81f && p.z <= 0.21f;
  });
}

}  // namespace

TEST_CASE("The C example: a wall 10 m ahead and the road, cast in Unreal units and axes",
          "[e2e][engines][c]") {
  const auto objects = run_example(LIDAREMU_TEST_EXAMPLE_C " HITS 6", "vlp16");
  CHECK(objects.size() == 2);
  check_object(objects, 1, 1000, [](const auto& p) { return near(p.x, 10.0f, 0.01f); });
  check_object(objects, 2, 5000, [](const auto& p) { return near(p.z, -1.8f, 0.01f); });
}

TEST_CASE("The engine-less Python example, in ROS and in Unity axes, any model",
          "[e2e][engines][python]") {
  for (const auto& [model, engine] : {std::pair{"vlp16", "ros"}, std::pair{"os1-32", "unity"}}) {
    INFO(model << " " << engine);
    const auto objects =
        run_example(std::string("python3 " LIDAREMU_TEST_CLIENT_PYTHON "/examples/no_engine.py "
                                "--hits HITS --frames 6 --model ") +
                        model + " --engine " + engine,
                    model);
    // The pose places the sensor frame (the Ouster's base, not its lidar origin) 1.8 m up.
    check_object(objects, 1, 1000, [](const auto& p) { return near(p.z, -1.8f, 0.02f); });
    check_object(objects, 2, 100, [](const auto& p) { return near(p.x, 15.0f, 0.02f); });
    // The box to the right (y from -7 to -5 m: negative is right in the drivers' frame).
    check_object(objects, 3, 20, [](const auto& p) {
      return p.y >= -7.02f && p.y <= -4.98f && p.x >= 3.98f && p.x <= 6.02f;
    });
  }
}

TEST_CASE("The Unreal component, ticked as Unreal ticks it: road, wall and box in Unreal units",
          "[e2e][engines][unreal]") {
  // clients/engines/unreal's ULidaremuLidarComponent itself, compiled against the part of UE5's
  // API it uses (tests/engines/unreal/include) and driven by harness.cpp: BeginPlay, a tick each
  // 1/60 s, EndPlay; its traces, material maps and actor ids through the C ABI.
  const auto objects = run_example(LIDAREMU_TEST_UNREAL_HARNESS " HITS 6", "vlp16");
  // Actor ids 21 road, 22 wall, 23 box (the vehicle, 20, is never hit). Unreal's y is right.
  check_engine_yard(objects, {.road = 21, .wall = 22, .box = 23});
}

TEST_CASE("The Unity script, run as Unity runs it: a road, a wall and a box in Unity's axes",
          "[e2e][engines][unity]") {
  // clients/engines/unity/LidaremuLidar.cs itself, compiled with mcs against the part of
  // UnityEngine it uses (tests/engines/unity/UnityEngine.cs) and driven by Harness.cs: Start,
  // FixedUpdate each 20 ms physics step, OnDestroy, through its P/Invoke into the C ABI.
  INFO("mono-mcs is missing: bash scripts/setup.sh installs it (mono-mcs, mono-runtime)");
  REQUIRE(std::string(LIDAREMU_TEST_UNITY_HARNESS) != "");
  const auto objects = run_example("LD_LIBRARY_PATH=" LIDAREMU_TEST_CLIENT_LIB_DIR
                                   " mono " LIDAREMU_TEST_UNITY_HARNESS " HITS 6",
                                   "vlp16");
  // The stub numbers objects from 1001 as the harness makes them: the road's collider 1001 (its
  // material 1002), the wall's 1003, the box's 1004. Unity's x is right, z forward, y up.
  check_engine_yard(objects, {.road = 1001, .wall = 1003, .box = 1004});
}

TEST_CASE("The CARLA bridge: semantic lidar in CARLA's frame to hits with tag materials and ids",
          "[e2e][engines][carla]") {
  const auto objects =
      run_example("python3 " LIDAREMU_TEST_SUPPORT_DIR "/carla_feed.py HITS 4", "vlp16");
  CHECK(objects.size() == 3);
  // CARLA's rays and the emulated beams differ by up to half a column and a firing offset in
  // azimuth (~0.15°): the wall is checked where that moves it less than 2 cm.
  check_object(objects, 77, 1000,
               [](const auto& p) { return std::fabs(p.y) > 4.0f || near(p.x, 10.0f, 0.03f); });
  check_object(objects, 5, 5000, [](const auto& p) { return near(p.z, -1.8f, 0.05f); });
  // CARLA's y points right; the car 5 m to the right is at y = -5 for the drivers.
  check_object(objects, 99, 50, [](const auto& p) { return near(p.y, -5.0f, 0.05f); });
}

TEST_CASE("The beam table over HTTP: the rays an engine without the library casts, in its axes",
          "[e2e][engines][http]") {
  test::DaemonProcess daemon({"--model", "vlp16", "--engine", "godot", "--hits",
                              "udp://127.0.0.1:0", "--out", "udp://127.0.0.1:9", "--http",
                              "127.0.0.1:0", "--api-port", "0", "--foxglove", "off"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon) + "/api/v1/sensors/vlp16-0";
  const auto sensor = nlohmann::json::parse(test::http_request("GET", base).body);
  CHECK(sensor["columns_per_frame"] == 1808);
  CHECK(sensor["channels"] == 16);
  CHECK(sensor["engine"] == "godot");
  const auto reply = test::http_request("GET", base + "/beams");
  REQUIRE(reply.status == 200);
  REQUIRE(reply.body.size() == std::size_t{1808} * 16 * 6 * sizeof(float));
  const std::span<const std::uint8_t> bytes(
      reinterpret_cast<const std::uint8_t*>(reply.body.data()), reply.body.size());
  const auto beam = [&](std::uint32_t column, std::uint16_t channel) {
    std::array<float, 6> v{};
    for (std::size_t k = 0; k < 6; ++k) {
      v[k] = core::load_le<float>(bytes, ((std::size_t{column} * 16 + channel) * 6 + k) * 4);
    }
    return v;
  };
  // The VLP-16's manual: lasers 0..15 at -15, +1, -13, +3, ... +15 degrees, one origin; azimuth
  // 0 (the first column) looks ahead, a quarter turn clockwise seen from above looks right. In
  // Godot's axes: up is +y, ahead is -z, right is +x.
  constexpr double kDeg = std::numbers::pi / 180;
  std::size_t wrong = 0;
  for (std::uint32_t c = 0; c < 1808; c += 7) {
    for (std::uint16_t ch = 0; ch < 16; ++ch) {
      const auto v = beam(c, ch);
      const double elevation = (ch % 2 == 0 ? -15.0 + ch : 1.0 + (ch - 1)) * kDeg;
      const double norm = std::hypot(v[3], v[4], v[5]);
      if (std::fabs(norm - 1) > 1e-5 || std::fabs(std::asin(v[4]) - elevation) > 1e-4 ||
          std::hypot(v[0], v[1], v[2]) > 1e-6) {
        ++wrong;
      }
    }
  }
  CHECK(wrong == 0);
  const auto azimuth_deg = [&](std::uint32_t column) {
    const auto v = beam(column, 0);
    return std::atan2(v[3], -v[5]) / kDeg;  // clockwise from ahead, seen from above
  };
  CHECK(azimuth_deg(0) == Approx(0.0).margin(0.2));
  CHECK(azimuth_deg(452) == Approx(90.0).margin(0.3));
  CHECK(test::http_request("PUT", base + "/beams", "{}").status == 405);
  CHECK(test::http_request("GET", test::control_url(daemon) + "/api/v1/sensors/no/beams").status ==
        404);
  CHECK(daemon.stop() == 0);
  // A table scan points elsewhere every frame: no table, and the answer says what to do.
  test::DaemonProcess livox({"--model", "livox-mid360", "--scan-pattern", "test-pattern", "--hits",
                             "udp://127.0.0.1:0", "--out", "udp://127.0.0.1:9", "--http",
                             "127.0.0.1:0", "--api-port", "0", "--foxglove", "off"});
  REQUIRE(livox.wait_for_output("/api/v1/sensors)", 5s));
  const auto table =
      test::http_request("GET", test::control_url(livox) + "/api/v1/sensors/livox-mid360-0/beams");
  CHECK(table.status == 409);
  CHECK_THAT(table.body, Catch::Contains("framed batches"));
  CHECK(livox.stop() == 0);
}
