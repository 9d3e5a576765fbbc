#pragma once
// The only code that reads bytes from engines. Every datagram is verified before any field is
// read; every problem is a value (an error enum the daemon counts), never an exception.
#include <Eigen/Geometry>
#include <cstdint>
#include <span>
#include <string_view>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/protocol/engine_frame.hpp"

namespace lidaremu::protocol {

inline constexpr std::size_t kMaxDatagram = 65507;
inline constexpr char kHitBatchIdentifier[] = "LHB1";
inline constexpr char kControlIdentifier[] = "LCT1";

// Why a whole datagram was refused. Stable names: they are metric labels.
enum class BatchError : std::uint8_t {
  kNone,
  kTooShort,           // fewer bytes than a FlatBuffer header
  kOversized,          // more than a UDP datagram can carry (65,507 bytes)
  kUnknownIdentifier,  // neither LHB1 nor LCT1
  kVerifyFailed,       // FlatBuffers verifier refused it
  kUnknownSensor,      // no sensor with that id on this port
  kBadLayout,          // rays, segments or layout out of range
  kRowCountMismatch,   // row floats disagree with the header
  kColumnsOutOfRange,  // first_column + column_count beyond the frame
  kObjectIdsMismatch,  // object_ids neither empty nor one per row
  kRawSizeNotRows,     // raw datagram not a whole number of rows
  kRawNotWholeBeams,   // raw rows not a whole number of beams (rays x segments rows each)
  kCount
};
std::string_view to_string(BatchError e);

enum class MessageKind : std::uint8_t { kHitBatch, kControl, kUnknown };
MessageKind identify(std::span<const std::uint8_t> datagram);

// A verified HitBatch, fields read; rows point into the datagram (no copy).
struct BatchView {
  std::uint16_t sensor_id = 0;
  std::uint32_t frame = 0;
  std::uint32_t first_column = 0;
  std::uint32_t column_count = 0;
  std::uint8_t rays_per_beam = 1;
  std::uint8_t segments_per_path = 1;
  std::uint8_t floats_per_row = 7;
  std::uint64_t sim_time_ns = 0;
  bool world_frame = false;
  Eigen::Vector3d pose_position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond pose_orientation = Eigen::Quaterniond::Identity();
  std::span<const float> rows;
  std::span<const std::uint32_t> object_ids;
};

BatchError decode_hit_batch(std::span<const std::uint8_t> datagram, BatchView& out);
// The header must describe whole columns of this sensor's frame.
BatchError check_batch_shape(const BatchView& batch, std::uint32_t columns_per_frame,
                             std::uint16_t channels);

struct ControlView {
  std::uint16_t sensor_id = 0;
  float rain_mm_per_h = -1;
  float fog_visibility_m = -1;
  float sun_irradiance_w_per_m2 = -1;
  bool pause = false;
  bool resume = false;
  // The sensor's pose in the engine's world (engine conventions), for the IMU's motion when the
  // rows themselves carry none (raw rows, sensor-frame batches).
  bool has_pose = false;
  Eigen::Vector3d pose_position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond pose_orientation = Eigen::Quaterniond::Identity();
};
BatchError decode_control(std::span<const std::uint8_t> datagram, ControlView& out);

// What happened to individual rows; rejected rows never disturb the others.
struct RowCounts {
  std::uint64_t stored = 0;
  std::uint64_t no_hit = 0;            // material 0: skipped by contract
  std::uint64_t non_finite = 0;        // NaN or infinity anywhere in the row
  std::uint64_t unknown_material = 0;  // id not in the material table
  std::uint64_t out_of_range = 0;      // |p| beyond any sensor's reach, or a zero normal
  std::uint64_t late = 0;  // raw rows: a beam of a column the physics may already have taken

  RowCounts& operator+=(const RowCounts& other) {
    stored += other.stored;
    no_hit += other.no_hit;
    non_finite += other.non_finite;
    unknown_material += other.unknown_material;
    out_of_range += other.out_of_range;
    late += other.late;
    return *this;
  }
};

// How a batch's rows become sensor-frame hits (world_to_sensor: null for rows in the sensor's
// frame): the engine's axes and units, then the pose, in core::simd::rows_to_sensor's lanes.
core::simd::RowsToSensor rows_to_sensor_transform(const EngineConventions& engine,
                                                  const Eigen::Isometry3d* world_to_sensor);

// Whether a row converted by rows_to_sensor is kept, its checks in order, the first failure
// counted: a NaN or infinity among its seven values; material 0 (no hit) or anything but a whole
// id the table knows; an implausible range or a normal without length.
bool keep_converted_row(const float* values, std::uint8_t flaws,
                        const core::MaterialTable& materials, RowCounts& counts);
// Writes converted row i into a hit slot of the frame. Inline: once per row stored, on the input
// thread for raw rows.
inline void store_converted_row(core::FrameHits& frame, std::size_t hit,
                                const core::simd::SensorRows& rows, std::size_t i,
                                std::uint16_t material, std::uint32_t object_id, float angle_deg) {
  frame.x[hit] = rows.x[i];
  frame.y[hit] = rows.y[i];
  frame.z[hit] = rows.z[i];
  frame.nx[hit] = rows.nx[i];
  frame.ny[hit] = rows.ny[i];
  frame.nz[hit] = rows.nz[i];
  frame.angle_deg[hit] = angle_deg;
  frame.material[hit] = material;
  frame.object_id[hit] = object_id;
}
inline void mark_column(core::FrameHits& frame, std::uint32_t column) {
  if (!frame.column_received[column]) {
    frame.column_received[column] = 1;
    ++frame.columns_received;
  }
}

// Copies every ray and path segment of a verified batch into the frame, up to the frame's
// layout (the sensor's rays_per_beam and segments_per_path), and marks its columns received. A
// rejected row ends its path. The two halves below, in this order.
RowCounts store_batch(const BatchView& batch, const EngineConventions& engine,
                      const core::MaterialTable& materials, core::FrameHits& frame);

// What a batch says of its frame as a whole (its pose, from the frame's first batch when in
// world frame), and its columns marked received. Cheap: the daemon's input thread does it as the
// batch arrives, in arrival order.
void take_batch_frame_facts(const BatchView& batch, const EngineConventions& engine,
                            core::FrameHits& frame);

// Which of a batch's columns its rows go to: every one, or only those it brought first
// (first_copy_of[column] == batch, when given: a column sent again keeps its first copy).
struct ColumnClaim {
  std::span<const std::uint32_t> first_copy_of;
  std::uint32_t batch = 0;
  [[nodiscard]] bool keeps(std::uint32_t column) const {
    return first_copy_of.empty() || first_copy_of[column] == batch;
  }
};

// The rows of a verified batch into the frame, for the columns the claim keeps; marks nothing.
// The costly half: batches of disjoint columns may be stored at once, from many threads.
RowCounts store_batch_rows(const BatchView& batch, const EngineConventions& engine,
                           const core::MaterialTable& materials, core::FrameHits& frame,
                           ColumnClaim claim = {});

}  // namespace lidaremu::protocol
