#pragma once
// Structure-of-arrays buffers for one frame (one revolution). Sized once per scan pattern and
// reused: filling and processing a frame never allocates.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lidaremu::core {

struct FrameShape {
  std::uint32_t columns = 0;
  std::uint16_t channels = 0;
  [[nodiscard]] std::size_t beams() const { return std::size_t{columns} * channels; }
  [[nodiscard]] std::size_t beam(std::uint32_t column, std::uint16_t channel) const {
    return std::size_t{column} * channels + channel;
  }
};

// What the engine said each beam hit, in the sensor frame, metres. Material 0 means nothing.
struct FrameHits {
  FrameShape shape;
  std::uint32_t frame_number = 0;
  std::uint64_t sim_time_ns = 0;  // simulation time of column 0
  bool has_sim_time = false;
  std::vector<float> x, y, z, nx, ny, nz;
  std::vector<std::uint16_t> material;
  std::vector<std::uint32_t> object_id;
  std::vector<std::uint8_t> column_received;
  std::uint32_t columns_received = 0;

  void reshape(FrameShape s);
  // Forget the previous frame's content without giving memory back.
  void clear(std::uint32_t new_frame_number);
};

// What the sensor reports per beam (strongest return).
struct FrameReturns {
  FrameShape shape;
  std::uint32_t frame_number = 0;
  std::vector<float> range_m;              // quantised; 0 = no return
  std::vector<float> power_w;              // detected power P_out
  std::vector<std::uint8_t> reflectivity;  // calibrated, Velodyne/Ouster scale
  std::vector<std::uint16_t> signal_photons;

  void reshape(FrameShape s);
};

}  // namespace lidaremu::core
