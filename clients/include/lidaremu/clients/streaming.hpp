#pragma once
// Shared by the command-line clients: the scan pattern from user flags, and streaming frames of
// rows to the daemon at the sensor's own rate (or faster).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::clients {

// Throws std::runtime_error with the accepted values when a flag is wrong. `scan_pattern`: a
// Livox model's scan table, a CSV file or "test-pattern" (core/scan_table.hpp).
core::ScanPattern scan_for(const std::string& model, int rpm, const std::string& mode,
                           const std::string& scan_pattern = "");

struct StreamOptions {
  std::uint16_t sensor_id = 0;
  double speed = 1.0;  // 1: the sensor's real rate; 2: twice as fast; 0: as fast as possible
  bool raw = false;    // headerless rows instead of HitBatch
  int floats_per_row = 7;
  // The number the first frame carries: an engine that carries on a stream a sensor has seen
  // (a frame numbered at or before the last one is stale there).
  std::uint32_t first_frame = 0;
};

// Raw mode's datagrams: whole columns (each datagram's rows in scan order), as many as fit in
// 65,000 bytes; the bytes are the float rows' own. Each part with the column it starts at.
struct RawPart {
  std::uint32_t first_column;
  std::span<const std::uint8_t> bytes;
};
std::vector<RawPart> raw_datagrams(std::span<const float> rows, std::size_t floats_per_column);

// Sends frames one after another; frame f carries simulation time f * frame_period.
class FrameStreamer {
 public:
  FrameStreamer(UdpSender& sender, const core::ScanPattern& pattern, StreamOptions options);
  // rows: one frame (columns_per_frame * channels rows, or fewer for a partial frame).
  // object_ids: none, or one per row (framed batches only; raw rows have no room for them).
  void send_frame(std::span<const float> rows, std::span<const std::uint32_t> object_ids = {});
  [[nodiscard]] std::uint64_t datagrams_sent() const { return datagrams_; }
  // Also the number the next frame's batches carry.
  [[nodiscard]] std::uint32_t frames_sent() const { return frame_; }
  [[nodiscard]] std::uint64_t send_failures() const { return failures_; }

 private:
  void send_at(std::span<const std::uint8_t> datagram, double sim_time_s);
  UdpSender& sender_;
  core::ScanPattern pattern_;
  StreamOptions options_;
  std::uint32_t frame_ = 0;
  double start_ = -1;
  std::uint64_t datagrams_ = 0;
  std::uint64_t failures_ = 0;
};

}  // namespace lidaremu::clients
