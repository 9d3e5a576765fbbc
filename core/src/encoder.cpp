#include "lidaremu/core/encoder.hpp"

#include <algorithm>

#include "lidaremu/core/family.hpp"

namespace lidaremu::core {

void ColumnEncoder::encode_columns(const FrameReturns& returns, double frame_start_s,
                                   std::uint32_t end, PacketSink& sink) {
  end = std::min(end, returns.shape.columns);
  for (; frame_column_ < end; ++frame_column_) {
    append_column(&returns, frame_column_, frame_start_s + frame_column_ * column_period_s_, sink);
  }
  if (end < returns.shape.columns) return;
  frame_column_ = 0;
  next_column_ = 0;
  next_time_s_ = frame_start_s + returns.shape.columns * column_period_s_;
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
