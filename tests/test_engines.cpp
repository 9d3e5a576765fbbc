// The engine-independent logic every engine plugin shares (clients::SensorRig): beam directions
// in each engine's frame and units, hits back into the sensor frame, the columns due each tick,
// and the batches. Anchored on facts about the engines, not on the code's own conventions: an
// Unreal actor yawed 90° looks along +Y, Unity's forward is +Z and its up +Y, Unreal counts
// centimetres.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <numbers>

#include "lidaremu/clients/sensor_rig.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

using namespace lidaremu;
using Catch::Detail::Approx;

namespace {

// The VLP-16 beam that looks straight ahead: column 0, the laser nearest the horizon (laser 1
// at +1°; its firing offset turns it 0.008° clockwise).
constexpr std::uint32_t kAheadColumn = 0;
constexpr std::uint16_t kAheadLaser = 1;

std::array<double, 4> yaw_quaternion(double degrees) {
  const double half = degrees * std::numbers::pi / 360.0;
  return {0, 0, std::sin(half), std::cos(half)};
}

void check_near(const std::array<double, 3>& got, const std::array<double, 3>& want,
                double tolerance) {
  INFO("got (" << got[0] << ", " << got[1] << ", " << got[2] << "), want (" << want[0] << ", "
               << want[1] << ", " << want[2] << ")");
  for (int k = 0; k < 3; ++k) CHECK(std::fabs(got[k] - want[k]) <= tolerance);
}

}  // namespace

TEST_CASE("Unreal: centimetres, y to the right, yaw turns x toward y", "[engines][unreal]") {
  clients::SensorRig rig("vlp16", 600, "", "unreal");
  rig.set_pose({100, 200, 50}, {0, 0, 0, 1});
  auto ray = rig.ray(kAheadColumn, kAheadLaser);
  check_near(ray.start, {100, 200, 50}, 1e-9);  // VLP-16 beams start at the sensor's origin
  check_near(ray.direction, {1, 0, 0}, 0.02);
  // A quarter of a turn later the head looks to the sensor's left: Unreal's -Y.
  ray = rig.ray(rig.columns() * 3 / 4, kAheadLaser);
  check_near(ray.direction, {0, -1, 0}, 0.02);

  // Yawed 90°: an Unreal actor with yaw 90 looks along +Y.
  rig.set_pose({100, 200, 50}, yaw_quaternion(90));
  ray = rig.ray(kAheadColumn, kAheadLaser);
  check_near(ray.direction, {0, 1, 0}, 0.02);

  // A wall 10 m (1000 cm) along that ray comes back 10 m ahead in the sensor frame (ROS: x
  // forward, y left, z up), facing the sensor.
  const std::array<double, 3> hit{ray.start[0] + 1000 * ray.direction[0],
                                  ray.start[1] + 1000 * ray.direction[1],
                                  ray.start[2] + 1000 * ray.direction[2]};
  REQUIRE(rig.set_hit(kAheadColumn, kAheadLaser, hit, {0, -1, 0}, 8, 42));
  const auto row = rig.row(kAheadColumn, kAheadLaser);
  CHECK(std::hypot(row[0], row[1], row[2]) == Approx(10.0).margin(1e-4));
  CHECK(row[0] == Approx(10.0).margin(0.2));
  CHECK(row[3] == Approx(-1.0).margin(1e-6));  // Unreal -Y seen from a sensor facing +Y: behind
  CHECK(row[6] == 8.0f);
}

TEST_CASE("Unity: metres, y up, z forward, x right", "[engines][unity]") {
  clients::SensorRig rig("vlp16", 600, "", "unity");
  rig.set_pose({0, 1.8, 0}, {0, 0, 0, 1});
  check_near(rig.ray(kAheadColumn, kAheadLaser).direction, {0, 0, 1}, 0.02);
  // The sensor's left (a quarter turn on) is Unity's -X; its up is Unity's +Y.
  check_near(rig.ray(rig.columns() * 3 / 4, kAheadLaser).direction, {-1, 0, 0}, 0.02);
  const auto top = rig.ray(kAheadColumn, 15);  // laser 15: +15° elevation
  CHECK(top.direction[1] == Approx(std::sin(15 * std::numbers::pi / 180)).margin(1e-3));
  // The ground 1.8 m below, hit straight down the Unity y axis, is 1.8 m below the sensor.
  REQUIRE(rig.set_hit(10, 0, {0.5, 0, 3.0}, {0, 1, 0}, 6, 0));
  const auto row = rig.row(10, 0);
  CHECK(row[2] == Approx(-1.8).margin(1e-6));  // up
  CHECK(row[0] == Approx(3.0).margin(1e-6));   // forward = Unity z
  CHECK(row[1] == Approx(-0.5).margin(1e-6));  // Unity x is right, ROS y is left
  CHECK(row[5] == Approx(1.0).margin(1e-6));
}

TEST_CASE("Godot: metres, y up, a node looks along its -z", "[engines][godot]") {
  clients::SensorRig rig("vlp16", 600, "", "godot");
  rig.set_pose({0, 1.8, 0}, {0, 0, 0, 1});
  check_near(rig.ray(kAheadColumn, kAheadLaser).direction, {0, 0, -1}, 0.02);
  // The sensor's left (a quarter turn on) is Godot's -X; its up is Godot's +Y.
  check_near(rig.ray(rig.columns() * 3 / 4, kAheadLaser).direction, {-1, 0, 0}, 0.02);
  // A node turned a quarter turn left about +Y (Godot's yaw) looks along -X.
  const double h = std::sqrt(0.5);
  rig.set_pose({0, 1.8, 0}, {0, h, 0, h});
  check_near(rig.ray(kAheadColumn, kAheadLaser).direction, {-1, 0, 0}, 0.02);
  rig.set_pose({0, 1.8, 0}, {0, 0, 0, 1});
  // The ground 1.8 m below, 3 m ahead and 0.5 m to the right.
  REQUIRE(rig.set_hit(10, 0, {0.5, 0, -3.0}, {0, 1, 0}, 6, 0));
  const auto row = rig.row(10, 0);
  CHECK(row[0] == Approx(3.0).margin(1e-6));   // forward = Godot -z
  CHECK(row[1] == Approx(-0.5).margin(1e-6));  // Godot x is right, ROS y is left
  CHECK(row[2] == Approx(-1.8).margin(1e-6));  // up
  CHECK(row[5] == Approx(1.0).margin(1e-6));
}

TEST_CASE("Rays and hits agree for every model, every engine and any pose", "[engines]") {
  // A model of each family and beam layout: the RoboSense beams leave from the lens centre,
  // moving with the head, and the rig hands the engine that start.
  for (const char* model :
       {"vlp16", "vls128", "hdl64e", "os1-64", "pandar-xt32", "pandar-qt128", "pandar-40p",
        "pandar-ot128", "rs-helios", "rs-bpearl", "rs-bpearl-v3", "rs16", "rs32"}) {
    for (const char* engine : {"ros", "unreal", "unity", "godot"}) {
      INFO(model << " in " << engine);
      clients::SensorRig rig(model, 0, "", engine);
      rig.set_pose({3, -7, 11}, {0.1, 0.2, 0.3, std::sqrt(1 - 0.14)});
      const double unit = std::string(engine) == "unreal" ? 100.0 : 1.0;
      std::size_t wrong = 0;
      for (std::uint32_t c = 0; c < rig.columns(); c += 37) {
        for (std::uint16_t ch = 0; ch < rig.channels(); ch += 5) {
          const auto ray = rig.ray(c, ch);
          const double range = 4.0 + (c % 50);
          std::array<double, 3> hit{};
          for (int k = 0; k < 3; ++k) hit[k] = ray.start[k] + range * unit * ray.direction[k];
          rig.set_hit(c, ch, hit, {-ray.direction[0], -ray.direction[1], -ray.direction[2]}, 8, 1);
          // Back in the sensor frame, the hit lies on that beam: the model's own geometry finds
          // the beam again, and the normal faces the sensor.
          const auto row = rig.row(c, ch);
          const auto [col, chan] = rig.nearest_beam({row[0], row[1], row[2]});
          const Eigen::Vector3d p(row[0], row[1], row[2]), n(row[3], row[4], row[5]);
          if (col != c || chan != ch || n.dot(p.normalized()) > -0.99) ++wrong;
        }
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("A table scan's rays follow the frame: each frame's hits lie on its own beams",
          "[engines][livox]") {
  for (const char* engine : {"ros", "unreal", "unity", "godot"}) {
    INFO(engine);
    clients::SensorRig rig("livox-mid360", 0, "test-pattern", engine);
    rig.set_pose({3, -7, 11}, {0.1, 0.2, 0.3, std::sqrt(1 - 0.14)});
    const core::BeamGeometry geometry(rig.pattern());
    const double unit = std::string(engine) == "unreal" ? 100.0 : 1.0;
    for (int frame = 0; frame < 3; ++frame) {
      CHECK(rig.frame() == static_cast<std::uint32_t>(frame));
      std::size_t wrong = 0, moved = 0;
      for (std::uint32_t c = 0; c < rig.columns(); c += 37) {
        for (std::uint16_t ch = 0; ch < rig.channels(); ++ch) {
          const auto ray = rig.ray(c, ch);
          std::array<double, 3> hit{};
          for (int k = 0; k < 3; ++k) hit[k] = ray.start[k] + 9.0 * unit * ray.direction[k];
          rig.set_hit(c, ch, hit, {-ray.direction[0], -ray.direction[1], -ray.direction[2]}, 8, 1);
          const auto row = rig.row(c, ch);
          const Eigen::Vector3d p(row[0], row[1], row[2]);
          const auto beam = geometry.ray_in_frame(rig.frame(), c, ch).direction;
          wrong += p.normalized().dot(beam) < 0.999999 || std::fabs(p.norm() - 9.0) > 1e-4;
          moved += beam.dot(geometry.ray(c, ch).direction) < 0.99;
        }
      }
      CHECK(wrong == 0);
      if (frame > 0) CHECK(moved > 0);  // the frame's beams are not frame 0's
      rig.next_frame();
    }
  }
}

TEST_CASE("Columns due each engine tick cover the rotation once", "[engines]") {
  clients::SensorRig rig("vlp16", 600, "", "ros");
  // VLP-16 columns are 55.296 µs apart: 19 fire in the first millisecond (0 .. 18).
  CHECK(rig.columns_due(0, 0.001) == std::pair<std::uint32_t, std::uint32_t>{0, 19});
  std::uint32_t next = 0;
  for (int tick = 0; tick / 60.0 < rig.pattern().frame_period_s; ++tick) {
    const auto [first, count] = rig.columns_due(tick / 60.0, (tick + 1) / 60.0);
    CHECK(first == next);
    next = first + count;
  }
  CHECK(next == rig.columns());
  CHECK(rig.columns_due(0.2, 0.3).second == 0);  // past the frame's end
}

TEST_CASE("Batches carry the rows, ids, frame and time; bad input is refused", "[engines]") {
  clients::SensorRig rig("os1-64", 0, "512x10", "ros");
  REQUIRE(rig.columns() == 512);
  REQUIRE(rig.set_hit(100, 3, {5, 1, 0}, {-1, 0, 0}, 8, 77));
  CHECK_FALSE(rig.set_hit(512, 0, {5, 1, 0}, {-1, 0, 0}, 8, 1));
  CHECK_FALSE(rig.set_hit(0, 64, {5, 1, 0}, {-1, 0, 0}, 8, 1));
  CHECK_FALSE(rig.set_hit(0, 0, {NAN, 1, 0}, {-1, 0, 0}, 8, 1));
  CHECK_FALSE(rig.set_hit(0, 0, {5, 1, 0}, {0, 0, 0}, 8, 1));
  const auto datagrams = rig.batches(96, 16, 5'000'000'000ull, 3);
  REQUIRE(datagrams.size() == 1);
  protocol::BatchView batch;
  REQUIRE(protocol::decode_hit_batch(datagrams[0], batch) == protocol::BatchError::kNone);
  CHECK(batch.sensor_id == 3);
  CHECK(batch.frame == 0);
  CHECK(batch.first_column == 96);
  CHECK(batch.column_count == 16);
  CHECK(batch.sim_time_ns ==
        5'000'000'000ull + 96 * std::llround(rig.pattern().column_period_s * 1e9));
  const std::size_t at = (4 * 64 + 3);  // column 100 is the 5th of the batch
  CHECK(batch.rows[at * 7] == 5.0f);
  CHECK(batch.object_ids[at] == 77);
  // A whole frame of a 128-channel unit needs several datagrams, each under the UDP limit.
  clients::SensorRig big("os1-128", 0, "2048x10", "ros");
  const auto many = big.batches(0, big.columns(), 0);
  CHECK(many.size() > 1);
  for (const auto& d : many) CHECK(d.size() <= 65507);
  rig.next_frame();
  CHECK(rig.frame() == 1);
  CHECK(rig.row(100, 3)[6] == 0.0f);
  CHECK_THROWS_WITH(clients::SensorRig("vlp99", 0, "", "ros"), Catch::Contains("unknown model"));
  CHECK_THROWS_WITH(clients::SensorRig("vlp16", 0, "", "blender"),
                    Catch::Contains("unknown engine 'blender' (ros, unreal, unity, godot)"));
}

TEST_CASE("Time-sliced ticks send every column of every frame once, across frame ends",
          "[engines]") {
  clients::SensorRig rig("vlp16", 600, "", "ros");
  const double column_ns = rig.pattern().column_period_s * 1e9;
  std::map<std::uint32_t, std::vector<int>> sent;  // frame -> times each column was sent
  for (int tick = 0; tick < 61; ++tick) {          // one second and a bit at 60 Hz
    rig.tick(1.0 / 60);
    std::uint32_t first = 0, count = 0;
    while (rig.next_slice(first, count)) {
      for (const auto& d : rig.finish_slice(5)) {
        protocol::BatchView b;
        REQUIRE(protocol::decode_hit_batch(d, b) == protocol::BatchError::kNone);
        CHECK(b.sensor_id == 5);
        // Simulation time: 1 s, a frame period a frame, a column period a column.
        const double want =
            1e9 * (1.0 + b.frame * rig.pattern().frame_period_s) + b.first_column * column_ns;
        CHECK(std::fabs(static_cast<double>(b.sim_time_ns) - want) < 1000.0 * (b.first_column + 1));
        auto& columns = sent[b.frame];
        columns.resize(rig.columns());
        for (std::uint32_t c = b.first_column; c < b.first_column + b.column_count; ++c) {
          ++columns[c];
        }
      }
    }
  }
  // 61 ticks of 1/60 s are 1.0167 s: ten whole frames, the eleventh begun.
  REQUIRE(sent.size() == 11);
  for (std::uint32_t f = 0; f < 10; ++f) {
    INFO("frame " << f);
    CHECK(std::all_of(sent[f].begin(), sent[f].end(), [](int n) { return n == 1; }));
  }
  CHECK(rig.frame() == 10);
  rig.tick(-1);  // a nonsensical tick adds nothing
  rig.tick(NAN);
  std::uint32_t first = 0, count = 0;
  CHECK_FALSE(rig.next_slice(first, count));
}
