#include "lidaremu/core/cloud.hpp"

#include <algorithm>
#include <cmath>

namespace lidaremu::core {

void FrameTruth::assign(const FrameReturns& returns) {
  frame_number = returns.frame_number;
  beams = returns.shape.beams();
  range_m.assign(returns.range_m.begin(), returns.range_m.end());
  object_id.assign(returns.object_id.begin(), returns.object_id.end());
  kind.assign(returns.kind.begin(), returns.kind.end());
  pulse_width_ns.assign(returns.pulse_width_ns.begin(), returns.pulse_width_ns.end());
  valid = true;
}

EchoTruth FrameTruth::echo_at(std::size_t beam, float range) const {
  if (!valid || beam >= beams) return {};
  // The decoded range is the reported one quantised to the format's unit (or, for the HDL-64E,
  // before its per-laser distance correction): the nearest echo of the beam is the one sent.
  EchoTruth echo;
  float best = INFINITY;
  for (std::size_t slot = beam; slot < range_m.size(); slot += beams) {
    const float d = std::fabs(range_m[slot] - range);
    if (range_m[slot] > 0 && d < best) {
      best = d;
      echo = {object_id[slot], kind[slot], pulse_width_ns[slot]};
    }
  }
  return echo;
}

CloudDecoder::CloudDecoder(const ScanPattern& pattern, std::optional<ouster::Metadata> metadata,
                           ReturnMode echoes)
    : pattern_(pattern),
      decoder_(make_packet_decoder(pattern, {.return_mode = echoes,
                                             .ouster_metadata = std::move(metadata),
                                             .side_channel_known = true})) {}

namespace {

// A spinning head's packet stream does not break at frame ends: it starts with the previous
// frame's tail when its first column is late in the rotation, and that tail ends where the
// columns wrap to 0.
class FrameWrap {
 public:
  explicit FrameWrap(std::int64_t columns) : columns_(columns) {}
  // Whether a point of `column`, in stream order, belongs to the previous frame.
  bool in_previous_frame(std::int64_t column) {
    if (first_) {
      in_previous_ = column > columns_ / 2;
      first_ = false;
    } else if (in_previous_ && column + columns_ / 2 < last_column_) {
      in_previous_ = false;
    }
    last_column_ = column;
    return in_previous_;
  }

 private:
  std::int64_t columns_;
  bool first_ = true;
  bool in_previous_ = false;
  std::int64_t last_column_ = 0;
};

}  // namespace

int CloudDecoder::decode(std::span<const std::span<const std::uint8_t>> packets,
                         const FrameTruth& truth, const FrameTruth& previous, Cloud& out) {
  out.frame_number = truth.frame_number;
  out.points.clear();
  frame_returns_.clear();
  int bad = 0;
  bool first = true;
  for (const auto packet : packets) {
    if (decoder_->decode(packet, packet_) != DecodeVerdict::kDecoded) {
      ++bad;
      continue;
    }
    if (first) out.time_s = packet_.time_s;
    first = false;
    frame_returns_.insert(frame_returns_.end(), packet_.returns.begin(), packet_.returns.end());
  }
  decoder_->place_frame(frame_returns_, truth.frame_number);
  // Points of the previous frame's tail take their ids from `previous`: those of the columns sent
  // before the stream wrapped (spinning heads), or placed before the frame's first (Livox).
  const std::int64_t columns = pattern_.columns_per_frame;
  const auto channels = static_cast<std::size_t>(pattern_.model->channels);
  const bool wraps = decoder_->frame_cut() == FrameCut::kColumnWrap;
  FrameWrap wrap(columns);
  for (const auto& r : frame_returns_) {
    if (r.range_m == 0) continue;  // a beam without a return
    std::int64_t column = r.column;
    const bool in_previous_frame = wraps ? wrap.in_previous_frame(column) : column < 0;
    if (in_previous_frame && !previous.valid) continue;
    if (column < 0) column += columns;
    if (column < 0 || column >= columns) continue;
    const FrameTruth& owner = in_previous_frame ? previous : truth;
    const EchoTruth echo =
        owner.echo_at(static_cast<std::size_t>(column) * channels + r.channel, r.range_m);
    out.points.push_back({r.x, r.y, r.z, r.range_m, r.reflectivity, r.channel,
                          static_cast<std::uint32_t>(column), r.echo, echo.object_id, echo.kind,
                          echo.pulse_width_ns});
  }
  return bad;
}

}  // namespace lidaremu::core
