// A Livox point stream as livox_ros_driver2 decodes it (livox::decode_points). The stream of
// 24-firing packets does not break at frame ends (5,000 firings a frame are not whole packets): a
// frame's first packet starts with the previous frame's last few firings. Their number is found
// from where the points point: the frame's own firings lie on the scan table's directions for
// this frame number.
#include "lidaremu/core/packet_decoder.hpp"

#include <cmath>
#include <optional>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/livox.hpp"

namespace lidaremu::core::livox {
namespace {

// Near points are rounded the most (a millimetre per coordinate): directions are compared only
// beyond a metre, where that is under a milliradian.
constexpr float kMinCompareRangeM = 1.0f;
constexpr double kSameDirectionCos = 0.99998;  // 6.3 mrad (0.36 degrees)

bool points_along(const DecodedReturn& p, const BeamRay& ray) {
  const Eigen::Vector3d v(p.x, p.y, p.z);
  const double n = v.norm();
  return n >= kMinCompareRangeM && v.dot(ray.direction) / n > kSameDirectionCos;
}

class LivoxDecoder final : public PacketDecoder {
 public:
  explicit LivoxDecoder(const ScanPattern& pattern)
      : channels_(pattern.model->channels),
        columns_(pattern.columns_per_frame),
        firings_(pattern.model->livox.firings_per_packet) {
    if (pattern.table) geometry_.emplace(pattern);
  }

  [[nodiscard]] FrameCut frame_cut() const override { return FrameCut::kFrameCount; }

  // Every point, those of beams without a return (0, 0, 0) too: a point's place in the stream
  // is its firing and laser.
  DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) override {
    points_.clear();
    out.returns.clear();
    PacketInfo info;
    if (decode_points(packet, points_, &info) != DecodeError::kNone ||
        points_.size() != static_cast<std::size_t>(firings_) * channels_) {
      return DecodeVerdict::kMalformed;
    }
    out.time_s = static_cast<double>(info.timestamp_ns) * 1e-9;
    out.frame_count = info.frame_count;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const auto& p = points_[i];
      const float range = std::hypot(p.x, p.y, p.z);
      out.returns.push_back({p.x, p.y, p.z, range, p.reflectivity,
                             static_cast<std::uint16_t>(i % static_cast<std::size_t>(channels_)),
                             static_cast<std::int64_t>(i) / channels_, 0});
    }
    return DecodeVerdict::kDecoded;
  }

  [[nodiscard]] std::size_t count_returns(std::span<const std::uint8_t> packet) const override {
    count_scratch_.clear();
    if (decode_points(packet, count_scratch_) != DecodeError::kNone) return 0;
    std::size_t n = 0;
    for (const auto& p : count_scratch_) n += p.x != 0 || p.y != 0 || p.z != 0;
    return n;
  }

  // The point packet's timestamp: its first firing.
  [[nodiscard]] double first_column_time_s(std::span<const std::uint8_t> packet) const override {
    PacketInfo info;
    if (read_header(packet, info) != DecodeError::kNone) return -1;
    return static_cast<double>(info.timestamp_ns) * 1e-9;
  }

  // The carried firings: the offset under which most of the points compared lie on this frame's
  // beams (past the first packet, whose start may be the previous frame's).
  // Without the scan table (a stream inspected alone), the columns stay the packets' firings.
  void place_frame(std::span<DecodedReturn> returns, std::uint32_t frame_number) const override {
    if (!geometry_) return;
    const auto packet_points = static_cast<std::size_t>(firings_) * channels_;
    const auto column_of = [&](std::size_t index, int carried) {
      return static_cast<std::int64_t>(index) / channels_ - carried;
    };
    int carried = 0, best_matches = -1;
    for (int c = 0; c < firings_; ++c) {
      int matches = 0, compared = 0;
      for (std::size_t i = packet_points; i < returns.size() && compared < 32; ++i) {
        const std::int64_t column = column_of(i, c);
        if (column >= columns_ || column < 0) break;
        if (returns[i].range_m < kMinCompareRangeM) continue;
        ++compared;
        matches += points_along(
            returns[i], geometry_->ray_in_frame(frame_number, static_cast<std::uint32_t>(column),
                                                static_cast<std::uint16_t>(i % channels_)));
      }
      if (matches > best_matches) best_matches = matches, carried = c;
    }
    for (std::size_t i = 0; i < returns.size(); ++i) returns[i].column = column_of(i, carried);
  }

 private:
  std::optional<BeamGeometry> geometry_;
  int channels_;
  std::int64_t columns_;
  int firings_;
  std::vector<Point> points_;
  // count_returns' scratch: one decoder serves one stream on one thread.
  mutable std::vector<Point> count_scratch_;
};

}  // namespace

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern) {
  return std::make_unique<LivoxDecoder>(pattern);
}

}  // namespace lidaremu::core::livox
