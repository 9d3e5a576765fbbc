// The Livox Mid-360's point and IMU packets (FORMATS-HESAI-ROBOSENSE.md section 3).
#include <cmath>
#include <numbers>

#include "lidaremu/core/livox.hpp"

namespace lidaremu::core::livox {

LivoxEncoder::LivoxEncoder(const ScanPattern& pattern)
    : ColumnEncoder(pattern.column_period_s),
      pattern_(pattern),
      geometry_(pattern),
      packet_(kPointPacketSize) {
  points_.reserve(kPointsPerPacket);
}

double LivoxEncoder::data_packet_period_s() const {
  return pattern_.model->livox.firings_per_packet * pattern_.column_period_s;
}

void LivoxEncoder::send_imu_up_to(double time_s, PacketSink& sink) {
  const double period_s = 1.0 / pattern_.model->livox.imu_rate_hz;
  if (next_imu_s_ < 0) next_imu_s_ = time_s;
  constexpr double kRadPerDeg = std::numbers::pi / 180.0;
  const ImuRecord record{.gyro_rad_s = {static_cast<float>(imu_.gyro_deg_s[0] * kRadPerDeg),
                                        static_cast<float>(imu_.gyro_deg_s[1] * kRadPerDeg),
                                        static_cast<float>(imu_.gyro_deg_s[2] * kRadPerDeg)},
                         .acceleration_g = imu_.accel_g};
  while (next_imu_s_ <= time_s) {
    const PacketStamp stamp{
        .timestamp_ns = static_cast<std::uint64_t>(std::llround(std::max(next_imu_s_, 0.0) * 1e9)),
        .time_type = TimeType::kPtp};
    write_imu_packet(imu_packet_, stamp, record);
    sink.on_packet(PacketChannel::kTelemetry, imu_packet_, next_imu_s_);
    next_imu_s_ += period_s;
  }
}

void LivoxEncoder::append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                                 PacketSink& sink) {
  const LivoxTraits& livox = pattern_.model->livox;
  const int channels = pattern_.model->channels;
  // A packet names the frame of its first firing, as its timestamp does: one that runs on into
  // the next frame carries the earlier frame's count (neither SDK2 nor livox_ros_driver2 reads
  // the count; livox_ros_driver2 cuts its clouds by the points' times).
  if (firings_in_packet_ == 0) {
    packet_time_s_ = time_s;
    if (returns != nullptr) frame_count_ = static_cast<std::uint8_t>(returns->frame_number & 0xFF);
  }
  for (int ch = 0; ch < channels; ++ch) {
    PointRecord point;
    if (returns != nullptr) {
      const std::size_t slot =
          returns->slot(returns->shape.beam(column, static_cast<std::uint16_t>(ch)), 0);
      const double range_m = returns->range_m[slot];
      if (range_m > 0) {
        const Eigen::Vector3d mm =
            geometry_.ray_in_frame(returns->frame_number, column, static_cast<std::uint16_t>(ch))
                .direction *
            (range_m * 1e3);
        point.x_mm = static_cast<std::int32_t>(std::lround(mm.x()));
        point.y_mm = static_cast<std::int32_t>(std::lround(mm.y()));
        point.z_mm = static_cast<std::int32_t>(std::lround(mm.z()));
        point.reflectivity = returns->reflectivity[slot];
      }
    }
    points_.push_back(point);
  }
  if (++firings_in_packet_ < livox.firings_per_packet) return;
  // livox_ros_driver2 times point i at timestamp + i * time_interval * 100 / dot_num ns: the
  // interval is the points' count times the laser step.
  const PacketStamp stamp{
      .timestamp_ns = static_cast<std::uint64_t>(std::llround(std::max(packet_time_s_, 0.0) * 1e9)),
      .time_interval_100ns = static_cast<std::uint16_t>(
          std::lround(static_cast<double>(points_.size()) * livox.laser_step_us * 10.0)),
      .udp_count = udp_count_++,
      .frame_count = frame_count_,
      .time_type = TimeType::kPtp};
  const double sent_s = time_s + pattern_.column_period_s;
  send_imu_up_to(sent_s, sink);
  const std::size_t size = write_point_packet(packet_, stamp, points_);
  sink.on_packet(PacketChannel::kData, std::span(packet_).first(size), sent_s);
  points_.clear();
  firings_in_packet_ = 0;
}

}  // namespace lidaremu::core::livox
