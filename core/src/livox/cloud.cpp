// A Livox unit's frame as a cloud with its ground truth. The stream of 24-firing packets does
// not break at frame ends (5,000 firings a frame are not whole packets): a frame's first packet
// starts with the previous frame's last few firings. Their number is found from where the points
// point: the frame's own firings lie on the scan table's directions for this frame number.
#include "lidaremu/core/cloud.hpp"

#include <cmath>

namespace lidaremu::core {
namespace {

// Near points are rounded the most (a millimetre per coordinate): directions are compared only
// beyond a metre, where that is under a milliradian.
constexpr float kMinCompareRangeM = 1.0f;
constexpr double kSameDirectionCos = 0.99998;  // 6.3 mrad (0.36 degrees)

bool points_along(const livox::Point& p, const BeamRay& ray) {
  const Eigen::Vector3d v(p.x, p.y, p.z);
  const double n = v.norm();
  return n >= kMinCompareRangeM && v.dot(ray.direction) / n > kSameDirectionCos;
}

}  // namespace

int CloudDecoder::decode_livox(std::span<const std::span<const std::uint8_t>> packets,
                               const FrameTruth& truth, const FrameTruth& previous, Cloud& out) {
  const int channels = pattern_.model->channels;
  const auto columns = static_cast<std::int64_t>(pattern_.columns_per_frame);
  const int firings = pattern_.model->livox.firings_per_packet;
  const auto packet_points = static_cast<std::size_t>(firings) * static_cast<std::size_t>(channels);
  int bad = 0;
  bool first = true;
  livox_points_.clear();
  for (const auto packet : packets) {
    livox::PacketInfo info;
    const std::size_t before = livox_points_.size();
    if (livox::decode_points(packet, livox_points_, &info) != livox::DecodeError::kNone ||
        livox_points_.size() - before != packet_points) {
      livox_points_.resize(before);
      ++bad;
      continue;
    }
    if (first) out.time_s = static_cast<double>(info.timestamp_ns) * 1e-9;
    first = false;
  }
  // The carried firings: the offset under which most of the points compared lie on this frame's
  // beams (past the first packet, whose start may be the previous frame's).
  const auto column_of = [&](std::size_t index, int carried) {
    return static_cast<std::int64_t>(index) / channels - carried;
  };
  int carried = 0, best_matches = -1;
  for (int c = 0; c < firings; ++c) {
    int matches = 0, compared = 0;
    for (std::size_t i = packet_points; i < livox_points_.size() && compared < 32; ++i) {
      const std::int64_t column = column_of(i, c);
      if (column >= columns || column < 0) break;
      const auto& p = livox_points_[i];
      if (std::hypot(p.x, p.y, p.z) < kMinCompareRangeM) continue;
      ++compared;
      matches += points_along(
          p, livox_geometry_->ray_in_frame(truth.frame_number, static_cast<std::uint32_t>(column),
                                           static_cast<std::uint16_t>(i % channels)));
    }
    if (matches > best_matches) best_matches = matches, carried = c;
  }
  for (std::size_t i = 0; i < livox_points_.size(); ++i) {
    const auto& p = livox_points_[i];
    if (p.x == 0 && p.y == 0 && p.z == 0) continue;  // no return
    std::int64_t column = column_of(i, carried);
    const bool in_previous_frame = column < 0;
    if (in_previous_frame && !previous.valid) continue;
    if (in_previous_frame) column += columns;
    if (column >= columns) continue;
    const auto channel = static_cast<std::uint16_t>(i % static_cast<std::size_t>(channels));
    const float range = std::hypot(p.x, p.y, p.z);
    const EchoTruth echo =
        (in_previous_frame ? previous : truth)
            .echo_at(static_cast<std::size_t>(column) * channels + channel, range);
    out.points.push_back({p.x, p.y, p.z, range, p.reflectivity, channel,
                          static_cast<std::uint32_t>(column), 0, echo.object_id, echo.kind,
                          echo.pulse_width_ns});
  }
  return bad;
}

}  // namespace lidaremu::core
