#pragma once
// The Velodyne packet formats as a table (FORMATS.md, "Velodyne"): where each field of a data
// packet and a position packet lies. The encoder (velodyne/encoder.cpp) writes each field and the
// spec decoder (velodyne/spec_decoder.cpp) reads it from the same row, so an offset is written
// once. One layout serves every model: what differs per model (lasers per block, banks, firing
// timing, distance unit, product byte) is the model's registry row (VelodyneTraits).
#include <cstddef>
#include <cstdint>

#include "lidaremu/core/packet_field.hpp"

namespace lidaremu::core::velodyne {

enum class DataField : std::uint8_t {
  kBlockFlag,     // FF EE (FF DD, FF CC, FF BB for the further banks)
  kAzimuth,       // centidegrees, 0-35999
  kDistance,      // in the model's distance unit (2 or 4 mm); 0: no return
  kReflectivity,  // calibrated reflectivity
  kTimestamp,     // microseconds past the hour
  kReturnMode,    // 0x37 strongest, 0x38 last, 0x39 dual (HDL-64E: the status type)
  kProductId      // the model's product byte (HDL-64E: the status value)
};

struct DataPacketFormat {
  std::size_t size;
  int blocks;
  std::size_t block_size;
  std::size_t first_record;  // the block's first (distance, reflectivity) record
  std::size_t record_size;
  PacketField<DataField> block_flag;  // offsets from the block's start
  PacketField<DataField> azimuth;
  PacketField<DataField> distance;  // offsets from the record's start
  PacketField<DataField> reflectivity;
  PacketField<DataField> timestamp;  // offsets from the packet's start
  PacketField<DataField> return_mode;
  PacketField<DataField> product_id;

  [[nodiscard]] constexpr std::size_t block_at(int block) const {
    return static_cast<std::size_t>(block) * block_size;
  }
  // Record k of a block (k = sequence x lasers per block + position in the sequence).
  [[nodiscard]] constexpr std::size_t record_at(std::size_t block_at, int k) const {
    return block_at + first_record + static_cast<std::size_t>(k) * record_size;
  }
};

inline constexpr DataPacketFormat kDataPacket{
    .size = 1206,
    .blocks = 12,
    .block_size = 100,
    .first_record = 4,
    .record_size = 3,
    .block_flag = {DataField::kBlockFlag, 0, 2, 0xFFFF},
    .azimuth = {DataField::kAzimuth, 2, 2, 0xFFFF},
    .distance = {DataField::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {DataField::kReflectivity, 2, 1, 0xFF},
    .timestamp = {DataField::kTimestamp, 1200, 4, 0xFFFFFFFF},
    .return_mode = {DataField::kReturnMode, 1204, 1, 0xFF},
    .product_id = {DataField::kProductId, 1205, 1, 0xFF},
};

enum class PositionField : std::uint8_t { kTimestamp, kPpsStatus };

struct PositionPacketFormat {
  std::size_t size;
  PacketField<PositionField> timestamp;  // microseconds past the hour
  PacketField<PositionField> pps_status;
  std::size_t nmea_at;  // the NMEA sentence (ASCII, NUL-padded)
  std::size_t nmea_bytes;
};

inline constexpr PositionPacketFormat kPositionPacket{
    .size = 512,
    .timestamp = {PositionField::kTimestamp, 0xC6, 4, 0xFFFFFFFF},
    .pps_status = {PositionField::kPpsStatus, 0xCA, 1, 0xFF},
    .nmea_at = 0xCE,
    .nmea_bytes = 128,
};

}  // namespace lidaremu::core::velodyne
