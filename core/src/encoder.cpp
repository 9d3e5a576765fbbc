#include "lidaremu/core/encoder.hpp"

#include <algorithm>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/parallel_blocks.hpp"

namespace lidaremu::core {

void ColumnEncoder::encode_columns(const FrameReturns& returns, double frame_start_s,
                                   std::uint32_t end, PacketSink& sink) {
  end = std::min(end, returns.shape.columns);
  while (frame_column_ < end) {
    if (!packet_open() && encode_whole_packets(returns, frame_start_s, end, sink)) continue;
    append_column(&returns, frame_column_, column_time_s(frame_start_s, frame_column_), sink);
    ++frame_column_;
  }
  if (end < returns.shape.columns) return;
  frame_column_ = 0;
  next_column_ = 0;
  next_time_s_ = frame_start_s + returns.shape.columns * column_period_s_;
}

bool ColumnEncoder::encode_whole_packets(const FrameReturns& returns, double frame_start_s,
                                         std::uint32_t end, PacketSink& sink) {
  const std::uint32_t per_packet = columns_per_whole_packet();
  if (per_packet == 0 || staged_.empty()) return false;
  // A packet begins at frame_column_ (none is open); each of these is whole where its columns
  // all fire, as append_column would have filled it. At most kPacketsAtOnce: the room's limit.
  const std::uint32_t room =
      std::min<std::uint32_t>(end, frame_column_ + kPacketsAtOnce * per_packet);
  const std::size_t count = firing_run(frame_column_, room) / per_packet;
  if (count < 2) return false;
  const std::size_t size = staged_.size() / kPacketsAtOnce;
  const std::uint32_t first = frame_column_;
  const auto staged = [&](std::size_t i) { return std::span(staged_).subspan(i * size, size); };
  const auto first_of = [&](std::size_t i) {
    return first + static_cast<std::uint32_t>(i) * per_packet;
  };
  // In the calling thread's own arena (not the physics'): it is outside the physics gate, and
  // its tasks stay apart from other sensors' physics.
  parallel_blocks_isolated(tbb::blocked_range<std::size_t>(0, count), staged_.data(),
                           [&](const tbb::blocked_range<std::size_t>& r) {
                             for (std::size_t i = r.begin(); i < r.end(); ++i) {
                               write_packet(staged(i), returns, first_of(i), frame_start_s,
                                            static_cast<std::uint32_t>(i));
                             }
                           });
  for (std::size_t i = 0; i < count; ++i) {
    send_packet(staged(i), first_of(i), frame_start_s, sink);
  }
  frame_column_ = first_of(count);
  return true;
}

void ColumnEncoder::flush(PacketSink& sink) {
  while (packet_open()) {
    append_column(nullptr, next_column_, next_time_s_, sink);
    ++next_column_;
    next_time_s_ += column_period_s_;
  }
}

bool family_supports(SensorFamily family, ReturnMode echoes) {
  return family_of(family).supports(echoes);
}

ReturnMode ouster_return_mode(OusterProfile profile) {
  return profile == OusterProfile::kRng19Dual ? ReturnMode::kTwoStrongest : ReturnMode::kStrongest;
}

std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                      ReturnMode echoes, const OusterOutput& ouster) {
  return family_of(*pattern.model).make_encoder(pattern, identity, echoes, ouster);
}

}  // namespace lidaremu::core
