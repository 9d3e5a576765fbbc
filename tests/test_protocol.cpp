// The wire protocol: verification before use, every malformed datagram a counted error value.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/daemon/runtime/frame_order.hpp"
#include "lidaremu/daemon/runtime/packet_queue.hpp"
#include "lidaremu/daemon/runtime/pending_batches.hpp"
#include "lidaremu/protocol/raw_rows.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

using namespace lidaremu;
using protocol::BatchError;

namespace {
std::vector<float> wall_rows(std::uint32_t columns, std::uint16_t channels, float material = 8) {
  std::vector<float> rows;
  for (std::uint32_t c = 0; c < columns; ++c)
    for (std::uint16_t ch = 0; ch < channels; ++ch)
      rows.insert(rows.end(), {10, 0.1f * ch, 1, -1, 0, 0, material});
  return rows;
}
}  // namespace

TEST_CASE("A well-formed HitBatch decodes with every header field", "[protocol]") {
  clients::BatchHeader h{.sensor_id = 3,
                         .frame = 77,
                         .first_column = 10,
                         .column_count = 2,
                         .rays_per_beam = 1,
                         .segments_per_path = 1,
                         .floats_per_row = 7,
                         .sim_time_ns = 123456789};
  const auto rows = wall_rows(2, 16);
  const auto bytes = clients::build_hit_batch(h, rows);
  CHECK(protocol::identify(bytes) == protocol::MessageKind::kHitBatch);
  protocol::BatchView v;
  REQUIRE(protocol::decode_hit_batch(bytes, v) == BatchError::kNone);
  CHECK(v.sensor_id == 3);
  CHECK(v.frame == 77);
  CHECK(v.first_column == 10);
  CHECK(v.column_count == 2);
  CHECK(v.sim_time_ns == 123456789);
  CHECK(v.rows.size() == rows.size());
  CHECK(protocol::check_batch_shape(v, 1808, 16) == BatchError::kNone);
}

TEST_CASE("Malformed datagrams are refused with a reason, never read", "[protocol][hostile]") {
  clients::BatchHeader h{.column_count = 2};
  const auto good = clients::build_hit_batch(h, wall_rows(2, 16));
  protocol::BatchView v;

  SECTION("truncated") {
    CHECK(protocol::decode_hit_batch(std::span(good).first(4), v) == BatchError::kTooShort);
    // Every truncation of a valid message is refused, none crashes.
    for (std::size_t n = 8; n < good.size(); n += 7) {
      INFO("length " << n);
      CHECK(protocol::decode_hit_batch(std::span(good).first(n), v) != BatchError::kNone);
    }
  }
  SECTION("wrong file identifier") {
    auto bad = good;
    bad[4] = 'X';
    CHECK(protocol::decode_hit_batch(bad, v) == BatchError::kUnknownIdentifier);
  }
  SECTION("verification failure: an offset pointing outside the buffer") {
    auto bad = good;
    bad[0] = 0xF0;
    bad[1] = 0xFF;
    CHECK(protocol::decode_hit_batch(bad, v) == BatchError::kVerifyFailed);
  }
  SECTION("row count disagrees with the header") {
    h.column_count = 3;  // rows for 2 columns
    REQUIRE(protocol::decode_hit_batch(clients::build_hit_batch(h, wall_rows(2, 16)), v) ==
            BatchError::kNone);
    CHECK(protocol::check_batch_shape(v, 1808, 16) == BatchError::kRowCountMismatch);
  }
  SECTION("columns beyond the frame") {
    h.first_column = 1807;
    REQUIRE(protocol::decode_hit_batch(clients::build_hit_batch(h, wall_rows(2, 16)), v) ==
            BatchError::kNone);
    CHECK(protocol::check_batch_shape(v, 1808, 16) == BatchError::kColumnsOutOfRange);
  }
  SECTION("zero rays per beam") {
    h.rays_per_beam = 0;
    CHECK(protocol::decode_hit_batch(clients::build_hit_batch(h, wall_rows(2, 16)), v) ==
          BatchError::kBadLayout);
  }
  SECTION("a Control message is not a HitBatch") {
    CHECK(protocol::decode_hit_batch(clients::build_control({}), v) ==
          BatchError::kUnknownIdentifier);
  }
}

TEST_CASE("Bad rows are counted and never disturb their neighbours", "[protocol][hostile]") {
  const auto materials = core::MaterialTable::load(test::materials_path());
  auto rows = wall_rows(1, 16);
  rows[0 * 7 + 0] = std::numeric_limits<float>::quiet_NaN();
  rows[1 * 7 + 4] = std::numeric_limits<float>::infinity();
  rows[2 * 7 + 6] = 999;    // unknown material
  rows[3 * 7 + 6] = 0;      // no hit, by contract
  rows[4 * 7 + 0] = 1e30f;  // absurd range
  rows[5 * 7 + 3] = 0;      // normal of length 0
  rows[5 * 7 + 4] = 0;
  rows[5 * 7 + 5] = 0;
  rows[6 * 7 + 6] = 2.5f;  // material ids are whole numbers
  rows[7 * 7 + 0] = 0;     // a hit at the origin (zero range): stored uncounted before
  rows[7 * 7 + 1] = 0;
  rows[7 * 7 + 2] = 0;
  clients::BatchHeader h{.column_count = 1};
  protocol::BatchView v;
  const auto bytes = clients::build_hit_batch(h, rows);
  REQUIRE(protocol::decode_hit_batch(bytes, v) == BatchError::kNone);
  core::FrameHits frame;
  frame.reshape({1808, 16});
  const auto counts =
      protocol::store_batch(v, *protocol::engine_conventions("ros"), materials, frame);
  CHECK(counts.non_finite == 2);
  CHECK(counts.unknown_material == 2);
  CHECK(counts.no_hit == 1);
  CHECK(counts.out_of_range == 3);
  CHECK(counts.stored == 8);
  for (int ch = 8; ch < 16; ++ch) {
    CHECK(frame.material[ch] == 8);
    CHECK(frame.x[ch] == 10.0f);
  }
  for (int ch = 0; ch < 8; ++ch) CHECK(frame.material[ch] == 0);
}

TEST_CASE("Engine conventions convert once at ingest", "[protocol]") {
  const auto unreal = *protocol::engine_conventions("unreal");
  // Unreal: 1000 cm forward, 200 cm to the right, 50 cm up.
  const Eigen::Vector3d p = unreal.point({1000, 200, 50});
  CHECK(p.isApprox(Eigen::Vector3d(10, -2, 0.5)));
  const auto unity = *protocol::engine_conventions("unity");
  // Unity: x right, y up, z forward, metres.
  CHECK(unity.point({2, 0.5, 10}).isApprox(Eigen::Vector3d(10, -2, 0.5)));
  const auto godot = *protocol::engine_conventions("godot");
  // Godot: x right, y up, a node looks along its -z, metres; its axes stay right-handed.
  CHECK(godot.point({2, 0.5, -10}).isApprox(Eigen::Vector3d(10, -2, 0.5)));
  CHECK(godot.axes.determinant() == Approx(1.0));
  CHECK_FALSE(protocol::engine_conventions("blender"));
  // A pose rotated 90 degrees about the up axis in Unity stays a proper rotation.
  const auto pose = unity.pose(
      {0, 0, 0}, Eigen::Quaterniond(Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitY())));
  CHECK(pose.linear().determinant() == Approx(1.0));
}

TEST_CASE("Raw rows: beam from direction, material 0 skipped, new frame at the azimuth wrap",
          "[protocol]") {
  const auto materials = core::MaterialTable::load(test::materials_path());
  const auto pattern = *core::make_rpm_scan(*core::find_sensor_model("vlp16"), 600).pattern;
  const core::BeamGeometry geometry(pattern);
  protocol::RawRowAssembler raw(geometry, 7, {});
  std::vector<float> rows;
  auto add = [&](std::uint32_t column, std::uint16_t channel, float material) {
    const auto ray = geometry.ray(column, channel);
    const Eigen::Vector3d p = 20.0 * ray.direction;
    rows.insert(rows.end(), {float(p.x()), float(p.y()), float(p.z()), float(-ray.direction.x()),
                             float(-ray.direction.y()), float(-ray.direction.z()), material});
  };
  add(1800, 3, 8);
  add(1807, 5, 8);
  add(2, 5, 0);  // no hit
  add(3, 9, 8);  // wrapped: next frame
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(rows.data()),
                                            rows.size() * 4);  // NOLINT
  CHECK(raw.check(bytes.first(27)) == BatchError::kRawSizeNotRows);
  REQUIRE(raw.check(bytes) == BatchError::kNone);
  core::FrameHits a, b;
  a.reshape({1808, 16});
  b.reshape({1808, 16});
  core::FrameHits* current = &a;
  int wraps = 0;
  const auto counts =
      raw.store(bytes, *protocol::engine_conventions("ros"), materials, current, [&] {
        ++wraps;
        current = &b;
      });
  CHECK(wraps == 1);
  CHECK(counts.stored == 3);
  CHECK(counts.no_hit == 1);
  CHECK(a.material[a.shape.beam(1800, 3)] == 8);
  CHECK(a.material[a.shape.beam(1807, 5)] == 8);
  CHECK(b.material[b.shape.beam(3, 9)] == 8);
  CHECK(b.columns_received == 1);
}

TEST_CASE("Control messages decode, and hostile values are refused", "[protocol]") {
  protocol::ControlView c;
  REQUIRE(protocol::decode_control(
              clients::build_control({.sensor_id = 2, .fog_visibility_m = 150, .pause = true}),
              c) == BatchError::kNone);
  CHECK(c.sensor_id == 2);
  CHECK(c.fog_visibility_m == 150);
  CHECK(c.pause);
  CHECK(protocol::decode_control(
            clients::build_control({.rain_mm_per_h = std::numeric_limits<float>::quiet_NaN()}),
            c) == BatchError::kBadLayout);
}

TEST_CASE("Rays per beam and multi-bounce segments land in their hit slots", "[protocol]") {
  const auto materials = core::MaterialTable::load(test::materials_path());
  // One column of 16 beams, 3 rays each, 2 segments per path, 8-float rows.
  clients::BatchHeader h{
      .column_count = 1, .rays_per_beam = 3, .segments_per_path = 2, .floats_per_row = 8};
  std::vector<float> rows;
  std::vector<std::uint32_t> ids;
  for (int ch = 0; ch < 16; ++ch) {
    for (int ray = 0; ray < 3; ++ray) {
      // Segment 0: metal at 10 m + ray; segment 1: a wall, or padding (material 0) on ray 2.
      rows.insert(rows.end(), {10.0f + ray, 0.1f * ch, 0, -1, 0, 0, 3, 0});
      rows.insert(rows.end(), {10.0f + ray, 5, 0, 0, -1, 0, ray == 2 ? 0.0f : 8.0f, 26.5f});
      ids.push_back(100 + ray);
      ids.push_back(200 + ray);
    }
  }
  protocol::BatchView v;
  const auto bytes = clients::build_hit_batch(h, rows, ids);  // the view points into these
  REQUIRE(protocol::decode_hit_batch(bytes, v) == BatchError::kNone);
  core::FrameHits frame;
  frame.reshape({1808, 16}, {3, 2});
  const auto counts =
      protocol::store_batch(v, *protocol::engine_conventions("ros"), materials, frame);
  CHECK(counts.stored == std::size_t{16} * 5);
  CHECK(counts.no_hit == 16);  // the padding ends ray 2's path
  const std::size_t beam = 4;
  CHECK(frame.x[frame.hit(beam, 1, 0)] == 11.0f);
  CHECK(frame.material[frame.hit(beam, 1, 0)] == 3);
  CHECK(frame.material[frame.hit(beam, 1, 1)] == 8);
  CHECK(frame.angle_deg[frame.hit(beam, 1, 1)] == 26.5f);
  CHECK(frame.object_id[frame.hit(beam, 1, 1)] == 201);
  CHECK(frame.material[frame.hit(beam, 2, 1)] == 0);
  // A sensor configured for fewer rays and segments keeps the centre ray's first segment.
  core::FrameHits narrow;
  narrow.reshape({1808, 16});
  protocol::store_batch(v, *protocol::engine_conventions("ros"), materials, narrow);
  CHECK(narrow.x[beam] == 10.0f);
  CHECK(narrow.material[beam] == 3);
  CHECK(narrow.object_id[beam] == 100);
}

TEST_CASE("World-frame batches carry the sensor pose into the frame", "[protocol]") {
  const auto pattern = *core::make_rpm_scan(*core::find_sensor_model("vlp16"), 600).pattern;
  core::FrameHits frame;
  frame.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame), 16});
  frame.clear(0);
  // The sensor stands at (5, 0, 2); a wall 10 m ahead of it in the world is 10 m ahead of it.
  clients::BatchHeader h{
      .first_column = 40, .column_count = 1, .world_frame = true, .position = {5, 0, 2}};
  std::vector<float> rows;
  for (int ch = 0; ch < 16; ++ch) rows.insert(rows.end(), {15, 0, 2, -1, 0, 0, 8});
  const auto bytes = clients::build_hit_batch(h, rows);
  protocol::BatchView v;
  REQUIRE(protocol::decode_hit_batch(bytes, v) == BatchError::kNone);
  const auto materials = core::MaterialTable::load(test::materials_path());
  const auto engine = *protocol::engine_conventions("ros");
  protocol::store_batch(v, engine, materials, frame);
  REQUIRE(frame.has_pose);
  CHECK(frame.pose_column == 40);
  CHECK(frame.world_from_sensor.translation().isApprox(Eigen::Vector3d(5, 0, 2)));
  const std::size_t hit = frame.hit(frame.shape.beam(40, 0), 0, 0);
  CHECK(frame.x[hit] == Approx(10));
  CHECK(frame.z[hit] == Approx(0).margin(1e-6));
  // A second world-frame batch of the same frame keeps the first pose.
  h.first_column = 41;
  h.position = {6, 0, 2};
  // The view points into the datagram: keep it alive while the batch is stored.
  const auto second = clients::build_hit_batch(h, rows);
  REQUIRE(protocol::decode_hit_batch(second, v) == BatchError::kNone);
  protocol::store_batch(v, engine, materials, frame);
  CHECK(frame.pose_column == 40);
  frame.clear(1);
  CHECK_FALSE(frame.has_pose);
}

TEST_CASE("Object ids must be one per row", "[protocol][hostile]") {
  const auto rows = wall_rows(2, 16);
  protocol::BatchView v;
  const auto too_few =
      clients::build_hit_batch({.column_count = 2}, rows, std::vector<std::uint32_t>(31, 7));
  REQUIRE(protocol::decode_hit_batch(too_few, v) == BatchError::kNone);
  CHECK(protocol::check_batch_shape(v, 1808, 16) == BatchError::kObjectIdsMismatch);
  const auto one_each =
      clients::build_hit_batch({.column_count = 2}, rows, std::vector<std::uint32_t>(32, 7));
  REQUIRE(protocol::decode_hit_batch(one_each, v) == BatchError::kNone);
  CHECK(protocol::check_batch_shape(v, 1808, 16) == BatchError::kNone);
}

TEST_CASE("Frame numbering: next, late, a restart or a stray, across the counter's wrap",
          "[protocol][daemon]") {
  using daemon::frame_order;
  using daemon::FrameOrder;
  CHECK(frame_order(7, 7) == FrameOrder::kSame);
  CHECK(frame_order(8, 7) == FrameOrder::kNext);
  CHECK(frame_order(7 + daemon::kAheadWindow, 7) == FrameOrder::kNext);  // a few skipped
  CHECK(frame_order(6, 7) == FrameOrder::kStale);                        // late batches
  CHECK(frame_order(7 - daemon::kStaleWindow, 7) == FrameOrder::kStale);
  CHECK(frame_order(1007, 7) == FrameOrder::kResequence);  // a stray far ahead
  CHECK(frame_order(0, 5000) == FrameOrder::kResequence);  // the engine restarted
  CHECK(frame_order(5000, 1007) == FrameOrder::kResequence);
  // The counter wraps: 0 follows 0xFFFFFFFF, which is late after 1.
  CHECK(frame_order(0, 0xFFFFFFFFu) == FrameOrder::kNext);
  CHECK(frame_order(0xFFFFFFFFu, 1) == FrameOrder::kStale);
}

TEST_CASE("The packet queue keeps order, refuses a packet larger than its slots, holds back",
          "[daemon][hostile]") {
  daemon::PacketQueue queue(2, 8);
  const std::vector<std::uint8_t> fits{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<std::uint8_t> too_large(9, 0xee);
  CHECK(queue.put(fits, {core::PacketChannel::kData, 1.5, 7, 0}));
  // One byte more than a slot: refused as a value, nothing queued, nothing written.
  CHECK_FALSE(queue.put(too_large, {core::PacketChannel::kData, 2.0, 7, 0}));
  CHECK(queue.queued() == 1);
  CHECK(queue.put(std::span(fits).first(3), {core::PacketChannel::kTelemetry, 2.5, 8, 42}));
  // Both slots are taken: a third packet waits until the sender gives one back.
  std::atomic<bool> third_in{false};  // Catch2 asserts on the test's thread only
  std::thread producer([&] {
    third_in = queue.put(std::span(fits).last(2), {core::PacketChannel::kData, 3.0, 9, 0});
    queue.end();
  });
  daemon::PacketSlot* first = queue.take();
  REQUIRE(first != nullptr);
  CHECK(std::vector<std::uint8_t>(first->packet().begin(), first->packet().end()) == fits);
  CHECK(first->sensor_time_s == 1.5);
  CHECK_FALSE(third_in.load());
  queue.give_back(first);
  daemon::PacketSlot* second = queue.take();
  REQUIRE(second != nullptr);
  CHECK(second->size == 3);
  CHECK(second->channel == core::PacketChannel::kTelemetry);
  CHECK(second->frame_sequence == 8);
  CHECK(second->frame_input_done_ns == 42);
  queue.give_back(second);
  daemon::PacketSlot* third = queue.take();
  REQUIRE(third != nullptr);
  CHECK(third->packet()[0] == 7);
  queue.give_back(third);
  CHECK(queue.take() == nullptr);  // the end
  producer.join();
  CHECK(third_in.load());
}

TEST_CASE("A pose absurdly far away is refused, in a Control and in a world-frame batch",
          "[protocol][hostile]") {
  // The audit: a pose of 1e38 made the IMU packets carry -inf.
  protocol::ControlView c;
  protocol::ControlView far{.has_pose = true,
                            .pose_position = Eigen::Vector3d(1e38, 0, 0),
                            .pose_orientation = Eigen::Quaterniond::Identity()};
  CHECK(protocol::decode_control(clients::build_control(far), c) ==
        protocol::BatchError::kBadLayout);
  far.pose_position = Eigen::Vector3d(1e6, -2e5, 30);  // a big world, but a world
  CHECK(protocol::decode_control(clients::build_control(far), c) == protocol::BatchError::kNone);
  CHECK(c.pose_position.x() == 1e6);
  std::vector<float> rows(std::size_t{16} * 7, 0.0f);
  clients::BatchHeader h{.column_count = 1, .world_frame = true, .position = {3e30f, 0, 0}};
  protocol::BatchView view;
  CHECK(protocol::decode_hit_batch(clients::build_hit_batch(h, rows), view) ==
        protocol::BatchError::kBadLayout);
}

TEST_CASE("A batch's frame facts and its rows, apart: each column keeps its first copy",
          "[protocol][ingest]") {
  // The daemon's input thread takes a batch's frame facts (columns received, the first
  // world-frame batch's pose) as it arrives and keeps its bytes (daemon::PendingBatches); the
  // rows go in later, many batches at once, each only into the columns it brought first.
  const auto materials = core::MaterialTable::load(test::materials_path());
  const auto engine = *protocol::engine_conventions("ros");
  const auto near =
      clients::build_hit_batch({.first_column = 10, .column_count = 2}, wall_rows(2, 16));
  auto far_rows = wall_rows(3, 16);
  for (std::size_t i = 0; i < far_rows.size(); i += 7) far_rows[i] = 20.0f;
  // Columns 11..13, sent after the first: 11 is a repeat, 12 and 13 are new.
  const auto overlapping =
      clients::build_hit_batch({.first_column = 11, .column_count = 3}, far_rows);
  core::FrameHits frame;
  frame.reshape({1808, 16});
  daemon::PendingBatches pending;
  pending.reserve(1808, 16);
  protocol::BatchView a, b;
  REQUIRE(protocol::decode_hit_batch(near, a) == BatchError::kNone);
  REQUIRE(protocol::decode_hit_batch(overlapping, b) == BatchError::kNone);
  protocol::take_batch_frame_facts(a, engine, frame);
  REQUIRE(pending.append(near, a.first_column, a.column_count));
  protocol::take_batch_frame_facts(b, engine, frame);
  REQUIRE(pending.append(overlapping, b.first_column, b.column_count));
  CHECK(frame.columns_received == 4);
  CHECK(pending.count() == 2);
  const auto owner = pending.first_copy_of();
  CHECK(owner[10] == 0);
  CHECK(owner[11] == 0);
  CHECK(owner[12] == 1);
  CHECK(owner[13] == 1);
  // Nothing stored yet: the frame's facts only.
  CHECK(frame.material[frame.hit(frame.shape.beam(10, 0), 0, 0)] == 0);
  // Converted in the other order (as parallel workers may): the first copies stay.
  const auto later = protocol::store_batch_rows(b, engine, materials, frame, {owner, 1});
  const auto earlier = protocol::store_batch_rows(a, engine, materials, frame, {owner, 0});
  CHECK(later.stored == 2 * 16);
  CHECK(earlier.stored == 2 * 16);
  const auto x_of = [&](std::uint32_t column) {
    return frame.x[frame.hit(frame.shape.beam(column, 3), 0, 0)];
  };
  CHECK(x_of(10) == 10.0f);
  CHECK(x_of(11) == 10.0f);
  CHECK(x_of(12) == 20.0f);
  CHECK(x_of(13) == 20.0f);
  // store_batch is both halves at once, every column.
  core::FrameHits whole;
  whole.reshape({1808, 16});
  CHECK(protocol::store_batch(b, engine, materials, whole).stored == 3 * 16);
  CHECK(whole.columns_received == 3);

  // Bounded: a frame's room is its columns' rows and framing; a batch past it is refused (the
  // input thread then converts it itself).
  daemon::PendingBatches small;
  small.reserve(4, 16);
  const auto big = clients::build_hit_batch({.column_count = 4}, wall_rows(4, 16));
  CHECK(big.size() < 4 * (16 * daemon::PendingBatches::kBytesPerRow +
                          daemon::PendingBatches::kFramingBytesPerColumn));
  CHECK(small.append(big, 0, 4));
  CHECK_FALSE(small.append(big, 0, 4));
  small.clear();
  CHECK(small.count() == 0);
  CHECK(small.append(big, 0, 4));
}

namespace {
// The row conversion as the daemon did it before its lanes, one row at a time in Eigen's double
// arithmetic, with the plausibility bounds docs/hostile-input.md states (|p| from 1 mm to 100 km,
// a normal longer than 1e-6); the checks in that order, the first failure counted.
bool scalar_row(const float* v, const protocol::EngineConventions& engine,
                const Eigen::Isometry3d* world_to_sensor, const core::MaterialTable& materials,
                protocol::RowCounts& counts, Eigen::Vector3d& point, Eigen::Vector3d& normal,
                std::uint16_t& material) {
  for (int k = 0; k < 7; ++k) {
    if (!std::isfinite(v[k])) {
      ++counts.non_finite;
      return false;
    }
  }
  if (v[6] == 0.0f) {
    ++counts.no_hit;
    return false;
  }
  if (v[6] < 0 || v[6] > core::MaterialTable::kMaxId || v[6] != std::floor(v[6]) ||
      !materials.find(static_cast<std::uint16_t>(v[6]))) {
    ++counts.unknown_material;
    return false;
  }
  point = engine.point({v[0], v[1], v[2]});
  normal = engine.direction({v[3], v[4], v[5]});
  if (world_to_sensor) {
    point = *world_to_sensor * point;
    normal = world_to_sensor->linear() * normal;
  }
  const double normal_length = normal.norm();
  const double range = point.norm();
  if (!(range < 1e5) || !(range >= 1e-3) || !(normal_length > 1e-6)) {
    ++counts.out_of_range;
    return false;
  }
  normal /= normal_length;
  material = static_cast<std::uint16_t>(v[6]);
  return true;
}
}  // namespace

TEST_CASE(
    "Rows converted in lanes are the scalar conversion's floats and counts, on every "
    "instruction set",
    "[protocol][simd][determinism]") {
  // scalar_row (above) is the reference; store_batch_rows converts in double lanes
  // (core::simd::rows_to_sensor); raw rows take the same path (test_raw_glue: the same hits).
  // Random rows in every engine's units, in the sensor's frame and in the world's under a tilted
  // pose, and hostile rows among them.
  const auto materials = core::MaterialTable::load(test::materials_path());
  constexpr std::uint16_t kChannels = 32;
  constexpr std::uint32_t kColumns = 40;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> coordinate(-300.0f, 300.0f);
  std::uniform_int_distribution<int> pick(0, 29);
  std::vector<float> rows;
  for (std::size_t r = 0; r < std::size_t{kColumns} * kChannels; ++r) {
    std::array<float, 7> v{coordinate(random),
                           coordinate(random),
                           coordinate(random),
                           coordinate(random),
                           coordinate(random),
                           coordinate(random),
                           8};
    switch (pick(random)) {
      case 0:
        v[pick(random) % 7] = std::numeric_limits<float>::quiet_NaN();
        break;
      case 1:
        v[pick(random) % 6] = -std::numeric_limits<float>::infinity();
        break;
      case 2:
        v[6] = 0;
        break;  // no hit
      case 3:
        v[6] = 2.5f;
        break;  // not a whole id
      case 4:
        v[3] = v[4] = v[5] = 0;
        break;  // no normal
      case 5:
        v[0] = v[1] = v[2] = 0;
        break;  // at the origin
      case 6:
        v[0] = 3e29f;
        break;  // absurd range
      case 7:
        v[0] = -0.0f, v[1] = 0.0f;
        break;  // signed zeros
      case 8:
        v[3] = 1e-9f, v[4] = v[5] = 0;
        break;  // a normal too short to have a direction
      default:
        break;
    }
    rows.insert(rows.end(), v.begin(), v.end());
  }
  struct Case {
    const char* engine;
    bool world;
  };
  const auto targets = core::simd::available_targets();
  for (const Case& c :
       {Case{"ros", false}, Case{"unreal", false}, Case{"unity", false}, Case{"godot", false},
        Case{"ros", true}, Case{"unreal", true}, Case{"godot", true}}) {
    const auto engine = *protocol::engine_conventions(c.engine);
    clients::BatchHeader h{.column_count = kColumns,
                           .world_frame = c.world,
                           .position = {12.5f, -3.25f, 1.75f},
                           .orientation_xyzw = {0.0871557f, 0.0435779f, 0.258819f, 0.9610f}};
    const auto bytes = clients::build_hit_batch(h, rows);
    protocol::BatchView v;
    REQUIRE(protocol::decode_hit_batch(bytes, v) == BatchError::kNone);
    // The reference: each row alone, as the scalar code converts it.
    Eigen::Isometry3d world_to_sensor;
    if (c.world) world_to_sensor = engine.pose(v.pose_position, v.pose_orientation).inverse();
    protocol::RowCounts expected_counts;
    std::vector<float> expected;
    for (std::size_t r = 0; r < rows.size() / 7; ++r) {
      Eigen::Vector3d p, n;
      std::uint16_t material = 0;
      if (!scalar_row(&rows[r * 7], engine, c.world ? &world_to_sensor : nullptr, materials,
                      expected_counts, p, n, material)) {
        expected.insert(expected.end(), 6, 0.0f);
        continue;
      }
      ++expected_counts.stored;
      for (double x : {p.x(), p.y(), p.z(), n.x(), n.y(), n.z()})
        expected.push_back(static_cast<float>(x));
    }
    for (const auto& target : targets) {
      core::simd::use_target(target);
      INFO(c.engine << (c.world ? " world rows" : " sensor rows") << " on " << target);
      core::FrameHits frame;
      frame.reshape({kColumns, kChannels});
      const auto counts = protocol::store_batch(v, engine, materials, frame);
      CHECK(counts.stored == expected_counts.stored);
      CHECK(counts.non_finite == expected_counts.non_finite);
      CHECK(counts.no_hit == expected_counts.no_hit);
      CHECK(counts.unknown_material == expected_counts.unknown_material);
      CHECK(counts.out_of_range == expected_counts.out_of_range);
      std::size_t different = 0;
      for (std::size_t r = 0; r < rows.size() / 7; ++r) {
        if (frame.material[r] == 0) continue;
        const float got[6] = {frame.x[r],  frame.y[r],  frame.z[r],
                              frame.nx[r], frame.ny[r], frame.nz[r]};
        different += std::memcmp(got, &expected[r * 6], sizeof(got)) != 0;
      }
      CHECK(different == 0);
    }
  }
  core::simd::use_target("best");
}
