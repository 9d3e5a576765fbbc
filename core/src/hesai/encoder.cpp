// The Hesai encoder: point-cloud packets of every model in hesai/format.hpp, every field written
// from the same rows the spec decoder reads.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/nmea.hpp"
#include "lidaremu/core/number_text.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/core/utc.hpp"

namespace lidaremu::core::hesai {

std::uint8_t return_mode_byte(ReturnMode echoes) {
  switch (echoes) {
    case ReturnMode::kFirst:
      return kFirst;
    case ReturnMode::kStrongest:
      return kStrongest;
    case ReturnMode::kLast:
      return kLast;
    case ReturnMode::kDual:
      return kLastStrongest;
    case ReturnMode::kFirstLast:
      return kFirstLast;
    case ReturnMode::kFirstStrongest:
      return kFirstStrongest;
    default:
      return 0;
  }
}

std::string calibration_csv(const SensorModel& model) {
  std::string csv = "Channel,Elevation,Azimuth\n";
  for (int ch = 0; ch < model.channels; ++ch) {
    const auto c = static_cast<std::size_t>(ch);
    csv += std::to_string(ch + 1) + "," + shortest_decimal(model.elevation_deg[c]) + "," +
           shortest_decimal(model.azimuth_offset_deg[c]) + "\n";
  }
  return csv;
}

std::string calibration_file(const SensorModel& model) {
  if (model.hesai.mirror == nullptr) return calibration_csv(model);
  const auto bytes = model.hesai.mirror->bytes();
  return {bytes.begin(), bytes.end()};
}

Calibration calibration_of(const SensorModel& model) {
  return {model.elevation_deg, model.azimuth_offset_deg, model.hesai.mirror,
          model.hesai.firetime_us};
}

HesaiEncoder::HesaiEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                           ReturnMode echoes)
    : ColumnEncoder(pattern.column_period_s),
      pattern_(pattern),
      identity_(identity),
      format_(*pattern.model->hesai.format),
      echoes_(echoes),
      blocks_per_column_(reports_two_echoes(echoes) ? 2 : 1),
      columns_per_packet_(format_.blocks / blocks_per_column_),
      return_mode_(return_mode_byte(echoes)),
      header_only_(format_.sent_size(), 0) {
  if (static_cast<std::size_t>(format_.lasers) > kMaxLasers) {
    throw std::invalid_argument("a Hesai block has at most " + std::to_string(kMaxLasers) +
                                " channels");
  }
  write_header();
  packet_ = header_only_;
  reserve_whole_packets(header_only_.size());
}

std::uint32_t HesaiEncoder::columns_per_whole_packet() const {
  return static_cast<std::uint32_t>(columns_per_packet_);
}

std::uint32_t HesaiEncoder::firing_run(std::uint32_t first, std::uint32_t end) const {
  const HesaiTraits& hesai = pattern_.model->hesai;
  std::uint32_t column = first;
  while (column < end && hesai.column_fires_at(column)) ++column;
  return column - first;
}

double HesaiEncoder::whole_packet_stamp_s(double frame_start_s, std::uint32_t first) const {
  const auto last = first + static_cast<std::uint32_t>(columns_per_packet_) - 1;
  return stamp_s(column_time_s(frame_start_s, first), column_time_s(frame_start_s, last));
}

std::uint32_t HesaiEncoder::firing_loop_of(std::uint32_t column) const {
  return column % static_cast<std::uint32_t>(std::max(1, pattern_.model->hesai.firing_loops));
}

double HesaiEncoder::stamp_s(double first_column_time_s, double last_column_time_s) const {
  const HesaiTraits& hesai = pattern_.model->hesai;
  return (hesai.stamp_from_first_column ? first_column_time_s : last_column_time_s) +
         hesai.stamp_after_block_us * 1e-6;
}

double HesaiEncoder::data_packet_period_s() const {
  return columns_per_packet_ * pattern_.column_period_s;
}

void HesaiEncoder::write_header() {
  const ProtocolFormat& p = *format_.protocol;
  for (const auto& f : p.header) {
    std::uint64_t value = 0;
    switch (f.name) {
      case Field::kSignature:
        value = kSignatureValue;
        break;
      case Field::kProtocolMajor:
        value = static_cast<std::uint64_t>(p.major);
        break;
      case Field::kProtocolMinor:
        value = static_cast<std::uint64_t>(p.minor);
        break;
      case Field::kStatusVersion:
        value = format_.status_version;
        break;
      case Field::kLaserNum:
        value = static_cast<std::uint64_t>(format_.lasers);
        break;
      case Field::kBlockNum:
        value = static_cast<std::uint64_t>(format_.blocks);
        break;
      case Field::kFirstBlockReturn:
        value = blocks_per_column_ == 2 ? format_.dual_first_block : 0;
        break;
      case Field::kDistanceUnitMm:
        value = format_.distance_unit_mm;
        break;
      case Field::kReturnNum:
        value = blocks_per_column_ == 2 ? format_.dual_return_num : 1;
        break;
      case Field::kFlags:
        value = format_.flags;
        break;
      default:
        break;
    }
    store_raw(header_only_, 0, f, value);
  }
}

void HesaiEncoder::append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                                 PacketSink& sink) {
  // A mirror scan's dark columns send nothing (a flushing firing still fills its packet).
  if (returns != nullptr && !pattern_.model->hesai.column_fires_at(column)) return;
  // The firing loop of the packet's first column (QT128: the tail's mode flag).
  if (columns_in_packet_ == 0) {
    first_column_time_s_ = time_s;
    packet_loop_ = firing_loop_of(column);
  }
  write_column(packet_, returns, column, columns_in_packet_, column_units_);
  last_column_time_s_ = time_s;
  if (++columns_in_packet_ < columns_per_packet_) return;
  const double stamp = stamp_s(first_column_time_s_, last_column_time_s_);
  write_tail(packet_, stamp, packet_loop_, udp_sequence_);
  columns_in_packet_ = 0;
  emit(packet_, stamp, sink);
}

void HesaiEncoder::write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                                double frame_start_s, std::uint32_t ordinal) const {
  // Every byte a column or the tail does not write is the header's or stays zero, as in packet_.
  std::copy(header_only_.begin(), header_only_.end(), packet.begin());
  ColumnUnits units;
  for (int k = 0; k < columns_per_packet_; ++k) {
    write_column(packet, &returns, first + static_cast<std::uint32_t>(k), k, units);
  }
  write_tail(packet, whole_packet_stamp_s(frame_start_s, first), firing_loop_of(first),
             udp_sequence_ + ordinal);
}

void HesaiEncoder::send_packet(std::span<const std::uint8_t> packet, std::uint32_t first,
                               double frame_start_s, PacketSink& sink) {
  emit(packet, whole_packet_stamp_s(frame_start_s, first), sink);
}

void HesaiEncoder::emit(std::span<const std::uint8_t> packet, double stamp_s, PacketSink& sink) {
  sink.on_packet(PacketChannel::kData, packet, stamp_s);
  ++udp_sequence_;
  if (pattern_.model->hesai.sends_gps) send_gps_packets_up_to(stamp_s, sink);
}

void HesaiEncoder::write_column(Packet packet, const FrameReturns* returns, std::uint32_t column,
                                int column_in_packet, ColumnUnits& units) const {
  const ProtocolFormat& p = *format_.protocol;
  const HesaiTraits& hesai = pattern_.model->hesai;
  const double unit_m = format_.distance_unit_mm * 1e-3;
  const auto turn_column = column % static_cast<std::uint32_t>(pattern_.columns_per_frame);
  auto azimuth = static_cast<std::uint16_t>(
      std::lround(360.0 * 100.0 * turn_column / pattern_.columns_per_frame) % 36000);
  // With a fine azimuth (AT128): the encoder angle in 1/25,600 degree, split in two.
  std::uint8_t fine = 0;
  if (p.fine_azimuth.bytes != 0) {
    const std::int64_t angle_units =
        static_cast<std::int64_t>(turn_column) * kUnitsPerTurn / pattern_.columns_per_frame;
    azimuth = static_cast<std::uint16_t>(angle_units >> 8);
    fine = static_cast<std::uint8_t>(angle_units & 0xFF);
  }
  if (returns != nullptr) {
    const std::size_t channels =
        std::min<std::size_t>(returns->shape.channels, static_cast<std::size_t>(format_.lasers));
    const std::size_t first_beam = returns->shape.beam(column, 0);
    for (int plane = 0; plane < blocks_per_column_; ++plane) {
      simd::range_units_u16({&returns->range_m[returns->slot(first_beam, plane)], channels}, unit_m,
                            std::span(units[static_cast<std::size_t>(plane)]).first(channels));
    }
  }
  // Per column, not per channel: whether it fires, its firing loop, its first beam.
  const bool column_fires = returns != nullptr && hesai.column_fires_at(column);
  const auto column_loop = firing_loop_of(column);
  const std::size_t first_beam = column_fires ? returns->shape.beam(column, 0) : 0;
  const std::size_t beams = column_fires ? returns->shape.beams() : 0;
  for (int copy = 0; copy < blocks_per_column_; ++copy) {
    const int block = column_in_packet * blocks_per_column_ + copy;
    const std::size_t block_at = format_.block_at(block);
    if (p.block_flag.bytes != 0) store_raw(packet, block_at, p.block_flag, kBlockFlagValue);
    store_raw(packet, block_at, p.azimuth, azimuth);
    if (p.fine_azimuth.bytes != 0) store_raw(packet, block_at, p.fine_azimuth, fine);
    const std::size_t first_record = format_.record_at(block, 0);
    for (int ch = 0; ch < format_.lasers; ++ch) {
      const auto c = static_cast<std::size_t>(ch);
      const std::size_t at = first_record + c * p.record_size;
      std::uint16_t range_units = 0;
      std::uint8_t reflectivity = 0;
      // HesaiTraits::fires, its column's part taken above.
      const int loop = hesai.channel_loop.empty() ? 0 : hesai.channel_loop[c];
      if (column_fires && (loop == 0 || static_cast<std::uint32_t>(loop - 1) == column_loop)) {
        const std::size_t beam = first_beam + c;
        const std::size_t slot = blocks_per_column_ == 2
                                     ? paired_block_slot(*returns, beam, copy, echoes_)
                                     : returns->slot(beam, 0);
        range_units = units[slot >= beams ? 1 : 0][c];
        reflectivity = range_units ? returns->reflectivity[slot] : 0;
      }
      store_raw(packet, at, p.distance, range_units);
      store_raw(packet, at, p.reflectivity, reflectivity);
      if (p.confidence.bytes != 0) store_raw(packet, at, p.confidence, format_.confidence);
    }
  }
}

void HesaiEncoder::send_gps_packets_up_to(double time_s, PacketSink& sink) {
  // One GPS packet for each whole second (the PPS edge) the stream passes, sent with the first
  // data packet after it and saying how long after the edge it leaves. A jump of the clock
  // (simulation time, a new frame far ahead) restarts the count instead of filling the gap.
  const auto second = static_cast<std::int64_t>(std::floor(time_s));
  if (next_gps_second_ == 0 || second > next_gps_second_ + 1) next_gps_second_ = second + 1;
  if (second < next_gps_second_) return;
  const auto micros =
      static_cast<std::uint32_t>(std::min(999'999.0, (time_s - static_cast<double>(second)) * 1e6));
  sink.on_packet(PacketChannel::kTelemetry, gps_packet(second, micros, identity_), time_s);
  next_gps_second_ = second + 1;
}

namespace {
// Two ASCII digits of value mod 100, units first (a little-endian u16: the tens in the high
// byte). Mod 100 keeps a year before 2000 (a simulation clock from 1970) in digits.
std::uint64_t ascii_digits(int value) {
  const int two = (value % 100 + 100) % 100;
  return static_cast<std::uint64_t>('0' + two % 10) |
         (static_cast<std::uint64_t>('0' + two / 10) << 8);
}
}  // namespace

std::array<std::uint8_t, kGpsPacket.size> gps_packet(std::int64_t unix_second, std::uint32_t micros,
                                                     const SensorIdentity& identity) {
  std::array<std::uint8_t, kGpsPacket.size> p{};
  const UtcFields utc = utc_fields(unix_second);
  for (const auto& f : kGpsPacket.fields) {
    std::uint64_t value = 0;
    switch (f.name) {
      case GpsField::kFlag:
        value = kGpsFlagValue;
        break;
      case GpsField::kYear:
        value = ascii_digits(utc.year - 2000);
        break;
      case GpsField::kMonth:
        value = ascii_digits(utc.month);
        break;
      case GpsField::kDay:
        value = ascii_digits(utc.day);
        break;
      case GpsField::kSecond:
        value = ascii_digits(utc.second);
        break;
      case GpsField::kMinute:
        value = ascii_digits(utc.minute);
        break;
      case GpsField::kHour:
        value = ascii_digits(utc.hour);
        break;
      case GpsField::kMicroseconds:
        value = micros;
        break;
      case GpsField::kPositioningStatus:
        value = 'A';  // the emulated receiver has a fix
        break;
      case GpsField::kPpsLock:
        value = 1;
        break;
    }
    store_raw(p, 0, f, value);
  }
  std::fill_n(p.begin() + static_cast<std::ptrdiff_t>(kGpsPacket.reserved_at),
              kGpsPacket.reserved_bytes, kGpsPacket.reserved_fill);
  std::array<char, kGpsPacket.nmea_bytes> nmea{};
  const std::size_t n = format_gprmc(nmea, static_cast<double>(unix_second), identity.latitude_deg,
                                     identity.longitude_deg);
  std::copy_n(nmea.begin(), n, p.begin() + static_cast<std::ptrdiff_t>(kGpsPacket.nmea_at));
  return p;
}

void HesaiEncoder::write_tail(Packet packet, double time_s, std::uint32_t packet_loop,
                              std::uint32_t udp_sequence) const {
  const ProtocolFormat& p = *format_.protocol;
  const std::size_t tail_at = format_.tail_at();
  const double whole = std::floor(time_s);
  const UtcFields utc = utc_fields(static_cast<std::int64_t>(whole));
  const auto micros = static_cast<std::uint32_t>(std::min(999'999.0, (time_s - whole) * 1e6));
  for (const auto& f : p.tail) {
    std::uint64_t value = 0;
    switch (f.name) {
      case Field::kReturnMode:
        value = return_mode_;
        break;
      case Field::kMotorRpm:
        value = static_cast<std::uint64_t>(std::lround(pattern_.rpm));
        break;
      case Field::kYear:
        value = static_cast<std::uint64_t>(utc.year - p.year_base) & 0xFF;
        break;
      case Field::kMonth:
        value = static_cast<std::uint64_t>(utc.month);
        break;
      case Field::kDay:
        value = static_cast<std::uint64_t>(utc.day);
        break;
      case Field::kHour:
        value = static_cast<std::uint64_t>(utc.hour);
        break;
      case Field::kMinute:
        value = static_cast<std::uint64_t>(utc.minute);
        break;
      case Field::kSecond:
        value = static_cast<std::uint64_t>(utc.second);
        break;
      case Field::kMicroseconds:
        value = micros;
        break;
      case Field::kFactory:
        value = format_.factory;
        break;
      case Field::kSafetyVersion:
        value = format_.safety_version;
        break;
      case Field::kModeFlag:
        value = packet_loop;
        break;
      case Field::kSafetyState:
        // Lidar state 1 (normal) in bits 7:5; the rolling counter in bits 2:0 moves on every
        // 5 ms of sensor time (the block's update cycle: nebula reports a functional-safety
        // block that does not change for a scan period as stuck).
        value = (1U << 5) | static_cast<std::uint64_t>(
                                static_cast<std::int64_t>(std::floor(time_s / 0.005)) & 0x7);
        break;
      case Field::kAzimuthState:
        value = 0;  // standard resolution: every block in state 0
        break;
      case Field::kOperationalState:
        value = format_.operational_state;
        break;
      case Field::kUnixSecondsBe:
        // Big-endian, after two zero bytes (the date's first two, which the SDK reads as "UNIX
        // seconds follow").
        store_be(packet, tail_at + f.offset, f.bytes,
                 static_cast<std::uint64_t>(std::max(0.0, whole)) & 0xFFFFFFFF);
        continue;
      case Field::kUdpSequence:
        // The optional sequence past the tail: only where the model sends it.
        if (f.offset + f.bytes > p.tail_size && !format_.sends_sequence) continue;
        value = udp_sequence;
        break;
      default:
        continue;  // CRCs below; reserved and safety bytes stay as they are
    }
    store_raw(packet, tail_at, f, value);
  }
  // CRCs last, in the order of the table: each covers bytes the ones before it do not.
  for (const CrcCheck& c : p.crcs) {
    const std::size_t begin = c.from_first_block ? p.first_block : tail_at + c.begin;
    const std::span<const std::uint8_t> covered{packet.data() + begin, tail_at + c.end - begin};
    store_raw(packet, tail_at, c.crc, crc32_mpeg2(covered));
  }
}

}  // namespace lidaremu::core::hesai
