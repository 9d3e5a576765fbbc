#pragma once
// Decodes a sensor's packet stream with the spec decoders (core::PacketDecoder) and cuts it into
// frames the way drivers do (spinning heads where the columns wrap; Ouster and Livox by the frame
// their packets name), summarising each frame. RoboSense streams decode only after a DIFOP, as
// rs_driver's.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/packet_decoder.hpp"

namespace lidaremu::clients {

struct FramePoint {
  float x = 0, y = 0, z = 0;
  float range_m = 0;
  std::uint16_t reflectivity = 0;
  std::uint16_t channel = 0;
  std::uint32_t column = 0;  // the scan's column (Livox: the firing within its packet)
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
  // A stream of `pattern`'s model; Ouster needs metadata (the JSON the daemon wrote, or a real
  // sensor's).
  PacketInspector(const core::ScanPattern& pattern, std::optional<core::ouster::Metadata> metadata,
                  OnFrame on_frame);
  // Feeds one data packet; returns false (and counts it) when it does not decode. A RoboSense
  // packet before the first DIFOP is counted as waiting, not bad.
  bool feed(std::span<const std::uint8_t> packet, double arrival_s);
  // Feeds one side-channel packet drivers wait for (RoboSense DIFOP, UDP 7788); false when it is
  // not a valid one.
  bool feed_difop(std::span<const std::uint8_t> packet);
  [[nodiscard]] std::uint64_t packets_before_difop() const { return waiting_packets_; }
  // Whether its drivers decode no point before a side-channel packet (RoboSense's DIFOP).
  [[nodiscard]] bool needs_side_channel() const { return decoder_->needs_side_channel(); }
  void flush();  // completes the frame in progress
  [[nodiscard]] std::uint64_t bad_packets() const { return bad_packets_; }

 private:
  void finish_frame();
  void start_if_needed(double arrival_s);
  std::unique_ptr<core::PacketDecoder> decoder_;
  std::int64_t columns_;
  core::DecodedPacket packet_;
  OnFrame on_frame_;
  FrameSummary current_;
  bool have_current_ = false;
  std::int64_t last_column_ = -1;
  std::optional<std::uint32_t> frame_count_;
  std::uint64_t bad_packets_ = 0;
  std::uint64_t waiting_packets_ = 0;
};

}  // namespace lidaremu::clients
