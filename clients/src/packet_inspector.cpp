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

PacketInspector::PacketInspector(const core::ScanPattern& pattern,
                                 std::optional<core::ouster::Metadata> metadata, OnFrame on_frame)
    : decoder_(core::make_packet_decoder(pattern, {.ouster_metadata = std::move(metadata)})),
      columns_(pattern.columns_per_frame),
      on_frame_(std::move(on_frame)) {}

bool PacketInspector::feed_difop(std::span<const std::uint8_t> packet) {
  if (!decoder_->feed_side_channel(packet)) {
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

void PacketInspector::finish_frame() {
  if (have_current_) on_frame_(current_);
  const auto next = have_current_ ? current_.index + 1 : 0;
  current_ = FrameSummary{};
  current_.index = next;
  have_current_ = false;
}

void PacketInspector::flush() { finish_frame(); }

bool PacketInspector::feed(std::span<const std::uint8_t> packet, double arrival_s) {
  switch (decoder_->decode(packet, packet_)) {
    case core::DecodeVerdict::kDecoded:
      break;
    case core::DecodeVerdict::kAwaitingSideChannel:
      ++waiting_packets_;
      return false;
    case core::DecodeVerdict::kMalformed:
      ++bad_packets_;
      return false;
  }
  const bool by_frame_count = decoder_->frame_cut() == core::FrameCut::kFrameCount;
  if (by_frame_count) {
    if (frame_count_ && *frame_count_ != packet_.frame_count) finish_frame();
    frame_count_ = packet_.frame_count;
  }
  start_if_needed(arrival_s);
  ++current_.packets;
  current_.last_arrival_s = arrival_s;
  for (const auto& r : packet_.returns) {
    if (r.range_m == 0) continue;  // a beam without a return (Livox sends one)
    // A spinning head's frame ends where the columns wrap, inside a packet or between two.
    if (!by_frame_count && last_column_ >= 0 && r.column + columns_ / 2 < last_column_) {
      finish_frame();
      start_if_needed(arrival_s);
      current_.packets = 1;
      current_.last_arrival_s = arrival_s;
    }
    if (!by_frame_count) last_column_ = r.column;
    current_.points.push_back({r.x, r.y, r.z, r.range_m, r.reflectivity, r.channel,
                               static_cast<std::uint32_t>(r.column)});
  }
  return true;
}

}  // namespace lidaremu::clients
