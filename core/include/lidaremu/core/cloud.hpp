#pragma once
// Decoded point clouds: what a driver makes of one frame's packets (decoded with the spec
// decoders), each point carrying the ground-truth object id of the echo that produced it. The
// live view and the exports are built on this, so what they show is what drivers receive.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/packet_decoder.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

struct CloudPoint {
  float x = 0, y = 0, z = 0;  // metres, the sensor frame its driver reports in
  float range_m = 0;
  std::uint16_t reflectivity = 0;
  std::uint16_t ring = 0;    // channel (laser id, Ouster row, Hesai channel from 0)
  std::uint32_t column = 0;  // rotation step within the frame
  std::uint8_t echo = 0;     // 0 first reported return, 1 second, ...
  std::uint32_t object_id = 0;
  std::uint8_t kind = 0;     // what made the echo (ReturnKind: target, ghost, drop, bloom, ...)
  float pulse_width_ns = 0;  // echo pulse width (PHYSICS.md 8)
};

// The ground truth of one reported echo.
struct EchoTruth {
  std::uint32_t object_id = 0;
  std::uint8_t kind = 0;
  float pulse_width_ns = 0;
};

struct Cloud {
  std::uint32_t frame_number = 0;
  double time_s = 0;  // sensor time of the frame's first packet
  std::vector<CloudPoint> points;
};

// The echoes of one frame as the pipeline reported them: enough to say which echo, and so which
// object, a decoded point came from.
struct FrameTruth {
  std::uint32_t frame_number = 0;
  std::size_t beams = 0;
  std::vector<float> range_m;  // FrameReturns layout: echo * beams + beam
  std::vector<std::uint32_t> object_id;
  std::vector<std::uint8_t> kind;
  std::vector<float> pulse_width_ns;
  bool valid = false;
  void assign(const FrameReturns& returns);
  // The echo on `beam` whose range is nearest `range_m` (all zero when there is none).
  [[nodiscard]] EchoTruth echo_at(std::size_t beam, float range_m) const;
};

class CloudDecoder {
 public:
  // Ouster streams need the metadata the emulated sensor serves; RoboSense streams the DIFOP the
  // emulated unit sends, which names its return mode (`echoes`).
  CloudDecoder(const ScanPattern& pattern, std::optional<ouster::Metadata> metadata,
               ReturnMode echoes = ReturnMode::kStrongest);
  // One frame's data packets in the order they were sent. A spinning head's packet stream does not
  // break at frame ends: points of columns sent before the stream wrapped to column 0 belong to
  // the previous frame and take their ids from `previous` (dropped when it is not valid).
  // Returns the number of packets that did not decode.
  int decode(std::span<const std::span<const std::uint8_t>> packets, const FrameTruth& truth,
             const FrameTruth& previous, Cloud& out);
  // Whether a frame's packets begin with the previous frame's last columns (spinning heads,
  // Livox), so that a frame is whole only with the frame before it.
  [[nodiscard]] bool frames_carry_previous_tail() const {
    return decoder_->frames_carry_previous_tail();
  }

 private:
  ScanPattern pattern_;
  std::unique_ptr<PacketDecoder> decoder_;
  DecodedPacket packet_;
  std::vector<DecodedReturn> frame_returns_;  // the frame's, in stream order
};

}  // namespace lidaremu::core
