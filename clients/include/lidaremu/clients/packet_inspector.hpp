#pragma once
// Decodes a sensor's packet stream with the spec decoders and cuts it into frames the way
// drivers do (Velodyne, Hesai: azimuth wrap; Ouster: frame_id), summarising each frame.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::clients {

struct FramePoint {
  float x = 0, y = 0, z = 0;
  float range_m = 0;
  std::uint16_t reflectivity = 0;
  std::uint16_t channel = 0;
  std::uint32_t column = 0;  // Ouster measurement id; Velodyne, Hesai: none
};

struct FrameSummary {
  std::uint64_t index = 0;
  int packets = 0;
  std::vector<FramePoint> points;
  double first_arrival_s = 0;
  double last_arrival_s = 0;
  [[nodiscard]] std::string describe() const;  // one human-readable line
};

class PacketInspector {
 public:
  using OnFrame = std::function<void(const FrameSummary&)>;
  // Ouster needs metadata (the JSON the daemon wrote, or a real sensor's).
  PacketInspector(const core::SensorModel& model, std::optional<core::ouster::Metadata> metadata,
                  OnFrame on_frame);
  // Feeds one data packet; returns false (and counts it) when it does not decode.
  bool feed(std::span<const std::uint8_t> packet, double arrival_s);
  void flush();  // completes the frame in progress
  [[nodiscard]] std::uint64_t bad_packets() const { return bad_packets_; }

 private:
  void finish_frame();
  // Velodyne and Hesai: a frame ends where the azimuth wraps.
  void add_spinning_point(const FramePoint& point, float azimuth_deg, double arrival_s);
  void start_if_needed(double arrival_s);
  std::optional<core::velodyne::SpecDecoder> velodyne_;
  std::optional<core::hesai::SpecDecoder> hesai_;
  std::optional<core::ouster::SpecDecoder> ouster_;
  OnFrame on_frame_;
  FrameSummary current_;
  bool have_current_ = false;
  float last_azimuth_ = -1;
  std::optional<std::uint16_t> frame_id_;
  std::uint64_t bad_packets_ = 0;
  std::vector<core::velodyne::Point> scratch_points_;
  std::vector<core::hesai::Point> scratch_hesai_;
  std::vector<core::ouster::Column> scratch_columns_;
};

}  // namespace lidaremu::clients
