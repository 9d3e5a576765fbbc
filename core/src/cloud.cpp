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
                           EchoMode echoes)
    : pattern_(pattern) {
  switch (pattern.model->family) {
    case SensorFamily::kVelodyne:
      velodyne_.emplace(*pattern.model);
      break;
    case SensorFamily::kHesai:
      hesai_.emplace(
          *pattern.model->hesai.format,
          hesai::Calibration{pattern.model->elevation_deg, pattern.model->azimuth_offset_deg});
      break;
    case SensorFamily::kOuster:
      ouster_.emplace(*metadata);
      break;
    case SensorFamily::kRoboSense: {
      robosense_.emplace(*pattern.model);
      const auto* mode = pattern.model->robosense.return_mode(echoes);
      robosense_->on_difop(robosense::difop_packet(*pattern.model, robosense::difop_rpm(pattern),
                                                   mode != nullptr ? mode->difop_code : 0, 0, {}));
      break;
    }
    case SensorFamily::kLivox:
      livox_geometry_.emplace(pattern);
      break;
  }
}

int CloudDecoder::decode(std::span<const std::span<const std::uint8_t>> packets,
                         const FrameTruth& truth, const FrameTruth& previous, Cloud& out) {
  out.frame_number = truth.frame_number;
  out.points.clear();
  if (velodyne_) return decode_velodyne(packets, truth, previous, out);
  if (hesai_) return decode_hesai(packets, truth, previous, out);
  if (robosense_) return decode_robosense(packets, truth, previous, out);
  if (livox_geometry_) return decode_livox(packets, truth, previous, out);
  return ouster_ ? decode_ouster(packets, truth, out) : 0;
}

namespace {

// A spinning head's packet stream does not break at frame ends: it starts with the previous
// frame's tail when its first column is late in the rotation, and that tail ends where the
// columns wrap to 0.
class FrameWrap {
 public:
  explicit FrameWrap(std::uint32_t columns) : columns_(columns) {}
  // Whether a point of `column`, in stream order, belongs to the previous frame.
  bool in_previous_frame(std::uint32_t column) {
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
  std::uint32_t columns_;
  bool first_ = true;
  bool in_previous_ = false;
  std::uint32_t last_column_ = 0;
};

// Column azimuths are 360 degrees * c / W, sent in hundredths of a degree.
std::uint32_t column_of_azimuth(std::uint16_t centidegrees, std::uint32_t columns) {
  return static_cast<std::uint32_t>(std::lround(centidegrees * double(columns) / 36000.0)) %
         columns;
}

}  // namespace

int CloudDecoder::decode_velodyne(std::span<const std::span<const std::uint8_t>> packets,
                                  const FrameTruth& truth, const FrameTruth& previous, Cloud& out) {
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  const std::uint16_t channels = static_cast<std::uint16_t>(pattern_.model->channels);
  int bad = 0;
  bool first = true;
  FrameWrap wrap(columns);
  for (const auto packet : packets) {
    velodyne_points_.clear();
    velodyne::PacketInfo info;
    if (velodyne_->decode(packet, velodyne_points_, &info) != velodyne::DecodeError::kNone) {
      ++bad;
      continue;
    }
    if (first) out.time_s = info.timestamp_us * 1e-6;
    first = false;
    for (const auto& p : velodyne_points_) {
      const std::uint32_t column =
          (column_of_azimuth(p.block_azimuth, columns) + p.sequence) % columns;
      const bool in_previous_frame = wrap.in_previous_frame(column);
      const FrameTruth& owner = in_previous_frame ? previous : truth;
      if (in_previous_frame && !previous.valid) continue;
      const std::size_t beam = std::size_t{column} * channels + p.laser;
      const EchoTruth echo = owner.echo_at(beam, p.distance_m);
      out.points.push_back({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.laser, column,
                            static_cast<std::uint8_t>(p.return_kind == 2 ? 1 : 0), echo.object_id,
                            echo.kind, echo.pulse_width_ns});
    }
  }
  return bad;
}

int CloudDecoder::decode_hesai(std::span<const std::span<const std::uint8_t>> packets,
                               const FrameTruth& truth, const FrameTruth& previous, Cloud& out) {
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  const auto channels = static_cast<std::size_t>(pattern_.model->channels);
  int bad = 0;
  bool first = true;
  FrameWrap wrap(columns);
  for (const auto packet : packets) {
    hesai_points_.clear();
    hesai::PacketInfo info;
    if (hesai_->decode(packet, hesai_points_, &info) != hesai::DecodeError::kNone) {
      ++bad;
      continue;
    }
    if (first) out.time_s = info.time_s;
    first = false;
    const int returns = std::max(1, info.return_num);
    for (const auto& p : hesai_points_) {
      const std::uint32_t column = column_of_azimuth(p.block_azimuth, columns);
      const bool in_previous_frame = wrap.in_previous_frame(column);
      const FrameTruth& owner = in_previous_frame ? previous : truth;
      if (in_previous_frame && !previous.valid) continue;
      const EchoTruth echo = owner.echo_at(column * channels + p.channel, p.distance_m);
      out.points.push_back({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.channel, column,
                            static_cast<std::uint8_t>(p.block % returns), echo.object_id, echo.kind,
                            echo.pulse_width_ns});
    }
  }
  return bad;
}

int CloudDecoder::decode_robosense(std::span<const std::span<const std::uint8_t>> packets,
                                   const FrameTruth& truth, const FrameTruth& previous,
                                   Cloud& out) {
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  const auto channels = static_cast<std::size_t>(pattern_.model->channels);
  const int returns = robosense_->dual() ? 2 : 1;
  int bad = 0;
  bool first = true;
  FrameWrap wrap(columns);
  for (const auto packet : packets) {
    robosense_points_.clear();
    robosense::PacketInfo info;
    if (robosense_->decode(packet, robosense_points_, &info) != robosense::DecodeError::kNone) {
      ++bad;
      continue;
    }
    if (first) out.time_s = info.time_s;
    first = false;
    for (const auto& p : robosense_points_) {
      const std::uint32_t column = column_of_azimuth(p.block_azimuth, columns);
      const bool in_previous_frame = wrap.in_previous_frame(column);
      const FrameTruth& owner = in_previous_frame ? previous : truth;
      if (in_previous_frame && !previous.valid) continue;
      const EchoTruth echo = owner.echo_at(column * channels + p.channel, p.distance_m);
      out.points.push_back({p.x, p.y, p.z, p.distance_m, p.intensity, p.channel, column,
                            static_cast<std::uint8_t>(p.block % returns), echo.object_id, echo.kind,
                            echo.pulse_width_ns});
    }
  }
  return bad;
}

int CloudDecoder::decode_ouster(std::span<const std::span<const std::uint8_t>> packets,
                                const FrameTruth& truth, Cloud& out) {
  const auto channels = static_cast<std::size_t>(pattern_.model->channels);
  int bad = 0;
  bool first = true;
  for (const auto packet : packets) {
    ouster_columns_.clear();
    if (ouster_->decode(packet, ouster_columns_) != ouster::DecodeError::kNone) {
      ++bad;
      continue;
    }
    for (const auto& column : ouster_columns_) {
      if (first) out.time_s = static_cast<double>(column.timestamp_ns) * 1e-9;
      first = false;
      for (int row = 0; row < static_cast<int>(column.pixels.size()); ++row) {
        const auto& px = column.pixels[static_cast<std::size_t>(row)];
        const std::size_t beam = column.measurement_id * channels + static_cast<std::size_t>(row);
        const auto add = [&](std::uint32_t range_mm, std::uint16_t reflectivity,
                             std::uint8_t echo) {
          if (range_mm == 0) return;
          const auto xyz = ouster_->to_xyz(column, row, range_mm);
          const float range = static_cast<float>(range_mm) * 0.001f;
          const EchoTruth t = truth.echo_at(beam, range);
          out.points.push_back({static_cast<float>(xyz[0]), static_cast<float>(xyz[1]),
                                static_cast<float>(xyz[2]), range, reflectivity,
                                static_cast<std::uint16_t>(row), column.measurement_id, echo,
                                t.object_id, t.kind, t.pulse_width_ns});
        };
        add(px.range_mm, px.reflectivity, 0);
        add(px.range2_mm, px.reflectivity2, 1);
      }
    }
  }
  return bad;
}

}  // namespace lidaremu::core
