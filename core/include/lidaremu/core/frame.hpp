#pragma once
// Structure-of-arrays buffers for one frame (one revolution). Sized once per scan pattern and
// reused: filling and processing a frame never allocates.
#include <Eigen/Geometry>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lidaremu/core/return_mode.hpp"

namespace lidaremu::core {

struct FrameShape {
  std::uint32_t columns = 0;
  std::uint16_t channels = 0;
  [[nodiscard]] std::size_t beams() const { return std::size_t{columns} * channels; }
  [[nodiscard]] std::size_t beam(std::uint32_t column, std::uint16_t channel) const {
    return std::size_t{column} * channels + channel;
  }
};

// How many hits describe one beam: rays for beam divergence (centre first, seed 000 "roses"),
// segments for multi-bounce paths (seed 000 "guns", 8-float rows).
struct HitLayout {
  std::uint8_t rays_per_beam = 1;
  std::uint8_t segments_per_path = 1;
  [[nodiscard]] std::size_t hits_per_beam() const {
    return std::size_t{rays_per_beam} * segments_per_path;
  }
  bool operator==(const HitLayout&) const = default;
};

// The weather a frame was taken in; Control messages change it between batches.
struct Weather {
  double rain_mm_per_h = 0;
  double visibility_m = 23000;  // meteorological visibility; fog is a small one
  // Broadband sunlight on a surface facing the sun, W/m^2 (1000: full sun, about 100 klx); the
  // receiver model takes its share near 905 nm.
  double sun_irradiance_w_per_m2 = 0;
  bool operator==(const Weather&) const = default;
};

// What the engine said each beam hit, in the sensor frame, metres. Material 0 means nothing.
// Hit index: (beam * rays + ray) * segments + segment.
struct FrameHits {
  FrameShape shape;
  HitLayout layout;
  std::uint32_t frame_number = 0;
  std::uint64_t sim_time_ns = 0;  // simulation time of column 0
  bool has_sim_time = false;
  // Where the engine placed the sensor (ROS convention), from the frame's first batch when it is
  // in world frame (its first column is pose_column): the IMU's motion follows these poses.
  bool has_pose = false;
  std::uint32_t pose_column = 0;
  Eigen::Isometry3d world_from_sensor = Eigen::Isometry3d::Identity();
  Weather weather;
  // Monotonic nanoseconds: when the frame's first datagram reached the host, when its input was
  // complete (the kernel's arrival time of the datagram that completed it; when the idle timeout
  // or the stop ended it, then) and when the input thread, having read it, handed it on whole.
  // The daemon's real-time admission and its frame ages use them.
  std::int64_t input_begun_ns = 0;
  std::int64_t input_done_ns = 0;
  std::int64_t handed_on_ns = 0;
  // A hit's fields mean something only where its material is set (non-zero): they are written
  // with it, and clear() resets the materials alone.
  std::vector<float> x, y, z, nx, ny, nz;
  std::vector<float> angle_deg;  // 8th float: angle between p_i - p_0 and p_1 - p_0
  std::vector<std::uint16_t> material;
  std::vector<std::uint32_t> object_id;
  std::vector<std::uint8_t> column_received;
  std::uint32_t columns_received = 0;

  void reshape(FrameShape s, HitLayout l = {});
  // What reshape allocates (the daemon's memory estimate).
  static std::size_t bytes_for(FrameShape s, HitLayout l = {});
  // Forget the previous frame's content without giving memory back.
  void clear(std::uint32_t new_frame_number);
  [[nodiscard]] std::size_t hit(std::size_t beam, std::size_t ray, std::size_t segment) const {
    return (beam * layout.rays_per_beam + ray) * layout.segments_per_path + segment;
  }
};

// What the sensor reports: up to three echoes per beam, in planes. Plane 0 is what a single-return
// format encodes (the selected echo: strongest, last or first); planes 1 and 2 hold the further
// echoes of dual and triple modes. Index: echo * beams + beam. Range 0 = no return.
struct FrameReturns {
  static constexpr int kMaxEchoes = 3;
  FrameShape shape;
  std::uint32_t frame_number = 0;
  std::vector<float> range_m;              // quantised
  std::vector<float> power_w;              // detected power P_out
  std::vector<std::uint8_t> reflectivity;  // calibrated, Velodyne/Ouster scale
  std::vector<std::uint16_t> signal_photons;
  std::vector<float> pulse_width_ns;     // echo pulse width (PHYSICS.md 8)
  std::vector<std::uint32_t> object_id;  // ground truth from the batch; 0 = rain, bloom, none
  std::vector<std::uint8_t> kind;        // what produced the echo (ReturnKind)
  std::vector<std::uint16_t> near_ir;    // per beam (not per echo): ambient photons (NEAR_IR)
  // The planes a pipeline may have written since reshape; the planes past it are all empty.
  int planes_written = 0;

  void reshape(FrameShape s);
  // What reshape allocates (the daemon's memory estimate).
  static std::size_t bytes_for(FrameShape s);
  // Empties the planes from `planes` on if any was written, so that a pipeline filling fewer
  // planes than the last one leaves none of its echoes behind.
  void keep_planes(int planes);
  [[nodiscard]] std::size_t slot(std::size_t beam, int echo) const {
    return static_cast<std::size_t>(echo) * shape.beams() + beam;
  }
};

// Ground truth of what made an echo, for validation tools and exports.
enum class ReturnKind : std::uint8_t {
  kNone,
  kTarget,    // a surface the engine's ray hit
  kGhost,     // a multi-bounce path's end, seen behind the mirror
  kRainDrop,  // a rain drop in the beam
  kBloom,     // a retroreflector's light in a neighbouring beam
  kNoise,     // a noise false alarm: no target at all
  kFog,       // the fog volume's backscatter
};

}  // namespace lidaremu::core
