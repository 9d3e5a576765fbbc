#pragma once
#include <array>
// What an engine links to talk to lidaremud: builds HitBatch datagrams (splitting a frame by
// columns so that no datagram exceeds the UDP limit) and sends them over plain UDP.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/protocol/wire_decode.hpp"

namespace lidaremu::clients {

struct BatchHeader {
  std::uint16_t sensor_id = 0;
  std::uint32_t frame = 0;
  std::uint32_t first_column = 0;
  std::uint32_t column_count = 0;
  std::uint8_t rays_per_beam = 1;
  std::uint8_t segments_per_path = 1;
  std::uint8_t floats_per_row = 7;  // 7 (hit) or 8 (path segment with angle)
  std::uint64_t sim_time_ns = 0;
  // Rows in world coordinates, with the sensor placed by this pose (engine conventions); the
  // IMU of an emulated Ouster follows these poses.
  bool world_frame = false;
  std::array<float, 3> position{0, 0, 0};
  std::array<float, 4> orientation_xyzw{0, 0, 0, 1};
};

// One datagram. rows: column by column, channel by channel, ray by ray.
std::vector<std::uint8_t> build_hit_batch(const BatchHeader& header, std::span<const float> rows,
                                          std::span<const std::uint32_t> object_ids = {});

// A whole frame (or any run of columns) as datagrams of at most max_bytes each.
// column_period_ns advances sim_time_ns for each split so every datagram states its own time.
// object_ids: none, or one per row (ground truth the live view and exports carry).
std::vector<std::vector<std::uint8_t>> build_frame_batches(
    const BatchHeader& frame_header, std::uint16_t channels, std::span<const float> rows,
    std::uint64_t column_period_ns, std::size_t max_bytes = 65507,
    std::span<const std::uint32_t> object_ids = {});

// Rewrites a built HitBatch's frame number and simulation time in place (a load generator
// replaying one frame as many). False when the datagram does not hold both fields (a field
// equal to its default, 0, is not stored).
bool restamp_hit_batch(std::span<std::uint8_t> datagram, std::uint32_t frame,
                       std::uint64_t sim_time_ns);

// Weather (negative = unchanged), pause and resume for one sensor.
using ControlMessage = protocol::ControlView;
std::vector<std::uint8_t> build_control(const ControlMessage& message);

// A connected UDP socket to the daemon's hit port.
class UdpSender {
 public:
  // "udp://HOST:PORT" or "HOST:PORT"; throws std::runtime_error on a bad address.
  explicit UdpSender(const std::string& destination);
  ~UdpSender();
  UdpSender(const UdpSender&) = delete;
  UdpSender& operator=(const UdpSender&) = delete;
  // False when the kernel refused the datagram (the caller decides whether to retry).
  bool send(std::span<const std::uint8_t> datagram);

 private:
  int fd_ = -1;
};

}  // namespace lidaremu::clients
