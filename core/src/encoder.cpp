#include "lidaremu/core/encoder.hpp"

#include <algorithm>

#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/velodyne.hpp"

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

bool family_supports(SensorFamily family, EchoMode echoes) {
  switch (family) {
    case SensorFamily::kVelodyne:
      return echoes == EchoMode::kStrongest || echoes == EchoMode::kLast ||
             echoes == EchoMode::kDual;
    case SensorFamily::kOuster:
      return echoes == EchoMode::kStrongest || echoes == EchoMode::kTwoStrongest;
    case SensorFamily::kHesai:
      return hesai::return_mode_byte(echoes) != 0;
    case SensorFamily::kRoboSense:
      return echoes == EchoMode::kStrongest || echoes == EchoMode::kLast ||
             echoes == EchoMode::kFirst || echoes == EchoMode::kDual;
    case SensorFamily::kLivox:  // the Mid-360's datasheet: first return
      return echoes == EchoMode::kFirst;
  }
  return false;
}

EchoMode ouster_echoes(OusterProfile profile) {
  return profile == OusterProfile::kRng19Dual ? EchoMode::kTwoStrongest : EchoMode::kStrongest;
}

std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                      EchoMode echoes, const OusterOutput& ouster) {
  if (!family_supports(pattern.model->family, echoes)) return nullptr;
  if (echoes == EchoMode::kDual && !pattern.model->velodyne.dual_return) return nullptr;
  if (pattern.model->family == SensorFamily::kHesai &&
      pattern.model->hesai.return_mode(echoes) == nullptr) {
    return nullptr;
  }
  if (pattern.model->family == SensorFamily::kRoboSense &&
      pattern.model->robosense.return_mode(echoes) == nullptr) {
    return nullptr;
  }
  if (pattern.model->family == SensorFamily::kOuster && echoes != ouster_echoes(ouster.profile)) {
    return nullptr;
  }
  switch (pattern.model->family) {
    case SensorFamily::kVelodyne:
      return std::make_unique<velodyne::VelodyneEncoder>(pattern, identity, echoes);
    case SensorFamily::kOuster:
      return std::make_unique<ouster::OusterEncoder>(pattern, identity, ouster);
    case SensorFamily::kHesai:
      return std::make_unique<hesai::HesaiEncoder>(pattern, identity, echoes);
    case SensorFamily::kRoboSense:
      return std::make_unique<robosense::RoboSenseEncoder>(pattern, identity, echoes);
    case SensorFamily::kLivox:
      if (pattern.table == nullptr) return nullptr;
      return std::make_unique<livox::LivoxEncoder>(pattern);
  }
  return nullptr;
}

}  // namespace lidaremu::core
