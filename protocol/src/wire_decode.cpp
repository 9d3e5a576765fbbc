#include "lidaremu/protocol/wire_decode.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "lidaremu/protocol/control_generated.h"
#include "lidaremu/protocol/hit_batch_generated.h"

namespace lidaremu::protocol {
namespace {
// Beyond this no lidar reports anything; larger values are an engine bug, not a far hit.
constexpr double kMaxPlausibleRangeM = 1e5;
// A hit at the sensor's own origin (range 0: an engine tracing from inside its collider, or
// zeros for "no hit" with a material set) is no measurement; every sensor's minimum range is
// centimetres or more, so 1 mm separates the two without touching any real hit.
constexpr double kMinPlausibleRangeM = 1e-3;
// A normal shorter than this has no direction (an engine's zero vector for "unknown").
constexpr double kMinNormalLength = 1e-6;
constexpr std::uint8_t kMaxRaysPerBeam = 64;
constexpr std::uint8_t kMaxSegmentsPerPath = 16;

// A row's material: 0 is no hit; anything but a whole id the table knows is refused. Counted.
bool known_material(float value, const core::MaterialTable& materials, RowCounts& counts) {
  if (value == 0.0f) {
    ++counts.no_hit;
    return false;
  }
  // Whole in (0, kMaxId]: the truncated id converts back to the value (no call to floor, which
  // the baseline instruction set leaves to libm: a call per row). NaN fails the range test.
  const bool in_range = value > 0 && value <= core::MaterialTable::kMaxId;
  const auto id = in_range ? static_cast<std::uint16_t>(value) : std::uint16_t{0};
  if (!in_range || static_cast<float>(id) != value || !materials.find(id)) {
    ++counts.unknown_material;
    return false;
  }
  return true;
}
}  // namespace

std::string_view to_string(BatchError e) {
  switch (e) {
    case BatchError::kNone:
      return "none";
    case BatchError::kTooShort:
      return "too_short";
    case BatchError::kOversized:
      return "oversized";
    case BatchError::kUnknownIdentifier:
      return "unknown_identifier";
    case BatchError::kVerifyFailed:
      return "verify_failed";
    case BatchError::kUnknownSensor:
      return "unknown_sensor";
    case BatchError::kBadLayout:
      return "bad_layout";
    case BatchError::kRowCountMismatch:
      return "row_count_mismatch";
    case BatchError::kColumnsOutOfRange:
      return "columns_out_of_range";
    case BatchError::kObjectIdsMismatch:
      return "object_ids_mismatch";
    case BatchError::kRawSizeNotRows:
      return "raw_size_not_rows";
    case BatchError::kRawNotWholeBeams:
      return "raw_not_whole_beams";
    case BatchError::kCount:
      break;
  }
  return "unknown";
}

MessageKind identify(std::span<const std::uint8_t> datagram) {
  if (datagram.size() < 8) return MessageKind::kUnknown;
  if (flatbuffers::BufferHasIdentifier(datagram.data(), kHitBatchIdentifier))
    return MessageKind::kHitBatch;
  if (flatbuffers::BufferHasIdentifier(datagram.data(), kControlIdentifier))
    return MessageKind::kControl;
  return MessageKind::kUnknown;
}

namespace {
// Poses further out than this (in any engine unit) are no vehicle's: a sensor 1e38 away made
// the IMU's motion overflow to -inf.
constexpr double kMaxPlausiblePosition = 1e7;

// A pose as sent; false when it cannot be a rigid transform (non-finite, zero quaternion) or lies
// absurdly far away.
bool read_pose(const wire::Pose& pose, Eigen::Vector3d& position, Eigen::Quaterniond& orientation) {
  position = {pose.position().x(), pose.position().y(), pose.position().z()};
  const auto& q = pose.orientation();
  orientation = Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z());
  return position.allFinite() && position.norm() <= kMaxPlausiblePosition &&
         orientation.coeffs().allFinite() && orientation.norm() >= 1e-6;
}
}  // namespace

BatchError decode_hit_batch(std::span<const std::uint8_t> datagram, BatchView& out) {
  if (datagram.size() < 8) return BatchError::kTooShort;
  if (identify(datagram) != MessageKind::kHitBatch) return BatchError::kUnknownIdentifier;
  flatbuffers::Verifier verifier(datagram.data(), datagram.size());
  if (!wire::VerifyHitBatchBuffer(verifier)) return BatchError::kVerifyFailed;
  const wire::HitBatch* b = wire::GetHitBatch(datagram.data());
  out = BatchView{};
  out.sensor_id = b->sensor_id();
  out.frame = b->frame();
  out.first_column = b->first_column();
  out.column_count = b->column_count();
  out.rays_per_beam = b->rays_per_beam();
  out.segments_per_path = b->segments_per_path();
  out.sim_time_ns = b->sim_time_ns();
  out.world_frame = b->world_frame();
  if (b->layout() != wire::RowLayout::Hit7 && b->layout() != wire::RowLayout::Path8) {
    return BatchError::kBadLayout;
  }
  out.floats_per_row = b->layout() == wire::RowLayout::Hit7 ? 7 : 8;
  if (out.rays_per_beam == 0 || out.rays_per_beam > kMaxRaysPerBeam || out.segments_per_path == 0 ||
      out.segments_per_path > kMaxSegmentsPerPath ||
      (out.segments_per_path > 1 && out.floats_per_row != 8)) {
    return BatchError::kBadLayout;
  }
  if (const wire::Pose* pose = b->sensor_pose()) {
    if (!read_pose(*pose, out.pose_position, out.pose_orientation)) return BatchError::kBadLayout;
  } else if (out.world_frame) {
    return BatchError::kBadLayout;  // world rows without a pose cannot be placed
  }
  if (const auto* rows = b->rows()) out.rows = {rows->data(), rows->size()};
  if (const auto* ids = b->object_ids()) out.object_ids = {ids->data(), ids->size()};
  return BatchError::kNone;
}

BatchError check_batch_shape(const BatchView& batch, std::uint32_t columns_per_frame,
                             std::uint16_t channels) {
  if (batch.column_count == 0 || batch.first_column >= columns_per_frame ||
      batch.column_count > columns_per_frame - batch.first_column) {
    return BatchError::kColumnsOutOfRange;
  }
  const std::uint64_t rows =
      std::uint64_t{batch.column_count} * channels * batch.rays_per_beam * batch.segments_per_path;
  if (rows * batch.floats_per_row != batch.rows.size()) return BatchError::kRowCountMismatch;
  if (!batch.object_ids.empty() && batch.object_ids.size() != rows) {
    return BatchError::kObjectIdsMismatch;
  }
  return BatchError::kNone;
}

BatchError decode_control(std::span<const std::uint8_t> datagram, ControlView& out) {
  if (datagram.size() < 8) return BatchError::kTooShort;
  if (identify(datagram) != MessageKind::kControl) return BatchError::kUnknownIdentifier;
  flatbuffers::Verifier verifier(datagram.data(), datagram.size());
  if (!wire::VerifyControlBuffer(verifier)) return BatchError::kVerifyFailed;
  const wire::Control* c = wire::GetControl(datagram.data());
  out = ControlView{};
  out.sensor_id = c->sensor_id();
  if (const wire::Weather* w = c->weather()) {
    out.rain_mm_per_h = w->rain_mm_per_h();
    out.fog_visibility_m = w->fog_visibility_m();
    out.sun_irradiance_w_per_m2 = w->sun_irradiance_w_per_m2();
    // Negative means "unchanged"; beyond these bounds the value is absurd, not weather.
    if (!std::isfinite(out.rain_mm_per_h) || !std::isfinite(out.fog_visibility_m) ||
        !std::isfinite(out.sun_irradiance_w_per_m2) || out.rain_mm_per_h > 500 ||
        (out.fog_visibility_m >= 0 && out.fog_visibility_m < 10) || out.fog_visibility_m > 1e6 ||
        out.sun_irradiance_w_per_m2 > 2000) {
      return BatchError::kBadLayout;
    }
  }
  if (const wire::Pose* pose = c->sensor_pose()) {
    out.has_pose = true;
    if (!read_pose(*pose, out.pose_position, out.pose_orientation)) return BatchError::kBadLayout;
  }
  out.pause = c->run_state() == wire::RunState::Pause;
  out.resume = c->run_state() == wire::RunState::Resume;
  return BatchError::kNone;
}

core::simd::RowsToSensor rows_to_sensor_transform(const EngineConventions& engine,
                                                  const Eigen::Isometry3d* world_to_sensor) {
  core::simd::RowsToSensor t;
  const auto row_major = [](const Eigen::Matrix3d& m, double* out) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) out[r * 3 + c] = m(r, c);
    }
  };
  row_major(engine.axes, t.axes);
  t.metres_per_unit = engine.metres_per_unit;
  if (world_to_sensor) {
    t.posed = true;
    row_major(world_to_sensor->linear(), t.pose_linear);
    for (int k = 0; k < 3; ++k) t.pose_translation[k] = world_to_sensor->translation()[k];
  }
  t.min_range_m = kMinPlausibleRangeM;
  t.max_range_m = kMaxPlausibleRangeM;
  t.min_normal_length = kMinNormalLength;
  return t;
}

bool keep_converted_row(const float* values, std::uint8_t flaws,
                        const core::MaterialTable& materials, RowCounts& counts) {
  if ((flaws & core::simd::kRowNonFinite) != 0) {
    ++counts.non_finite;
    return false;
  }
  if (!known_material(values[6], materials, counts)) return false;
  if ((flaws & core::simd::kRowOutOfRange) != 0) {
    ++counts.out_of_range;
    return false;
  }
  return true;
}

RowCounts store_batch(const BatchView& batch, const EngineConventions& engine,
                      const core::MaterialTable& materials, core::FrameHits& frame) {
  take_batch_frame_facts(batch, engine, frame);
  return store_batch_rows(batch, engine, materials, frame);
}

void take_batch_frame_facts(const BatchView& batch, const EngineConventions& engine,
                            core::FrameHits& frame) {
  // The frame's pose comes with its first batch, as its weather and simulation time do: the
  // daemon's physics starts on the frame then, and reads it while later batches arrive.
  if (batch.world_frame && !frame.has_pose && frame.columns_received == 0) {
    frame.has_pose = true;
    frame.pose_column = batch.first_column;
    frame.world_from_sensor = engine.pose(batch.pose_position, batch.pose_orientation);
  }
  for (std::uint32_t c = 0; c < batch.column_count; ++c) mark_column(frame, batch.first_column + c);
}

namespace {

// A batch's rows converted in lanes a window at a time, as store_batch_rows walks them in order;
// a window never reaches past the rows the caller will read (another thread's columns).
class RowWindow {
 public:
  static constexpr std::size_t kRows = 256;
  RowWindow(const core::simd::RowsToSensor& transform, const BatchView& batch)
      : transform_(transform), batch_(batch) {}
  RowWindow(const RowWindow&) = delete;  // rows_ points into the window's own arrays
  RowWindow& operator=(const RowWindow&) = delete;
  // Where row `row` lies in the window, converting [row, min(row + kRows, end)) if it is not in.
  std::size_t at(std::size_t row, std::size_t end) {
    if (row < begin_ || row >= begin_ + size_) {
      begin_ = row;
      size_ = std::min(kRows, end - row);
      core::simd::rows_to_sensor(transform_, batch_.rows.data() + row * batch_.floats_per_row,
                                 batch_.floats_per_row, size_, rows_);
    }
    return row - begin_;
  }
  [[nodiscard]] const core::simd::SensorRows& rows() const { return rows_; }

 private:
  std::array<float, kRows> x_, y_, z_, nx_, ny_, nz_;
  std::array<std::uint8_t, kRows> flaws_;
  core::simd::SensorRows rows_{.x = x_.data(),
                               .y = y_.data(),
                               .z = z_.data(),
                               .nx = nx_.data(),
                               .ny = ny_.data(),
                               .nz = nz_.data(),
                               .flaws = flaws_.data()};
  const core::simd::RowsToSensor& transform_;
  const BatchView& batch_;
  std::size_t begin_ = 0;
  std::size_t size_ = 0;
};

// One row a beam, one hit a beam (a ray, no multi-bounce path: the common case): a column's rows
// are its beams' hits, side by side in the frame's planes, so the lanes write them there at once.
// A refused row leaves what it converted to; its material 0 says there is no hit, and nothing
// reads a hit without one (as nothing read what the frame held there before).
RowCounts store_single_hit_rows(const BatchView& batch, const core::simd::RowsToSensor& transform,
                                const core::MaterialTable& materials, core::FrameHits& frame,
                                ColumnClaim claim) {
  RowCounts counts;
  const std::uint16_t channels = frame.shape.channels;
  constexpr std::size_t kRowsAtOnce = 256;
  std::array<std::uint8_t, kRowsAtOnce> flaws{};
  for (std::uint32_t c = 0; c < batch.column_count; ++c) {
    const std::uint32_t column = batch.first_column + c;
    if (!claim.keeps(column)) continue;
    for (std::size_t first = 0; first < channels; first += kRowsAtOnce) {
      const std::size_t count = std::min<std::size_t>(kRowsAtOnce, channels - first);
      const std::size_t beam = frame.shape.beam(column, 0) + first;
      const std::size_t row = std::size_t{c} * channels + first;
      core::simd::rows_to_sensor(transform, batch.rows.data() + row * batch.floats_per_row,
                                 batch.floats_per_row, count,
                                 {.x = frame.x.data() + beam,
                                  .y = frame.y.data() + beam,
                                  .z = frame.z.data() + beam,
                                  .nx = frame.nx.data() + beam,
                                  .ny = frame.ny.data() + beam,
                                  .nz = frame.nz.data() + beam,
                                  .flaws = flaws.data()});
      for (std::size_t i = 0; i < count; ++i) {
        const float* values = batch.rows.data() + (row + i) * batch.floats_per_row;
        const float angle = batch.floats_per_row == 8 ? values[7] : 0.0f;
        std::uint16_t material = 0;
        if (keep_converted_row(values, flaws[i], materials, counts)) {
          if (std::isfinite(angle)) {
            material = static_cast<std::uint16_t>(values[6]);
            ++counts.stored;
          } else {
            ++counts.non_finite;
          }
        }
        frame.material[beam + i] = material;
        if (material == 0) continue;
        frame.angle_deg[beam + i] = angle;
        frame.object_id[beam + i] = batch.object_ids.empty() ? 0u : batch.object_ids[row + i];
      }
    }
  }
  return counts;
}

}  // namespace

RowCounts store_batch_rows(const BatchView& batch, const EngineConventions& engine,
                           const core::MaterialTable& materials, core::FrameHits& frame,
                           ColumnClaim claim) {
  Eigen::Isometry3d world_to_sensor;
  if (batch.world_frame) {
    world_to_sensor = engine.pose(batch.pose_position, batch.pose_orientation).inverse();
  }
  const core::simd::RowsToSensor transform =
      rows_to_sensor_transform(engine, batch.world_frame ? &world_to_sensor : nullptr);
  if (batch.rays_per_beam == 1 && batch.segments_per_path == 1 &&
      frame.layout.hits_per_beam() == 1) {
    return store_single_hit_rows(batch, transform, materials, frame, claim);
  }
  RowCounts counts;
  RowWindow window(transform, batch);
  const std::uint16_t channels = frame.shape.channels;
  const std::size_t batch_rays = batch.rays_per_beam;
  const std::size_t batch_segments = batch.segments_per_path;
  const std::size_t rays = std::min<std::size_t>(batch_rays, frame.layout.rays_per_beam);
  const std::size_t segments =
      std::min<std::size_t>(batch_segments, frame.layout.segments_per_path);
  const std::size_t hits_per_beam = frame.layout.hits_per_beam();
  const std::size_t rows_per_column = channels * batch_rays * batch_segments;
  for (std::uint32_t c = 0; c < batch.column_count; ++c) {
    const std::uint32_t column = batch.first_column + c;
    if (!claim.keeps(column)) continue;
    const std::size_t column_end = (std::size_t{c} + 1) * rows_per_column;
    for (std::uint16_t ch = 0; ch < channels; ++ch) {
      const std::size_t beam = frame.shape.beam(column, ch);
      const std::size_t beam_in_batch = std::size_t{c} * channels + ch;
      std::fill_n(frame.material.begin() + static_cast<std::ptrdiff_t>(beam * hits_per_beam),
                  hits_per_beam, std::uint16_t{0});
      for (std::size_t ray = 0; ray < rays; ++ray) {
        for (std::size_t seg = 0; seg < segments; ++seg) {
          const std::size_t row = (beam_in_batch * batch_rays + ray) * batch_segments + seg;
          const float* values = batch.rows.data() + row * batch.floats_per_row;
          const std::size_t i = window.at(row, column_end);
          if (!keep_converted_row(values, window.rows().flaws[i], materials, counts)) break;
          const float angle = batch.floats_per_row == 8 ? values[7] : 0.0f;
          if (!std::isfinite(angle)) {
            ++counts.non_finite;
            break;
          }
          store_converted_row(frame, frame.hit(beam, ray, seg), window.rows(), i,
                              static_cast<std::uint16_t>(values[6]),
                              batch.object_ids.empty() ? 0u : batch.object_ids[row], angle);
          ++counts.stored;
        }
      }
    }
  }
  return counts;
}

}  // namespace lidaremu::protocol
