#include "lidaremu/clients/packet_inspector.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lidaremu::clients {

std::string FrameSummary::describe() const {
  char line[256];
  if (points.empty()) {
    std::snprintf(line, sizeof line, "frame %4llu  packets %4d  points      0",
                  static_cast<unsigned long long>(index), packets);
    return line;
  }
  std::vector<float> ranges;
  std::vector<std::uint16_t> refl;
  for (const auto& p : points) {
    ranges.push_back(p.range_m);
    refl.push_back(p.reflectivity);
  }
  std::sort(ranges.begin(), ranges.end());
  std::sort(refl.begin(), refl.end());
  auto pct = [](const auto& v, double q) {
    return v[static_cast<std::size_t>(q * (v.size() - 1))];
  };
  const double span = last_arrival_s - first_arrival_s;
  const double rate = span > 0 && packets > 1 ? (packets - 1) / span : 0.0;
  std::snprintf(line, sizeof line,
                "frame %4llu  packets %4d  points %6zu  range %6.2f..%6.2f m  reflectivity "
                "p5/p50/p95/max %3u/%3u/%3u/%3u  rate %6.0f pkt/s",
                static_cast<unsigned long long>(index), packets, points.size(), ranges.front(),
                ranges.back(), pct(refl, 0.05), pct(refl, 0.5), pct(refl, 0.95), refl.back(), rate);
  return line;
}

PacketInspector::PacketInspector(const core::SensorModel& model,
                                 std::optional<core::ouster::Metadata> metadata, OnFrame on_frame)
    : on_frame_(std::move(on_frame)) {
  switch (model.family) {
    case core::SensorFamily::kVelodyne:
      velodyne_.emplace(model);
      break;
    case core::SensorFamily::kHesai:
      hesai_.emplace(*model.hesai.format,
                     core::hesai::Calibration{model.elevation_deg, model.azimuth_offset_deg});
      break;
    case core::SensorFamily::kOuster:
      ouster_.emplace(*metadata);
      break;
    case core::SensorFamily::kRoboSense:
      robosense_.emplace(model);
      break;
    case core::SensorFamily::kLivox:
      livox_ = true;
      break;
  }
}

bool PacketInspector::feed_difop(std::span<const std::uint8_t> packet) {
  if (!robosense_ || robosense_->on_difop(packet) != core::robosense::DifopError::kNone) {
    ++bad_packets_;
    return false;
  }
  return true;
}

void PacketInspector::start_if_needed(double arrival_s) {
  if (!have_current_) {
    have_current_ = true;
    current_.first_arrival_s = arrival_s;
  }
}

void PacketInspector::add_spinning_point(const FramePoint& point, float azimuth_deg,
                                         double arrival_s) {
  if (last_azimuth_ >= 0 && azimuth_deg + 180.0f < last_azimuth_) {
    finish_frame();
    start_if_needed(arrival_s);
    current_.packets = 1;
    current_.last_arrival_s = arrival_s;
  }
  last_azimuth_ = azimuth_deg;
  current_.points.push_back(point);
}

void PacketInspector::finish_frame() {
  if (have_current_) on_frame_(current_);
  const auto next = have_current_ ? current_.index + 1 : 0;
  current_ = FrameSummary{};
  current_.index = next;
  have_current_ = false;
}

void PacketInspector::flush() { finish_frame(); }

// A frame is the packets of one frame count; a beam without a return is the point (0, 0, 0).
bool PacketInspector::feed_livox(std::span<const std::uint8_t> packet, double arrival_s) {
  scratch_livox_.clear();
  core::livox::PacketInfo info;
  if (core::livox::decode_points(packet, scratch_livox_, &info) !=
      core::livox::DecodeError::kNone) {
    ++bad_packets_;
    return false;
  }
  if (frame_id_ && *frame_id_ != info.frame_count) finish_frame();
  frame_id_ = info.frame_count;
  start_if_needed(arrival_s);
  ++current_.packets;
  current_.last_arrival_s = arrival_s;
  for (std::size_t i = 0; i < scratch_livox_.size(); ++i) {
    const auto& p = scratch_livox_[i];
    if (p.x == 0 && p.y == 0 && p.z == 0) continue;
    const float range = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    current_.points.push_back(
        {p.x, p.y, p.z, range, p.reflectivity, static_cast<std::uint16_t>(i % 4), info.udp_count});
  }
  return true;
}

bool PacketInspector::feed(std::span<const std::uint8_t> packet, double arrival_s) {
  const auto take_packet = [&] {
    start_if_needed(arrival_s);
    ++current_.packets;
    current_.last_arrival_s = arrival_s;
  };
  if (velodyne_) {
    scratch_points_.clear();
    if (velodyne_->decode(packet, scratch_points_) != core::velodyne::DecodeError::kNone) {
      ++bad_packets_;
      return false;
    }
    take_packet();
    for (const auto& p : scratch_points_) {
      add_spinning_point({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.laser, 0}, p.azimuth_deg,
                         arrival_s);
    }
    return true;
  }
  if (hesai_) {
    scratch_hesai_.clear();
    if (hesai_->decode(packet, scratch_hesai_) != core::hesai::DecodeError::kNone) {
      ++bad_packets_;
      return false;
    }
    take_packet();
    for (const auto& p : scratch_hesai_) {
      add_spinning_point({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.channel, 0},
                         p.block_azimuth * 0.01f, arrival_s);
    }
    return true;
  }
  if (robosense_) {
    scratch_robosense_.clear();
    const auto error = robosense_->decode(packet, scratch_robosense_);
    if (error == core::robosense::DecodeError::kNoDifop) {
      ++waiting_packets_;
      return false;
    }
    if (error != core::robosense::DecodeError::kNone) {
      ++bad_packets_;
      return false;
    }
    take_packet();
    for (const auto& p : scratch_robosense_) {
      add_spinning_point({p.x, p.y, p.z, p.distance_m, p.intensity, p.channel, 0},
                         p.block_azimuth * 0.01f, arrival_s);
    }
    return true;
  }
  if (livox_) return feed_livox(packet, arrival_s);
  scratch_columns_.clear();
  if (!ouster_ || ouster_->decode(packet, scratch_columns_) != core::ouster::DecodeError::kNone) {
    ++bad_packets_;
    return false;
  }
  const std::uint16_t frame_id = scratch_columns_.front().frame_id;
  if (frame_id_ && *frame_id_ != frame_id) finish_frame();
  frame_id_ = frame_id;
  take_packet();
  for (const auto& column : scratch_columns_) {
    for (int row = 0; row < static_cast<int>(column.pixels.size()); ++row) {
      const auto& px = column.pixels[row];
      if (px.range_mm == 0) continue;
      const auto xyz = ouster_->to_xyz(column, row);
      current_.points.push_back({static_cast<float>(xyz[0]), static_cast<float>(xyz[1]),
                                 static_cast<float>(xyz[2]), px.range_mm * 0.001f, px.reflectivity,
                                 static_cast<std::uint16_t>(row), column.measurement_id});
    }
  }
  return true;
}

}  // namespace lidaremu::clients
