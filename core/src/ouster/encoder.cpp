// The Ouster encoder: lidar packets in every UDP profile, IMU packets at 100 Hz in time order.
#include <tbb/blocked_range.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/packet_field.hpp"
#include "lidaremu/core/parallel_blocks.hpp"
#include "lidaremu/core/simd.hpp"

namespace lidaremu::core::ouster {
namespace {

std::uint64_t to_ns(double seconds) {
  return seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e9));
}

static_assert(kProfileFormats.size() == 4, "write_pixel instantiates one writer per profile");

// A return's range in the field's units (rounded a column at a time: OusterEncoder::write_column);
// a range the field cannot hold is sent as no return, never wrapped.
template <PacketField<PixelField> F>
std::uint64_t range_field(std::uint32_t units) {
  return units > F.mask ? 0u : units;
}

// One pixel field from the returns: a return's fields only with its range; the others saturate.
template <PacketField<PixelField> F>
void write_pixel_field(std::span<std::uint8_t> packet, const FrameReturns& returns,
                       std::size_t beam, std::size_t px, const std::array<std::size_t, 2>& slot,
                       const std::array<std::uint64_t, 2>& range) {
  constexpr int kReturn = return_of(F.name);
  constexpr auto kSlot = static_cast<std::size_t>(kReturn < 0 ? 0 : kReturn);
  if constexpr (kReturn >= 0) {
    if (range[kSlot] == 0) return;
  }
  const auto saturated = [](std::uint64_t value) {
    return std::min(value >> F.unit_shift, F.mask);
  };
  std::uint64_t raw = 0;
  if constexpr (F.name == PixelField::kRange || F.name == PixelField::kRange2) {
    raw = range[kSlot];
  } else if constexpr (F.name == PixelField::kReflectivity ||
                       F.name == PixelField::kReflectivity2) {
    raw = saturated(returns.reflectivity[slot[kSlot]]);
  } else if constexpr (F.name == PixelField::kSignal || F.name == PixelField::kSignal2) {
    raw = saturated(returns.signal_photons[slot[kSlot]]);
  } else {
    raw = saturated(returns.near_ir[beam]);
  }
  store_raw(packet, px, F, raw);
}

// A pixel of profile kProfileFormats[Index], its fields as the table lists them, unrolled at
// compile time.
template <std::size_t Index>
void write_pixel_fields(std::span<std::uint8_t> packet, const FrameReturns& returns,
                        std::size_t beam, std::size_t px,
                        const std::array<std::uint32_t, 2>& units) {
  constexpr const ProfileFormat& kFormat = kProfileFormats[Index];
  std::array<std::size_t, 2> slot{returns.slot(beam, 0), 0};
  std::array<std::uint64_t, 2> range{0, 0};
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    const auto take_range = [&]<PacketField<PixelField> F>() {
      if constexpr (F.name == PixelField::kRange) {
        range[0] = range_field<F>(units[0]);
      } else if constexpr (F.name == PixelField::kRange2) {
        slot[1] = returns.slot(beam, 1);
        range[1] = range_field<F>(units[1]);
      }
    };
    (take_range.template operator()<kFormat.pixel[K]>(), ...);
    (write_pixel_field<kFormat.pixel[K]>(packet, returns, beam, px, slot, range), ...);
  }
  (std::make_index_sequence<kFormat.pixel.size()>{});
}

PixelWriter pixel_writer(std::size_t profile_index) {
  switch (profile_index) {
    case 0:
      return &write_pixel_fields<0>;
    case 1:
      return &write_pixel_fields<1>;
    case 2:
      return &write_pixel_fields<2>;
    default:
      return &write_pixel_fields<3>;
  }
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
      format_(profile_format(output.profile)),
      layout_(format_.layout),
      write_pixel_(pixel_writer(profile_index(output.profile))),
      packet_size_(
          layout_.packet_size(pattern.model->channels, pattern.model->ouster.columns_per_packet)),
      staged_(kPacketsAtOnce * packet_size_) {
  if (pattern.model->channels > kMaxChannels) {
    throw std::invalid_argument("an Ouster head has at most " + std::to_string(kMaxChannels) +
                                " channels");
  }
  for (const PixelField range : {PixelField::kRange, PixelField::kRange2}) {
    for (const auto& f : format_.pixel) {
      if (f.name == range) range_units_mm_.push_back(static_cast<double>(1u << f.unit_shift));
    }
  }
}

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

bool OusterEncoder::packet_in_window(std::uint32_t first) const {
  const auto per_packet = static_cast<std::uint32_t>(pattern_.model->ouster.columns_per_packet);
  for (std::uint32_t k = 0; k < per_packet; ++k) {
    if (column_in_window(first + k)) return true;
  }
  return false;
}

void OusterEncoder::encode_columns(const FrameReturns& returns, double frame_start_s,
                                   std::uint32_t end, PacketSink& sink) {
  const auto per_packet = static_cast<std::uint32_t>(pattern_.model->ouster.columns_per_packet);
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
  const auto staged = [&](std::size_t i) {
    return std::span(staged_).subspan(i * packet_size_, packet_size_);
  };
  while (next_packet_column_ < columns && next_packet_column_ + per_packet <= end) {
    std::size_t count = 0;
    for (std::uint32_t first = next_packet_column_;
         count < kPacketsAtOnce && first < columns && first + per_packet <= end;
         first += per_packet) {
      staged_first_[count++] = first;
    }
    // In the calling thread's own arena (not the physics'): it is outside the physics gate, and
    // its tasks stay apart from other sensors' physics.
    parallel_blocks_isolated(tbb::blocked_range<std::size_t>(0, count), staged_.data(),
                             [&](const tbb::blocked_range<std::size_t>& r) {
                               for (std::size_t i = r.begin(); i < r.end(); ++i) {
                                 if (packet_in_window(staged_first_[i])) {
                                   write_packet(staged(i), returns, staged_first_[i],
                                                frame_start_s);
                                 }
                               }
                             });
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t first = staged_first_[i];
      // A packet leaves when its last column has been measured; none outside the window.
      const double sent_at = frame_start_s + (first + per_packet - 1) * pattern_.column_period_s;
      send_imu_until(sent_at);
      if (packet_in_window(first)) sink.on_packet(PacketChannel::kData, staged(i), sent_at);
    }
    next_packet_column_ = staged_first_[count - 1] + per_packet;
  }
  if (end < columns) return;
  send_imu_until(frame_start_s + pattern_.frame_period_s);
  ++frame_id_;
  next_packet_column_ = 0;
  imu_sent_ = 0;
}

void OusterEncoder::write_packet(std::span<std::uint8_t> packet, const FrameReturns& returns,
                                 std::uint32_t first, double frame_start_s) const {
  const SensorModel& model = *pattern_.model;
  const auto per_packet = static_cast<std::uint32_t>(model.ouster.columns_per_packet);
  const std::size_t column_bytes = layout_.column_size(model.channels);
  std::fill(packet.begin(), packet.end(), std::uint8_t{0});  // alert flags: none
  for (const auto& f : format_.packet_header) store_raw(packet, 0, f, header_field(f.name));
  for (std::uint32_t k = 0; k < per_packet; ++k) {
    const std::uint32_t c = first + k;
    write_column(packet, returns, c, layout_.packet_header + k * column_bytes,
                 timestamp_ns(frame_start_s + c * pattern_.column_period_s));
  }
  if (format_.crc64_footer) {
    const std::size_t crc_at = packet.size() - 8;
    store_le<std::uint64_t>(packet, crc_at, crc64_xz(packet.first(crc_at)));
  }
}

std::uint64_t OusterEncoder::header_field(HeaderField field) const {
  switch (field) {
    case HeaderField::kPacketType:
      return kPacketTypeLidar;
    case HeaderField::kFrameId:
      return frame_id_;
    case HeaderField::kInitId:
      return identity_.init_id;
    case HeaderField::kSerialNumber:
      return identity_.serial_number;
  }
  return 0;
}

std::uint64_t OusterEncoder::column_field(ColumnField field, std::uint32_t column,
                                          std::uint64_t timestamp_ns, bool valid) const {
  switch (field) {
    case ColumnField::kTimestamp:
      return timestamp_ns;
    case ColumnField::kMeasurementId:
      return column;
    case ColumnField::kFrameId:
      return frame_id_;
    case ColumnField::kEncoderCount:
      return std::uint64_t{column} * kEncoderTicksPerTurn / pattern_.columns_per_frame;
    case ColumnField::kStatus:
      return valid ? format_.status_valid : 0u;
  }
  return 0;
}

void OusterEncoder::write_column(std::span<std::uint8_t> packet, const FrameReturns& returns,
                                 std::uint32_t column, std::size_t at,
                                 std::uint64_t timestamp_ns) const {
  const SensorModel& model = *pattern_.model;
  const bool valid = column_in_window(column);
  for (const auto& f : format_.column_header) {
    store_raw(packet, at, f, column_field(f.name, column, timestamp_ns, valid));
  }
  const std::size_t footer = at + layout_.column_size(model.channels) - layout_.column_footer;
  for (const auto& f : format_.column_footer) {
    store_raw(packet, footer, f, column_field(f.name, column, timestamp_ns, valid));
  }
  if (!valid) return;
  // The range fields' units a column at a time, in lanes: std::lround(range x 1000 / 2^shift),
  // the expression a pixel at a time computed (simd::scaled_range_units_u32).
  const auto channels = static_cast<std::size_t>(model.channels);
  const std::size_t first_beam = returns.shape.beam(column, 0);
  std::array<std::array<std::uint32_t, kMaxChannels>, 2> column_units;
  for (std::size_t plane = 0; plane < range_units_mm_.size(); ++plane) {
    simd::scaled_range_units_u32(
        {&returns.range_m[returns.slot(first_beam, static_cast<int>(plane))], channels}, 1000.0,
        range_units_mm_[plane], std::span(column_units[plane]).first(channels));
  }
  std::array<std::uint32_t, 2> units{0, 0};
  for (std::size_t r = 0; r < channels; ++r) {
    for (std::size_t plane = 0; plane < range_units_mm_.size(); ++plane) {
      units[plane] = column_units[plane][r];
    }
    write_pixel_(packet, returns, first_beam + r, at + layout_.column_header + r * layout_.pixel,
                 units);
  }
}

}  // namespace lidaremu::core::ouster
