#pragma once
// The engine-independent half of every engine plugin (Unreal, Unity, CARLA, plain Python): where
// each beam of the chosen model points in the engine's own frame and units, what the engine hit
// converted into the sensor frame the drivers report in, which columns are due this tick, and
// the batches to send. Plugins only trace rays and read materials; this part is tested here.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/protocol/engine_frame.hpp"

namespace lidaremu::clients {

struct EngineRay {
  std::array<double, 3> start;      // engine units, world
  std::array<double, 3> direction;  // unit, world, engine axes
};

class SensorRig {
 public:
  // model: a registry name; rpm (spinning heads, 0: default) or mode "1024x10" (Ouster, "":
  // default) or, for a Livox model, mode its scan table (a CSV file or "test-pattern", as the
  // daemon's --scan-pattern; its beams point elsewhere every frame); engine: "ros", "unreal",
  // "unity" or "godot". Throws std::runtime_error naming what is accepted.
  SensorRig(const std::string& model, int rpm, const std::string& mode, const std::string& engine);

  [[nodiscard]] const core::ScanPattern& pattern() const { return pattern_; }
  [[nodiscard]] std::uint32_t columns() const { return shape_columns_; }
  [[nodiscard]] std::uint16_t channels() const { return channels_; }
  [[nodiscard]] std::uint32_t frame() const { return frame_; }

  // Where the sensor is in the engine for the rays and hits that follow: position in engine
  // units, orientation a unit quaternion (x, y, z, w) in the engine's axes.
  void set_pose(const std::array<double, 3>& position,
                const std::array<double, 4>& orientation_xyzw);
  // A beam's ray in the engine's world (trace from start along direction).
  [[nodiscard]] EngineRay ray(std::uint32_t column, std::uint16_t channel) const;
  // What the engine hit on that beam, in its world, units and axes (normal need not be unit).
  // Returns false for a column or channel out of range, or a non-finite value (nothing stored).
  bool set_hit(std::uint32_t column, std::uint16_t channel, const std::array<double, 3>& point,
               const std::array<double, 3>& normal, std::uint16_t material,
               std::uint32_t object_id);
  bool set_miss(std::uint32_t column, std::uint16_t channel);
  // The columns that fire in [from_s, to_s) of the frame's time (seconds since its column 0):
  // engines that trace a slice of the rotation each tick ask for this. {first, count}.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> columns_due(double from_s,
                                                                    double to_s) const;
  // HitBatch datagrams for `count` columns from `first` of the current frame, with the frame's
  // simulation time (0: none) and the sensor id.
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> batches(std::uint32_t first,
                                                               std::uint32_t count,
                                                               std::uint64_t frame_sim_time_ns,
                                                               std::uint16_t sensor_id = 0) const;
  // The next frame: its number, and every beam a miss again.
  void next_frame();

  // Time-sliced scanning, for engines that trace the part of the rotation each tick covers:
  // tick(dt) adds the tick's time; next_slice() names the columns to trace next (false once the
  // tick is used up; a tick that crosses the frame's end gives the frame's last columns, then the
  // next frame's first); finish_slice() returns that slice's datagrams and, when the slice ends
  // the frame, starts the next one. Simulation time starts at 1 s and advances a frame period
  // a frame.
  void tick(double dt_s);
  bool next_slice(std::uint32_t& first, std::uint32_t& count);
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> finish_slice(std::uint16_t sensor_id = 0);
  // The beam nearest a point given in the sensor frame (ROS convention), for engines whose
  // lidar reports points rather than beams (CARLA's semantic lidar). {column, channel}. Not for
  // a table scan (Livox), whose beams follow no grid: {0, 0} there; cast its rays instead.
  [[nodiscard]] std::pair<std::uint32_t, std::uint16_t> nearest_beam(
      const std::array<double, 3>& point_in_sensor) const;
  // A row as the daemon receives it (sensor frame, metres), for tests and tools.
  [[nodiscard]] std::span<const float> row(std::uint32_t column, std::uint16_t channel) const;

 private:
  [[nodiscard]] std::size_t beam(std::uint32_t column, std::uint16_t channel) const {
    return std::size_t{column} * channels_ + channel;
  }
  core::ScanPattern pattern_;
  core::BeamGeometry geometry_;
  protocol::EngineConventions conventions_;
  std::uint32_t shape_columns_;
  std::uint16_t channels_;
  Eigen::Isometry3d world_from_sensor_ = Eigen::Isometry3d::Identity();
  std::vector<float> rows_;  // 7 floats a beam, sensor frame
  std::vector<std::uint32_t> object_ids_;
  std::uint32_t frame_ = 0;
  double frame_time_s_ = 0;      // how far into the current frame the traced slices reach
  double tick_until_s_ = 0;      // how far the ticks so far reach (may pass the frame's end)
  double frame_sim_time_s_ = 1;  // the current frame's simulation time
  std::uint32_t slice_first_ = 0, slice_count_ = 0;
  bool slice_ends_frame_ = false;
};

}  // namespace lidaremu::clients
