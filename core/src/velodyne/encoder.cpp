// The Velodyne encoder: data packets in every return mode, position packets, HDL-64E status.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>

#include "lidaremu/core/nmea.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/core/utc.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::core::velodyne {
namespace {
constexpr std::uint8_t kPpsLocked = 2;

}  // namespace

std::uint32_t micros_past_hour(double time_s) {
  const double past_hour = std::fmod(time_s, 3600.0);
  return static_cast<std::uint32_t>(
             std::floor((past_hour < 0 ? past_hour + 3600.0 : past_hour) * 1e6)) %
         3'600'000'000u;
}

std::array<std::uint8_t, kPositionPacketSize> position_packet(double unix_time_s,
                                                              const SensorIdentity& identity) {
  std::array<std::uint8_t, kPositionPacketSize> p{};
  store_raw(p, 0, kPositionPacket.timestamp, micros_past_hour(unix_time_s));
  store_raw(p, 0, kPositionPacket.pps_status, kPpsLocked);
  std::array<char, kMaxNmeaBytes> nmea{};
  const std::size_t n =
      format_gprmc(nmea, unix_time_s, identity.latitude_deg, identity.longitude_deg);
  std::copy_n(nmea.begin(), n, p.begin() + static_cast<std::ptrdiff_t>(kPositionPacket.nmea_at));
  return p;
}

VelodyneEncoder::VelodyneEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                 ReturnMode echoes)
    : ColumnEncoder(pattern.column_period_s),
      geometry_(pattern),
      identity_(identity),
      echoes_(echoes),
      blocks_per_azimuth_(echoes == ReturnMode::kDual ? 2 : 1) {
  if (static_cast<std::size_t>(pattern.model->channels) > kMaxChannels) {
    throw std::invalid_argument("a Velodyne head has at most " + std::to_string(kMaxChannels) +
                                " lasers");
  }
  reserve_whole_packets(kDataPacketSize);
}

int VelodyneEncoder::sequences_per_packet() const {
  const auto& v = geometry_.pattern().model->velodyne;
  // VLS-128 dual: one column of 4 banks x 2 echoes per packet, the last 4 blocks unused.
  return v.blocks_per_packet / (blocks_per_azimuth_ * v.banks) * v.sequences_per_block;
}

std::uint32_t VelodyneEncoder::columns_per_whole_packet() const {
  return static_cast<std::uint32_t>(sequences_per_packet());
}

double VelodyneEncoder::data_packet_period_s() const {
  return sequences_per_packet() * geometry_.pattern().column_period_s;
}

void VelodyneEncoder::append_column(const FrameReturns* returns, std::uint32_t column,
                                    double time_s, PacketSink& sink) {
  if (sequences_in_packet_ == 0) {
    packet_.fill(0);
    packet_time_s_ = time_s;
  }
  write_column(packet_, returns, column, sequences_in_packet_, column_units_);
  if (++sequences_in_packet_ < sequences_per_packet()) return;
  finish_packet(packet_, packet_time_s_, status_index_++);
  sequences_in_packet_ = 0;
  emit(packet_, packet_time_s_, sink);
}

void VelodyneEncoder::write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                                   double frame_start_s, std::uint32_t ordinal) const {
  std::fill(packet.begin(), packet.end(), std::uint8_t{0});
  ColumnUnits units;
  const int columns = sequences_per_packet();
  for (int k = 0; k < columns; ++k) {
    write_column(packet, &returns, first + static_cast<std::uint32_t>(k), k, units);
  }
  finish_packet(packet, column_time_s(frame_start_s, first), status_index_ + ordinal);
}

void VelodyneEncoder::send_packet(std::span<const std::uint8_t> packet, std::uint32_t first,
                                  double frame_start_s, PacketSink& sink) {
  ++status_index_;
  emit(packet, column_time_s(frame_start_s, first), sink);
}

void VelodyneEncoder::write_column(Packet packet, const FrameReturns* returns, std::uint32_t column,
                                   int sequence_in_packet, ColumnUnits& units) const {
  const SensorModel& model = *geometry_.pattern().model;
  const auto& v = model.velodyne;
  const int azimuth_index = sequence_in_packet / v.sequences_per_block;
  const int sequence = sequence_in_packet % v.sequences_per_block;
  const auto azimuth = static_cast<std::uint16_t>(
      std::lround(geometry_.velodyne_column_azimuth_deg(column) * 100.0) % 36000);
  if (returns) {
    const std::size_t first_beam = returns->shape.beam(column, 0);
    const auto channels = static_cast<std::size_t>(model.channels);
    for (int plane = 0; plane < blocks_per_azimuth_; ++plane) {
      const auto p = static_cast<std::size_t>(plane);
      simd::range_units_u32({&returns->range_m[returns->slot(first_beam, plane)], channels},
                            model.range_unit_m, std::span(units[p]).first(channels));
    }
  }
  for (int bank = 0; bank < v.banks; ++bank) {
    for (int copy = 0; copy < blocks_per_azimuth_; ++copy) {
      const std::size_t block_at =
          kDataPacket.block_at((azimuth_index * v.banks + bank) * blocks_per_azimuth_ + copy);
      if (sequence == 0) {
        store_raw(packet, block_at, kDataPacket.block_flag, VelodyneTraits::block_flag(bank));
        store_raw(packet, block_at, kDataPacket.azimuth, azimuth);
      }
      write_firing(packet, returns, column, block_at, sequence, bank, copy, units);
    }
  }
}

void VelodyneEncoder::finish_packet(Packet packet, double packet_time_s,
                                    std::size_t status_index) const {
  const auto& v = geometry_.pattern().model->velodyne;
  // Blocks past the packet's columns (VLS-128 dual: 8 to 11) repeat its first block's flag and
  // azimuth, without returns, as velodyne_decoder's dual mock lays them out: the ROS driver
  // takes block 8's azimuth for the next column's (zeros made it 0 degrees, laser 96-127 points
  // metres off) and velodyne_decoder follows the azimuth of the packet to end a revolution.
  const int used = sequences_per_packet() / v.sequences_per_block * v.banks * blocks_per_azimuth_;
  const auto first_azimuth = load_raw(packet, kDataPacket.block_at(0), kDataPacket.azimuth);
  for (int b = used; b < v.blocks_per_packet; ++b) {
    const std::size_t block_at = kDataPacket.block_at(b);
    store_raw(packet, block_at, kDataPacket.block_flag, VelodyneTraits::block_flag(0));
    store_raw(packet, block_at, kDataPacket.azimuth, first_azimuth);
  }
  store_raw(packet, 0, kDataPacket.timestamp, micros_past_hour(packet_time_s));
  if (v.status_bytes) {
    write_status(packet, packet_time_s, status_index);
  } else {
    store_raw(packet, 0, kDataPacket.return_mode,
              echoes_ == ReturnMode::kDual   ? kDual
              : echoes_ == ReturnMode::kLast ? kLast
                                             : kStrongest);
    store_raw(packet, 0, kDataPacket.product_id, v.product_id);
  }
}

void VelodyneEncoder::emit(std::span<const std::uint8_t> packet, double packet_time_s,
                           PacketSink& sink) {
  sink.on_packet(PacketChannel::kData, packet, packet_time_s);
  // Position packets keep their time rate: one per 14 single-return packets' time.
  if (++packets_since_position_ == kPositionEveryDataPackets * blocks_per_azimuth_) {
    packets_since_position_ = 0;
    const auto position = position_packet(packet_time_s, identity_);
    sink.on_packet(PacketChannel::kTelemetry, position, packet_time_s);
  }
}

void VelodyneEncoder::write_status(Packet packet, double time_s, std::size_t status_index) const {
  // HDL-64E: one status (type, value) per packet in rotation: UTC time and date of the packet,
  // GPS ('A': sync pulse and NMEA both present), temperature (degrees C), firmware version.
  constexpr auto kTypes = std::to_array({'H', 'M', 'S', 'D', 'N', 'Y', 'G', 'T', 'V'});
  const UtcFields utc = utc_fields(static_cast<std::int64_t>(std::floor(time_s)));
  const char type = kTypes[status_index % kTypes.size()];
  int value = 0;
  switch (type) {
    case 'H':
      value = utc.hour;
      break;
    case 'M':
      value = utc.minute;
      break;
    case 'S':
      value = utc.second;
      break;
    case 'D':
      value = utc.day;
      break;
    case 'N':
      value = utc.month;
      break;
    case 'Y':
      value = utc.year % 100;
      break;
    case 'G':
      value = 'A';
      break;
    case 'T':
      value = 40;
      break;
    default:
      value = 0x34;
      break;
  }
  store_raw(packet, 0, kDataPacket.return_mode, static_cast<std::uint8_t>(type));
  store_raw(packet, 0, kDataPacket.product_id, static_cast<std::uint8_t>(value));
}

void VelodyneEncoder::write_firing(Packet packet, const FrameReturns* returns, std::uint32_t column,
                                   std::size_t block_at, int sequence, int bank, int copy,
                                   const ColumnUnits& units) const {
  const SensorModel& model = *geometry_.pattern().model;
  const int lasers_per_block = model.channels / model.velodyne.banks;
  for (int position = 0; returns && position < lasers_per_block; ++position) {
    const int laser = bank * lasers_per_block + position;
    const std::size_t beam = returns->shape.beam(column, static_cast<std::uint16_t>(laser));
    const std::size_t slot =
        blocks_per_azimuth_ == 2 ? dual_block_slot(*returns, beam, copy) : returns->slot(beam, 0);
    const std::size_t at = kDataPacket.record_at(block_at, sequence * lasers_per_block + position);
    const std::size_t plane = slot == returns->slot(beam, 0) ? 0 : 1;
    const auto range_units =
        static_cast<std::uint16_t>(units[plane][static_cast<std::size_t>(laser)]);
    store_raw(packet, at, kDataPacket.distance, range_units);
    store_raw(packet, at, kDataPacket.reflectivity, range_units ? returns->reflectivity[slot] : 0);
  }
}

}  // namespace lidaremu::core::velodyne
