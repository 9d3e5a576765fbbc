// The RoboSense encoder: MSOP packets of every model in robosense/format.hpp, and the DIFOP
// packet drivers wait for before they decode any, every field written from the rows the spec
// decoder reads.
#include <algorithm>
#include <array>
#include <cmath>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/nmea.hpp"
#include "lidaremu/core/number_text.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/core/utc.hpp"

namespace lidaremu::core::robosense {
namespace {

// The emulated head's temperature (the MSOP header's): a unit warmed up indoors.
constexpr double kTemperatureC = 45.0;

void store_time(std::span<std::uint8_t> out, std::size_t at, TimeForm form, double time_s) {
  const double whole = std::floor(time_s);
  const auto micros = static_cast<std::uint32_t>(std::min(999'999.0, (time_s - whole) * 1e6));
  const auto second = static_cast<std::int64_t>(whole);
  if (form == TimeForm::kUtcMicros) {
    store_be(out, at, 6, static_cast<std::uint64_t>(std::max<std::int64_t>(0, second)));
    store_be(out, at + 6, 4, micros);
    return;
  }
  const UtcFields utc = utc_fields(second);
  const std::array<int, 6> fields{utc.year - 2000, utc.month,  utc.day,
                                  utc.hour,        utc.minute, utc.second};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out[at + i] = static_cast<std::uint8_t>(fields[i] & 0xFF);
  }
  store_be(out, at + 6, 2, micros / 1000);
  store_be(out, at + 8, 2, micros % 1000);
}

// A sign byte and a u16 magnitude in `per_degree` steps.
void store_signed_angle(std::span<std::uint8_t> out, std::size_t at, double degrees,
                        double per_degree) {
  const long steps = std::lround(degrees * per_degree);
  out[at] = steps < 0 ? 1 : 0;
  store_be(out, at + 1, 2, static_cast<std::uint64_t>(std::min(65535L, std::labs(steps))));
}

void store_angles(std::span<std::uint8_t> out, const DifopFormat& d, const SensorModel& model) {
  const auto channels = static_cast<std::size_t>(std::min(kChannels, model.channels));
  for (std::size_t c = 0; c < channels; ++c) {
    const std::size_t vertical = d.vertical_at + c * kAngleBytes;
    const std::size_t horizontal = d.horizontal_at + c * kAngleBytes;
    switch (d.angle_form) {
      case AngleForm::kSignedCdeg:
        store_signed_angle(out, vertical, model.elevation_deg[c], 100.0);
        store_signed_angle(out, horizontal, model.azimuth_offset_deg[c], 100.0);
        break;
      case AngleForm::kSignedMdeg:
        store_signed_angle(out, vertical, model.elevation_deg[c], 1000.0);
        store_signed_angle(out, horizontal, model.azimuth_offset_deg[c], 1000.0);
        break;
      case AngleForm::kPitch16:
        // The magnitude only: the channel's place says up or down (the row keeps 0-7 below).
        store_be(out, vertical, 3,
                 static_cast<std::uint64_t>(std::lround(std::fabs(model.elevation_deg[c]) * 1e4)));
        break;
    }
  }
}

}  // namespace

int difop_rpm(const ScanPattern& pattern) {
  const SpinTraits& spin = pattern.model->spin;
  const double steps = std::round((pattern.rpm - spin.min_rpm) / spin.rpm_step);
  return spin.min_rpm + static_cast<int>(steps) * spin.rpm_step;
}

const ModelFormat* find_model_format(std::string_view name) {
  for (const ModelFormat* f : kModelFormats) {
    if (f->model == name) return f;
  }
  return nullptr;
}

std::string angle_csv(const SensorModel& model) {
  std::string csv;
  for (int ch = 0; ch < model.channels; ++ch) {
    const auto c = static_cast<std::size_t>(ch);
    csv += shortest_decimal(model.elevation_deg[c]) + "," +
           shortest_decimal(model.azimuth_offset_deg[c]) + "\n";
  }
  return csv;
}

std::array<std::uint8_t, 2> temperature_bytes(double celsius) {
  const long raw = std::min(4095L, std::lround(std::fabs(celsius) / 0.0625));
  return {static_cast<std::uint8_t>((raw & 0x1F) << 3),
          static_cast<std::uint8_t>((celsius < 0 ? 0x80 : 0) | ((raw >> 5) & 0x7F))};
}

double temperature_of(std::span<const std::uint8_t, 2> bytes) {
  const int raw = ((bytes[1] & 0x7F) << 5) | (bytes[0] >> 3);
  return ((bytes[1] & 0x80) != 0 ? -raw : raw) * 0.0625;
}

std::array<std::uint8_t, kPacketSize> difop_packet(const SensorModel& model, double rpm,
                                                   std::uint8_t return_mode_code, double time_s,
                                                   const SensorIdentity& identity) {
  const ModelFormat& format = *model.robosense.format;
  const DifopFormat& d = format.difop;
  std::array<std::uint8_t, kPacketSize> p{};
  std::copy(kDifopId.begin(), kDifopId.end(), p.begin());
  store_be(p, d.rpm_at, 2, static_cast<std::uint64_t>(std::lround(rpm)));
  store_be(p, d.lidar_ip_at, 4, identity.address != 0 ? identity.address : 0xC0A801C8U);
  store_be(p, d.dest_ip_at, 4, identity.destination != 0 ? identity.destination : 0xFFFFFFFFU);
  // A locally administered MAC from the serial number (no vendor prefix is claimed).
  p[d.mac_at] = 0x02;
  store_be(p, d.mac_at + 1, 5, identity.serial_number & 0xFF'FFFF'FFFFULL);
  store_be(p, d.msop_port_at, 2, identity.data_port != 0 ? identity.data_port : 6699);
  store_be(p, d.difop_port_at, 2, identity.telemetry_port != 0 ? identity.telemetry_port : 7788);
  store_be(p, d.fov_start_at, 2, 0);
  store_be(p, d.fov_end_at, 2, 36000);
  store_be(p, d.phase_lock_at, 2, 0);
  store_be(p, d.serial_at, 6, identity.serial_number & 0xFFFF'FFFF'FFFFULL);
  store_be(p, d.zero_angle_at, 2, 0);
  p[d.return_mode_at] = return_mode_code;
  if (d.sync_mode_at != 0) p[d.sync_mode_at] = 0;      // GPS + PPS
  if (d.sync_status_at != 0) p[d.sync_status_at] = 1;  // locked: its time is the clock's
  store_time(p, d.time_at, d.time_form, time_s);
  std::array<char, kGprmcMaxBytes> nmea{};
  const std::size_t n =
      format_gprmc(nmea, std::floor(time_s), identity.latitude_deg, identity.longitude_deg);
  std::copy_n(nmea.begin(), std::min(n, d.gprmc_bytes), p.begin() + d.gprmc_at);
  store_angles(p, d, model);
  store_be(p, kTailAt, 2, kDifopTail);
  return p;
}

RoboSenseEncoder::RoboSenseEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                   ReturnMode echoes)
    : ColumnEncoder(pattern.column_period_s),
      pattern_(pattern),
      identity_(identity),
      format_(*pattern.model->robosense.format),
      echoes_(reports_two_echoes(echoes) ? 2 : 1),
      firing_channels_(kChannels / format_.firings_per_block),
      columns_per_packet_(kBlocks * format_.firings_per_block / echoes_) {
  if (const auto* mode = pattern.model->robosense.return_mode(echoes)) {
    return_mode_code_ = mode->difop_code;
  }
  const MsopFormat& m = format_.msop;
  std::copy_n(m.id.begin(), m.id_bytes, header_only_.begin());
  for (const FixedByte& b : m.fixed) {
    if (b.offset != 0) header_only_[b.offset] = b.value;
  }
  const auto temperature = temperature_bytes(kTemperatureC);
  std::copy(temperature.begin(), temperature.end(), header_only_.begin() + m.temperature_at);
  store_be(header_only_, kTailAt, 2, kMsopTail);
  packet_ = header_only_;
  reserve_whole_packets(kPacketSize);
}

RoboSenseEncoder::Place RoboSenseEncoder::place_of(int column_in_packet, int echo) const {
  if (format_.firings_per_block == 1) {
    return {.block = column_in_packet * echoes_ + echo, .first_slot = 0, .heads_block = true};
  }
  // Two firings a block (RS-LiDAR-16): in dual return a column's two echoes share its block,
  // the first echo in slots 0-15; in single return two columns do, the earlier first.
  if (echoes_ == 2) {
    return {
        .block = column_in_packet, .first_slot = echo * firing_channels_, .heads_block = echo == 0};
  }
  const int half = column_in_packet % format_.firings_per_block;
  return {.block = column_in_packet / format_.firings_per_block,
          .first_slot = half * firing_channels_,
          .heads_block = half == 0};
}

double RoboSenseEncoder::data_packet_period_s() const {
  return columns_per_packet_ * pattern_.column_period_s;
}

void RoboSenseEncoder::send_difop_if_due(double time_s, PacketSink& sink) {
  // Before the first MSOP packet, then once a second of sensor time (a jump of the clock
  // restarts the count).
  if (difop_sent_ && time_s < next_difop_s_ && time_s > next_difop_s_ - 2.0) return;
  sink.on_packet(
      PacketChannel::kTelemetry,
      difop_packet(*pattern_.model, difop_rpm(pattern_), return_mode_code_, time_s, identity_),
      time_s);
  difop_sent_ = true;
  next_difop_s_ = time_s + 1.0;
}

void RoboSenseEncoder::append_column(const FrameReturns* returns, std::uint32_t column,
                                     double time_s, PacketSink& sink) {
  if (columns_in_packet_ == 0) first_column_time_s_ = time_s;
  write_column(packet_, returns, column, columns_in_packet_, column_units_);
  if (++columns_in_packet_ < columns_per_packet_) return;
  // The header's time is the first block's (rs_driver times each block from it).
  store_time(packet_, format_.msop.time_at, format_.msop.time_form, first_column_time_s_);
  columns_in_packet_ = 0;
  emit(packet_, time_s, sink);
}

void RoboSenseEncoder::write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                                    double frame_start_s, std::uint32_t /*ordinal*/) const {
  // Every byte a column or the time does not write is the header's, as in packet_.
  std::copy(header_only_.begin(), header_only_.end(), packet.begin());
  ColumnUnits units;
  for (int k = 0; k < columns_per_packet_; ++k) {
    write_column(packet, &returns, first + static_cast<std::uint32_t>(k), k, units);
  }
  store_time(packet, format_.msop.time_at, format_.msop.time_form,
             column_time_s(frame_start_s, first));
}

void RoboSenseEncoder::send_packet(std::span<const std::uint8_t> packet, std::uint32_t first,
                                   double frame_start_s, PacketSink& sink) {
  const auto last = first + static_cast<std::uint32_t>(columns_per_packet_) - 1;
  emit(packet, column_time_s(frame_start_s, last), sink);
}

void RoboSenseEncoder::emit(std::span<const std::uint8_t> packet, double last_column_time_s,
                            PacketSink& sink) {
  // The packet leaves when its last block has fired.
  const double sent_s = last_column_time_s + pattern_.column_period_s;
  send_difop_if_due(sent_s, sink);
  sink.on_packet(PacketChannel::kData, packet, sent_s);
}

void RoboSenseEncoder::write_column(Packet packet, const FrameReturns* returns,
                                    std::uint32_t column, int column_in_packet,
                                    ColumnUnits& units) const {
  const double unit_m = format_.distance_unit_m;
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  const auto azimuth = static_cast<std::uint16_t>(
      std::lround(36000.0 * (column % columns) / pattern_.columns_per_frame) % 36000);
  if (returns != nullptr) {
    const std::size_t channels =
        std::min<std::size_t>(static_cast<std::size_t>(pattern_.model->channels),
                              static_cast<std::size_t>(firing_channels_));
    const std::size_t first_beam = returns->shape.beam(column, 0);
    for (int plane = 0; plane < echoes_; ++plane) {
      simd::range_units_u16({&returns->range_m[returns->slot(first_beam, plane)], channels}, unit_m,
                            std::span(units[static_cast<std::size_t>(plane)]).first(channels));
    }
  }
  for (int copy = 0; copy < echoes_; ++copy) {
    const Place place = place_of(column_in_packet, copy);
    if (place.heads_block) {
      store_be(packet, block_at(place.block), 2, kBlockFlag);
      store_be(packet, block_at(place.block) + 2, 2, azimuth);
    }
    for (int ch = 0; ch < firing_channels_; ++ch) {
      std::uint16_t range_units = 0;
      std::uint8_t intensity = 0;
      if (returns != nullptr && ch < pattern_.model->channels) {
        const std::size_t beam = returns->shape.beam(column, static_cast<std::uint16_t>(ch));
        const std::size_t slot =
            echoes_ == 2 ? strongest_first_slot(*returns, beam, copy) : returns->slot(beam, 0);
        const bool second_plane = slot >= returns->shape.beams();
        range_units = units[second_plane ? 1 : 0][static_cast<std::size_t>(ch)];
        intensity = range_units ? returns->reflectivity[slot] : 0;
      }
      const std::size_t at = record_at(place.block, place.first_slot + ch);
      store_be(packet, at, 2, range_units);
      packet[at + 2] = intensity;
    }
  }
}

}  // namespace lidaremu::core::robosense
