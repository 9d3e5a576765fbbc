// The spec decoder for Velodyne data packets (FORMATS.md), written from the public format and
// tested on real captures against another driver's decoded clouds.
#include <cmath>

#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::core::velodyne {

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kWrongSize:
      return "wrong packet size";
    case DecodeError::kBadBlockFlag:
      return "bad block flag";
    case DecodeError::kBadAzimuth:
      return "azimuth out of range";
    case DecodeError::kWrongProduct:
      return "product id does not match the model";
  }
  return "?";
}

// Until a second packet shows the rotation, assume the default rate.
SpecDecoder::SpecDecoder(const SensorModel& model)
    : model_(model),
      previous_step_(static_cast<int>(
          std::lround(36000.0 * model.spin.default_rpm / 60.0 * model.velodyne.sequences_per_block *
                      model.velodyne.sequence_period_us * 1e-6))) {}

DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                                PacketInfo* info) {
  if (packet.size() != kDataPacketSize) return DecodeError::kWrongSize;
  const auto& v = model_.velodyne;
  const auto field = [&](const PacketField<DataField>& f, std::size_t base = 0) {
    return load_raw(packet, base, f);
  };
  const auto product = static_cast<std::uint8_t>(field(kDataPacket.product_id));
  if (!v.status_bytes && product != v.product_id) {
    return DecodeError::kWrongProduct;
  }
  // The HDL-64E's status bytes say nothing of the return mode: its layout is single-return.
  const std::uint8_t mode =
      v.status_bytes ? kStrongest : static_cast<std::uint8_t>(field(kDataPacket.return_mode));
  const bool dual = mode == kDual;
  const int copies = dual ? 2 : 1;  // dual: blocks in pairs with the same azimuth
  const int azimuths = v.blocks_per_packet / (copies * v.banks);
  const int blocks = azimuths * copies * v.banks;  // VLS-128 dual leaves 4 blocks unused
  std::array<int, 12> azimuth{};
  for (int b = 0; b < blocks; ++b) {
    const int bank = (b / copies) % v.banks;
    const std::size_t block_at = kDataPacket.block_at(b);
    if (field(kDataPacket.block_flag, block_at) != VelodyneTraits::block_flag(bank))
      return DecodeError::kBadBlockFlag;
    azimuth[b] = static_cast<int>(field(kDataPacket.azimuth, block_at));
    if (azimuth[b] >= 36000) return DecodeError::kBadAzimuth;
  }
  const auto timestamp = static_cast<std::uint32_t>(field(kDataPacket.timestamp));
  if (info) *info = {static_cast<std::uint16_t>(azimuth[0]), timestamp, mode, product};

  // The rotation during a column is read from the next column's azimuth (the last column reuses
  // the step before it, a packet of one column the step from the previous packet), as the
  // public drivers do.
  const int per_azimuth = copies * v.banks;
  std::array<int, 12> step{};
  // The azimuth of column a: that of its first block.
  const auto column_azimuth = [&](int a) {
    return azimuth[static_cast<std::size_t>(a) * static_cast<std::size_t>(per_azimuth)];
  };
  for (int a = 0; a < azimuths; ++a) {
    int diff = a + 1 < azimuths         ? column_azimuth(a + 1) - column_azimuth(a)
               : a > 0                  ? column_azimuth(a) - column_azimuth(a - 1)
               : previous_azimuth_ >= 0 ? azimuth[0] - previous_azimuth_
                                        : 0;
    if (diff < 0) diff += 36000;
    step[a] = diff;
  }
  if (azimuths == 1 && step[0] == 0) step[0] = previous_step_;
  previous_step_ = step[azimuths - 1];
  previous_azimuth_ = column_azimuth(azimuths - 1);

  const int lasers_per_block = model_.channels / v.banks;
  const double block_span_us = v.sequences_per_block * v.sequence_period_us;
  for (int b = 0; b < blocks; ++b) {
    const int group = b / per_azimuth;
    const int bank = (b / copies) % v.banks;
    const std::uint8_t kind = dual ? (b % 2 == 0 ? 1 : 2) : 0;
    for (int slot = 0; slot < v.sequences_per_block * lasers_per_block; ++slot) {
      const std::size_t at = kDataPacket.record_at(kDataPacket.block_at(b), slot);
      const auto units = static_cast<std::uint16_t>(field(kDataPacket.distance, at));
      if (units == 0) continue;
      const int sequence = slot / lasers_per_block;
      const int laser = bank * lasers_per_block + slot % lasers_per_block;
      const double offset_us = v.sequence_period_us * sequence + v.firing_offset_us(laser);
      const double azimuth_centideg = azimuth[b] + step[group] * offset_us / block_span_us;
      const double r = units * model_.range_unit_m;
      const Eigen::Vector3d xyz = velodyne_point(model_, laser, azimuth_centideg / 100.0, r);
      Point p;
      p.x = static_cast<float>(xyz.x());
      p.y = static_cast<float>(xyz.y());
      p.z = static_cast<float>(xyz.z());
      p.distance_m = static_cast<float>(r);
      p.azimuth_deg = static_cast<float>(std::fmod(azimuth_centideg / 100.0, 360.0));
      p.reflectivity = static_cast<std::uint8_t>(field(kDataPacket.reflectivity, at));
      p.laser = static_cast<std::uint16_t>(laser);
      p.return_kind = kind;
      p.time_s = (timestamp + block_span_us * group + offset_us) * 1e-6;
      p.block_azimuth = static_cast<std::uint16_t>(azimuth[b]);
      p.sequence = static_cast<std::uint8_t>(sequence);
      out.push_back(p);
    }
  }
  return DecodeError::kNone;
}

}  // namespace lidaremu::core::velodyne
