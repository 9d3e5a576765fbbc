// The Ouster encoder: lidar packets in every UDP profile, IMU packets at 100 Hz in time order.
#include <algorithm>
#include <cmath>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"

namespace lidaremu::core::ouster {
namespace {

std::uint64_t to_ns(double seconds) {
  return seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e9));
}


}  // namespace

std::array<std::uint8_t, kImuPacketSize> imu_packet(std::uint64_t time_ns,
                                                    const std::array<float, 3>& accel_g,
                                                    const std::array<float, 3>& gyro_deg_s) {
  std::array<std::uint8_t, kImuPacketSize> p{};
  store_le<std::uint64_t>(p, 0, time_ns);
  store_le<std::uint64_t>(p, 8, time_ns);
  store_le<std::uint64_t>(p, 16, time_ns);
  for (int i = 0; i < 3; ++i) {
    store_le<float>(p, 24 + 4 * i, accel_g[i]);
    store_le<float>(p, 36 + 4 * i, gyro_deg_s[i]);
  }
  return p;
}

OusterEncoder::OusterEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                             const OusterOutput& output)
    : pattern_(pattern),
      identity_(identity),
      output_(output),
      layout_(profile_layout(output.profile)),
      packet_(
          layout_.packet_size(pattern.model->channels, pattern.model->ouster.columns_per_packet)) {}

double OusterEncoder::data_packet_period_s() const {
  return pattern_.column_period_s * pattern_.model->ouster.columns_per_packet;
}

bool OusterEncoder::column_in_window(std::uint32_t column) const {
  const std::uint64_t angle_mdeg =
      std::uint64_t{column} * 360000 / static_cast<std::uint64_t>(pattern_.columns_per_frame);
  const std::uint32_t start = output_.azimuth_window_start_mdeg;
  const std::uint32_t end = output_.azimuth_window_end_mdeg;
  return start <= end ? angle_mdeg >= start && angle_mdeg <= end
                      : angle_mdeg >= start || angle_mdeg <= end;
}

std::uint64_t OusterEncoder::timestamp_ns(double sensor_time_s) const {
  switch (output_.timestamp_mode) {
    case OusterTimestampMode::kPtp:
      return to_ns(sensor_time_s + kTaiMinusUtcS);
    case OusterTimestampMode::kInternalOsc:
      break;
  }
  return to_ns(sensor_time_s - output_.power_on_time_s);
}

void OusterEncoder::encode_columns(const FrameReturns& returns, double frame_start_s,
                                   std::uint32_t end, PacketSink& sink) {
  const SensorModel& model = *pattern_.model;
  const auto per_packet = static_cast<std::uint32_t>(model.ouster.columns_per_packet);
  const bool legacy = output_.profile == OusterProfile::kLegacy;
  const std::size_t column_bytes =
      layout_.column_header + model.channels * layout_.pixel + layout_.column_footer;
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  // The IMU reports at 100 Hz what the engine's poses imply (at rest: one g upwards). Its
  // packets go out in time order with the lidar packets, as on the real sensor's wire.
  const int imu_packets = static_cast<int>(std::lround(pattern_.frame_period_s * kImuRateHz));
  auto send_imu_until = [&](double t) {
    for (; imu_sent_ < imu_packets && frame_start_s + imu_sent_ / kImuRateHz <= t; ++imu_sent_) {
      const double imu_time = frame_start_s + imu_sent_ / kImuRateHz;
      const auto imu = imu_packet(timestamp_ns(imu_time), motion_.accel_g, motion_.gyro_deg_s);
      sink.on_packet(PacketChannel::kTelemetry, imu, imu_time);
    }
  };
  for (; next_packet_column_ < columns && next_packet_column_ + per_packet <= end;
       next_packet_column_ += per_packet) {
    const std::uint32_t first = next_packet_column_;
    bool any_in_window = false;
    for (std::uint32_t k = 0; k < per_packet; ++k) any_in_window |= column_in_window(first + k);
    // A packet leaves when its last column has been measured; none outside the window.
    const double sent_at = frame_start_s + (first + per_packet - 1) * pattern_.column_period_s;
    send_imu_until(sent_at);
    if (!any_in_window) continue;
    std::fill(packet_.begin(), packet_.end(), std::uint8_t{0});
    if (!legacy) {
      store_le<std::uint16_t>(packet_, 0, kPacketTypeLidar);
      store_le<std::uint16_t>(packet_, 2, frame_id_);
      store_le<std::uint32_t>(packet_, 4, identity_.init_id & 0xFFFFFFu);  // byte 7 follows
      store_le<std::uint64_t>(packet_, 7, identity_.serial_number & 0xFFFFFFFFFFull);
      packet_[12] = 0;  // alert flags: none
    }
    for (std::uint32_t k = 0; k < per_packet; ++k) {
      const std::uint32_t c = first + k;
      write_column(returns, c, layout_.packet_header + k * column_bytes,
                   timestamp_ns(frame_start_s + c * pattern_.column_period_s));
    }
    if (!legacy) {
      const std::size_t crc_at = packet_.size() - 8;
      store_le<std::uint64_t>(packet_, crc_at, crc64_xz(std::span(packet_).first(crc_at)));
    }
    sink.on_packet(PacketChannel::kData, packet_, sent_at);
  }
  if (end < columns) return;
  send_imu_until(frame_start_s + pattern_.frame_period_s);
  ++frame_id_;
  next_packet_column_ = 0;
  imu_sent_ = 0;
}

void OusterEncoder::write_column(const FrameReturns& returns, std::uint32_t column, std::size_t at,
                                 std::uint64_t timestamp_ns) {
  const SensorModel& model = *pattern_.model;
  const bool legacy = output_.profile == OusterProfile::kLegacy;
  const bool valid = column_in_window(column);
  const std::size_t column_bytes =
      layout_.column_header + model.channels * layout_.pixel + layout_.column_footer;
  store_le<std::uint64_t>(packet_, at, timestamp_ns);
  store_le<std::uint16_t>(packet_, at + 8, static_cast<std::uint16_t>(column));
  if (legacy) {
    store_le<std::uint16_t>(packet_, at + 10, frame_id_);
    store_le<std::uint32_t>(
        packet_, at + 12,
        static_cast<std::uint32_t>(std::uint64_t{column} * kEncoderTicksPerTurn /
                                   pattern_.columns_per_frame));
    store_le<std::uint32_t>(packet_, at + column_bytes - kLegacyColumnFooter,
                            valid ? kColumnValid : 0u);
  } else {
    store_le<std::uint16_t>(packet_, at + 10, valid ? 1 : 0);
  }
  if (!valid) return;
  for (int row = 0; row < model.channels; ++row) {
    write_pixel(returns, returns.shape.beam(column, static_cast<std::uint16_t>(row)),
                at + layout_.column_header + row * layout_.pixel);
  }
}

void OusterEncoder::write_pixel(const FrameReturns& returns, std::size_t beam, std::size_t px) {
  // A range the field cannot hold is sent as no return, never wrapped.
  const auto field = [](float range_m, std::uint32_t unit_mm, std::uint32_t max) {
    const auto units = static_cast<std::uint32_t>(std::lround(range_m * 1000.0 / unit_mm));
    return units > max ? 0u : units;
  };
  const std::size_t first = returns.slot(beam, 0);
  switch (output_.profile) {
    case OusterProfile::kLegacy: {
      const std::uint32_t range = field(returns.range_m[first], 1, 0xFFFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint16_t>(packet_, px + 8, returns.near_ir[beam]);  // with or without echo
      if (range == 0) return;
      store_le<std::uint16_t>(packet_, px + 4, returns.reflectivity[first]);
      store_le<std::uint16_t>(packet_, px + 6, returns.signal_photons[first]);
      return;
    }
    case OusterProfile::kRng19: {
      const std::uint32_t range = field(returns.range_m[first], 1, 0x7FFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint16_t>(packet_, px + 8, returns.near_ir[beam]);
      if (range == 0) return;
      packet_[px + 4] = returns.reflectivity[first];
      store_le<std::uint16_t>(packet_, px + 6, returns.signal_photons[first]);
      return;
    }
    case OusterProfile::kRng19Dual: {
      const std::size_t second = returns.slot(beam, 1);
      const std::uint32_t range = field(returns.range_m[first], 1, 0x7FFFFu);
      const std::uint32_t range2 = field(returns.range_m[second], 1, 0x7FFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint32_t>(packet_, px + 4, range2);
      store_le<std::uint16_t>(packet_, px + 12, returns.near_ir[beam]);
      if (range) {
        packet_[px + 3] = returns.reflectivity[first];
        store_le<std::uint16_t>(packet_, px + 8, returns.signal_photons[first]);
      }
      if (range2) {
        packet_[px + 7] = returns.reflectivity[second];
        store_le<std::uint16_t>(packet_, px + 10, returns.signal_photons[second]);
      }
      return;
    }
    case OusterProfile::kRng15: {
      const std::uint32_t range = field(returns.range_m[first], 8, 0x7FFFu);
      store_le<std::uint16_t>(packet_, px, static_cast<std::uint16_t>(range));
      packet_[px + 3] = static_cast<std::uint8_t>(std::min(returns.near_ir[beam] / 16, 255));
      if (range) packet_[px + 2] = returns.reflectivity[first];
      return;
    }
  }
}
}  // namespace lidaremu::core::ouster
