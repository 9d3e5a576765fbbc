#pragma once
// Decodes a sensor's packet stream with the spec decoders and cuts it into frames the way
// drivers do (Velodyne, Hesai, RoboSense: azimuth wrap; Ouster: frame_id; Livox: frame_cnt),
// summarising each
// frame. RoboSense streams decode only after a DIFOP, as rs_driver's.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::clients {

struct FramePoint {
  float x = 0, y = 0, z = 0;
  float range_m = 0;
  std::uint16_t reflectivity = 0;
  std::uint16_t channel = 0;
  std::uint32_t column = 0;  // Ouster measurement id; Livox the packet's udp_cnt; else none
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
  // Feeds one data packet; returns false (and counts it) when it does not decode. A RoboSense
  // packet before the first DIFOP is counted as waiting, not bad.
  bool feed(std::span<const std::uint8_t> packet, double arrival_s);
  // Feeds one RoboSense DIFOP packet (UDP 7788); false when it is not a valid one.
  bool feed_difop(std::span<const std::uint8_t> packet);
  [[nodiscard]] std::uint64_t packets_before_difop() const { return waiting_packets_; }
  void flush();  // completes the frame in progress
  [[nodiscard]] std::uint64_t bad_packets() const { return bad_packets_; }

 private:
  void finish_frame();
  // Velodyne, Hesai, RoboSense: a frame ends where the azimuth wraps.
  void add_spinning_point(const FramePoint& point, float azimuth_deg, double arrival_s);
  void start_if_needed(double arrival_s);
  std::optional<core::velodyne::SpecDecoder> velodyne_;
  std::optional<core::hesai::SpecDecoder> hesai_;
  std::optional<core::ouster::SpecDecoder> ouster_;
  std::optional<core::robosense::SpecDecoder> robosense_;
  bool livox_ = false;  // Livox packets need no decoder state
  std::vector<core::livox::Point> scratch_livox_;
  bool feed_livox(std::span<const std::uint8_t> packet, double arrival_s);
  std::uint64_t waiting_packets_ = 0;
  std::vector<core::robosense::Point> scratch_robosense_;
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
