#pragma once
// Hesai point-cloud packets as tables (FORMATS-HESAI-ROBOSENSE.md, section 1): the pre-header and
// header every protocol shares, and per protocol the block and tail layout; per model the counts
// that differ. The spec decoder (hesai/spec_decoder.cpp) reads each field from these rows; the
// encoder, when it comes, writes them from the same rows.
//
// So far: protocol 6.1 (Pandar XT16, XT32, XT32M), 3.2 (QT128C2X), 3.1 (QT64), Pandar64 and
// Pandar40P, every field checked on the real captures; 1.4 (OT128) from FORMATS-MORE.md section
// 1 (no capture: its CRC coverage is the QT128's by analogy, the sheet's [?]).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "lidaremu/core/packet_field.hpp"

namespace lidaremu::core::hesai {

enum class Field : std::uint8_t {
  kSignature,  // EE FF on the wire
  kProtocolMajor,
  kProtocolMinor,
  kStatusVersion,  // pre-header byte 4 (the SDK tells OT128 from Pandar128 by it)
  kLaserNum,
  kBlockNum,
  kFirstBlockReturn,  // 0 single; 1 the first block is the last return; 2 the strongest
  kDistanceUnitMm,
  kReturnNum,
  kFlags,         // bit 0: UDP sequence, 1: IMU, 2: functional safety, 3: signature, 4: confidence
  kAzimuth,       // block: 0.01 degree
  kDistance,      // record: in the header's distance unit
  kReflectivity,  // record: 0-255 %
  kConfidence,    // record: XT 0xFF, QT128 0 on the real units
  kReturnMode,    // tail: 0x37 strongest, 0x38 last, 0x39 last + strongest, ...
  kMotorRpm,
  kYear,  // tail date: years since the model's year base
  kMonth,
  kDay,
  kHour,
  kMinute,
  kSecond,
  kMicroseconds,
  kFactory,
  kUdpSequence,
  kBodyCrc,    // CRC-32/MPEG-2 (little-endian) of the blocks
  kSafetyCrc,  // of the functional-safety block after its version byte
  kTailCrc,    // of the tail from after the functional-safety block
  kSafetyVersion,
  kModeFlag,
  kBlockFlag,         // Pandar40P: each block starts with FF EE, as a Velodyne block
  kSafetyState,       // lidar state (bits 7:5, 1 normal) and rolling counter (bits 2:0)
  kAzimuthState,      // OT128: 2 bits a block, block 0 in bits 15:14
  kOperationalState,  // OT128: 0 high resolution, 2 standard
  kFineAzimuth,       // AT128 block: 1/256 of 0.01 degree past the azimuth
  kUnixSecondsBe,     // AT128 tail: UNIX seconds, big-endian (after two zero bytes)
};

inline constexpr std::uint16_t kSignatureValue = 0xFFEE;  // bytes EE FF, little-endian
inline constexpr std::uint16_t kBlockFlagValue = 0xEEFF;  // bytes FF EE, little-endian

// The 12 bytes before the blocks (pre-header and header) of the protocols with a version,
// offsets from the packet's start.
inline constexpr std::array<PacketField<Field>, 10> kHeader{{
    {Field::kSignature, 0, 2, 0xFFFF},
    {Field::kProtocolMajor, 2, 1, 0xFF},
    {Field::kProtocolMinor, 3, 1, 0xFF},
    {Field::kStatusVersion, 4, 1, 0xFF},
    {Field::kLaserNum, 6, 1, 0xFF},
    {Field::kBlockNum, 7, 1, 0xFF},
    {Field::kFirstBlockReturn, 8, 1, 0xFF},
    {Field::kDistanceUnitMm, 9, 1, 0xFF},
    {Field::kReturnNum, 10, 1, 0xFF},
    {Field::kFlags, 11, 1, 0xFF},
}};

// A CRC in the tail and the bytes it covers: from the first block (whole body) or from an
// offset of the tail, to an offset of the tail (FORMATS-HESAI-ROBOSENSE.md: coverage verified on
// every packet of the real QT128 capture).
struct CrcCheck {
  PacketField<Field> crc;  // from the tail's start
  bool from_first_block;
  std::size_t begin;  // from the tail's start, unless from_first_block
  std::size_t end;    // from the tail's start, exclusive
};

// A protocol's body and tail.
struct ProtocolFormat {
  int major;  // 0: none in the packet (Pandar40P, Pandar64: told by their size)
  int minor;
  std::span<const PacketField<Field>> header;  // from the packet's start
  int distance_unit_mm;                        // when the header has no distance unit
  std::size_t first_block;                     // after the header
  std::size_t record_size;                     // one channel's record in a block
  PacketField<Field> block_flag;               // from the block's start; none when its width is 0
  PacketField<Field> azimuth;                  // from the block's start
  std::size_t first_record;                    // from the block's start
  PacketField<Field> distance;                 // from the record's start
  PacketField<Field> reflectivity;             // from the record's start
  PacketField<Field> confidence;               // from the record's start; none when width 0
  std::span<const PacketField<Field>> tail;    // from the tail's start (after the last block)
  std::size_t tail_size;
  // The date's year byte counts from this year as the manual states it (what an encoder
  // writes). Decoding follows the Hesai SDK: a value below 70 is 2000 + value, otherwise
  // 1900 + value, since real units disagree with their manuals (the Pandar64 capture carries
  // 120 for 2020, its manual says years since 2000; the Pandar40P capture 17 for 2017).
  int year_base;
  std::span<const CrcCheck> crcs;
  // Pandar40P and Pandar64 may append the UDP sequence (a u32) to their packet (4 bytes more).
  bool optional_sequence;
  PacketField<Field> fine_azimuth{};  // from the block's start; none when its width is 0
};

// Protocol 6.1 (XT): records of {distance u16, reflectivity u8, confidence u8}; the tail: 10
// reserved bytes, return mode, RPM, date (year since 1900), microseconds, factory byte, UDP
// sequence (FORMATS-HESAI-ROBOSENSE.md, "Pandar XT32").
inline constexpr std::array<PacketField<Field>, 11> kXtTail{{
    {Field::kReturnMode, 10, 1, 0xFF},
    {Field::kMotorRpm, 11, 2, 0xFFFF},
    {Field::kYear, 13, 1, 0xFF},
    {Field::kMonth, 14, 1, 0xFF},
    {Field::kDay, 15, 1, 0xFF},
    {Field::kHour, 16, 1, 0xFF},
    {Field::kMinute, 17, 1, 0xFF},
    {Field::kSecond, 18, 1, 0xFF},
    {Field::kMicroseconds, 19, 4, 0xFFFFFFFF},
    {Field::kFactory, 23, 1, 0xFF},
    {Field::kUdpSequence, 24, 4, 0xFFFFFFFF},
}};

inline constexpr ProtocolFormat kProtocol61{
    .major = 6,
    .minor = 1,
    .header = kHeader,
    .distance_unit_mm = 0,
    .first_block = 12,
    .record_size = 4,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 2,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {Field::kConfidence, 3, 1, 0xFF},
    .tail = kXtTail,
    .tail_size = 28,
    .year_base = 1900,
    .crcs = {},
    .optional_sequence = false,
};

// Protocol 3.2 (QT128C2X): records of {distance, reflectivity, confidence}; after the two blocks
// the body CRC, the 17-byte functional-safety block (version, state, fault, code, 8 reserved,
// its CRC), 5 reserved, the mode flag, 6 reserved, return mode, RPM, date (year since 1900),
// microseconds, factory byte, UDP sequence, the tail CRC, and a 32-byte signature (flags bit 3).
inline constexpr std::array<PacketField<Field>, 16> kQt128Tail{{
    {Field::kBodyCrc, 0, 4, 0xFFFFFFFF},
    {Field::kSafetyVersion, 4, 1, 0xFF},
    {Field::kSafetyCrc, 17, 4, 0xFFFFFFFF},
    {Field::kModeFlag, 26, 1, 0xFF},
    {Field::kReturnMode, 33, 1, 0xFF},
    {Field::kMotorRpm, 34, 2, 0xFFFF},
    {Field::kYear, 36, 1, 0xFF},
    {Field::kMonth, 37, 1, 0xFF},
    {Field::kDay, 38, 1, 0xFF},
    {Field::kHour, 39, 1, 0xFF},
    {Field::kMinute, 40, 1, 0xFF},
    {Field::kSecond, 41, 1, 0xFF},
    {Field::kMicroseconds, 42, 4, 0xFFFFFFFF},
    {Field::kFactory, 46, 1, 0xFF},
    {Field::kUdpSequence, 47, 4, 0xFFFFFFFF},
    {Field::kTailCrc, 51, 4, 0xFFFFFFFF},
}};
inline constexpr std::array<CrcCheck, 3> kQt128Crcs{{
    {{Field::kBodyCrc, 0, 4, 0xFFFFFFFF}, true, 0, 0},
    {{Field::kSafetyCrc, 17, 4, 0xFFFFFFFF}, false, 5, 17},  // not the version byte
    {{Field::kTailCrc, 51, 4, 0xFFFFFFFF}, false, 21, 51},
}};

inline constexpr ProtocolFormat kProtocol32{
    .major = 3,
    .minor = 2,
    .header = kHeader,
    .distance_unit_mm = 0,
    .first_block = 12,
    .record_size = 4,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 2,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {Field::kConfidence, 3, 1, 0xFF},
    .tail = kQt128Tail,
    .tail_size = 87,
    .year_base = 1900,
    .crcs = kQt128Crcs,
    .optional_sequence = false,
};

// Protocol 1.4 (OT128, nebula's Pandar128E4X; FORMATS-MORE.md 1.2): two blocks of an azimuth and
// 128 records of {distance, reflectivity}; then the body CRC, the 17-byte functional-safety
// block (version, state, fault, code, 8 bytes of channel health, its CRC), 9 reserved, the
// azimuth state, the operational state, return mode, RPM, date (year since 1900), microseconds,
// factory byte, UDP sequence, the 22-byte IMU block and the tail CRC: 861 bytes, flags 0x07
// (sequence, IMU, functional safety; no signature since the OT128 manual of 2023-09).
inline constexpr std::array<PacketField<Field>, 17> kProtocol14Tail{{
    {Field::kBodyCrc, 0, 4, 0xFFFFFFFF},
    {Field::kSafetyVersion, 4, 1, 0xFF},
    {Field::kSafetyState, 5, 1, 0xFF},
    {Field::kSafetyCrc, 17, 4, 0xFFFFFFFF},
    {Field::kAzimuthState, 30, 2, 0xFFFF},
    {Field::kOperationalState, 32, 1, 0xFF},
    {Field::kReturnMode, 33, 1, 0xFF},
    {Field::kMotorRpm, 34, 2, 0xFFFF},
    {Field::kYear, 36, 1, 0xFF},
    {Field::kMonth, 37, 1, 0xFF},
    {Field::kDay, 38, 1, 0xFF},
    {Field::kHour, 39, 1, 0xFF},
    {Field::kMinute, 40, 1, 0xFF},
    {Field::kSecond, 41, 1, 0xFF},
    {Field::kMicroseconds, 42, 4, 0xFFFFFFFF},
    {Field::kFactory, 46, 1, 0xFF},
    {Field::kUdpSequence, 47, 4, 0xFFFFFFFF},
}};
// The tail CRC after the IMU block (857-860).
inline constexpr PacketField<Field> kProtocol14TailCrc{Field::kTailCrc, 73, 4, 0xFFFFFFFF};
inline constexpr std::array<CrcCheck, 3> kProtocol14Crcs{{
    {{Field::kBodyCrc, 0, 4, 0xFFFFFFFF}, true, 0, 0},
    {{Field::kSafetyCrc, 17, 4, 0xFFFFFFFF}, false, 5, 17},  // not the version byte
    {kProtocol14TailCrc, false, 21, 73},
}};

inline constexpr ProtocolFormat kProtocol14{
    .major = 1,
    .minor = 4,
    .header = kHeader,
    .distance_unit_mm = 0,
    .first_block = 12,
    .record_size = 3,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 2,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {},
    .tail = kProtocol14Tail,
    .tail_size = 77,
    .year_base = 1900,
    .crcs = kProtocol14Crcs,
    .optional_sequence = false,
};

// Protocol 4.3 (AT128E2X; FORMATS-MORE.md 2.2): two blocks of an encoder azimuth, a fine azimuth
// and 128 records of {distance, reflectivity, confidence}; then the body CRC, 18 reserved bytes
// (reserved info, the high-temperature flag), motor speed, microseconds, return mode, factory,
// the date as two zero bytes and big-endian UNIX seconds (both drivers read it so), UDP sequence,
// the tail CRC, and a 32-byte signature: 1118 bytes, the length nebula's real AT128 sent. The CRC
// coverage is the QT128's by analogy (the sheet's [?]; neither driver checks it).
inline constexpr std::array<PacketField<Field>, 7> kProtocol43Tail{{
    {Field::kBodyCrc, 0, 4, 0xFFFFFFFF},
    {Field::kMotorRpm, 22, 2, 0xFFFF},
    {Field::kMicroseconds, 24, 4, 0xFFFFFFFF},
    {Field::kReturnMode, 28, 1, 0xFF},
    {Field::kFactory, 29, 1, 0xFF},
    {Field::kUnixSecondsBe, 32, 4, 0xFFFFFFFF},
    {Field::kUdpSequence, 36, 4, 0xFFFFFFFF},
}};
inline constexpr std::array<CrcCheck, 2> kProtocol43Crcs{{
    {{Field::kBodyCrc, 0, 4, 0xFFFFFFFF}, true, 0, 0},
    {{Field::kTailCrc, 40, 4, 0xFFFFFFFF}, false, 4, 40},
}};

inline constexpr ProtocolFormat kProtocol43{
    .major = 4,
    .minor = 3,
    .header = kHeader,
    .distance_unit_mm = 0,
    .first_block = 12,
    .record_size = 4,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 3,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {Field::kConfidence, 3, 1, 0xFF},
    .tail = kProtocol43Tail,
    .tail_size = 76,
    .year_base = 1900,
    .crcs = kProtocol43Crcs,
    .optional_sequence = false,
    .fine_azimuth = {Field::kFineAzimuth, 2, 1, 0xFF},
};

// Protocol 3.1 (QT64): the XT's block shape (records of {distance, reflectivity, a reserved
// byte}); the tail: 10 reserved bytes, RPM, microseconds, return mode, factory byte, date (year
// since 1900), UDP sequence (nebula's PacketQT64; every packet of the real capture).
inline constexpr std::array<PacketField<Field>, 11> kQt64Tail{{
    {Field::kMotorRpm, 10, 2, 0xFFFF},
    {Field::kMicroseconds, 12, 4, 0xFFFFFFFF},
    {Field::kReturnMode, 16, 1, 0xFF},
    {Field::kFactory, 17, 1, 0xFF},
    {Field::kYear, 18, 1, 0xFF},
    {Field::kMonth, 19, 1, 0xFF},
    {Field::kDay, 20, 1, 0xFF},
    {Field::kHour, 21, 1, 0xFF},
    {Field::kMinute, 22, 1, 0xFF},
    {Field::kSecond, 23, 1, 0xFF},
    {Field::kUdpSequence, 24, 4, 0xFFFFFFFF},
}};

inline constexpr ProtocolFormat kProtocol31{
    .major = 3,
    .minor = 1,
    .header = kHeader,
    .distance_unit_mm = 0,
    .first_block = 12,
    .record_size = 4,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 2,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {Field::kConfidence, 3, 1, 0xFF},
    .tail = kQt64Tail,
    .tail_size = 28,
    .year_base = 1900,
    .crcs = {},
    .optional_sequence = false,
};

// Pandar64 and Pandar40P share a 22-byte tail: 5 reserved, high-temperature flag, error code,
// RPM, microseconds, return mode, factory byte, date (then the optional UDP sequence).
inline constexpr std::array<PacketField<Field>, 11> kPandarTail{{
    {Field::kMotorRpm, 8, 2, 0xFFFF},
    {Field::kMicroseconds, 10, 4, 0xFFFFFFFF},
    {Field::kReturnMode, 14, 1, 0xFF},
    {Field::kFactory, 15, 1, 0xFF},
    {Field::kYear, 16, 1, 0xFF},
    {Field::kMonth, 17, 1, 0xFF},
    {Field::kDay, 18, 1, 0xFF},
    {Field::kHour, 19, 1, 0xFF},
    {Field::kMinute, 20, 1, 0xFF},
    {Field::kSecond, 21, 1, 0xFF},
    {Field::kUdpSequence, 22, 4, 0xFFFFFFFF},  // only in the longer packet
}};

// Pandar64: an 8-byte header (EE FF, laser count, block count, first-block return, distance
// unit, 2 reserved), then blocks of an azimuth and 64 records of {distance, reflectivity}.
inline constexpr std::array<PacketField<Field>, 5> kPandar64Header{{
    {Field::kSignature, 0, 2, 0xFFFF},
    {Field::kLaserNum, 2, 1, 0xFF},
    {Field::kBlockNum, 3, 1, 0xFF},
    {Field::kFirstBlockReturn, 4, 1, 0xFF},
    {Field::kDistanceUnitMm, 5, 1, 0xFF},
}};
inline constexpr ProtocolFormat kPandar64Protocol{
    .major = 0,
    .minor = 0,
    .header = kPandar64Header,
    .distance_unit_mm = 0,
    .first_block = 8,
    .record_size = 3,
    .block_flag = {},
    .azimuth = {Field::kAzimuth, 0, 2, 0xFFFF},
    .first_record = 2,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {},
    .tail = kPandarTail,
    .tail_size = 22,
    .year_base = 2000,
    .crcs = {},
    .optional_sequence = true,
};

// Pandar40P: no header; blocks of FF EE, an azimuth and 40 records, distance in 4 mm.
inline constexpr ProtocolFormat kPandar40Protocol{
    .major = 0,
    .minor = 0,
    .header = {},
    .distance_unit_mm = 4,
    .first_block = 0,
    .record_size = 3,
    .block_flag = {Field::kBlockFlag, 0, 2, 0xFFFF},
    .azimuth = {Field::kAzimuth, 2, 2, 0xFFFF},
    .first_record = 4,
    .distance = {Field::kDistance, 0, 2, 0xFFFF},
    .reflectivity = {Field::kReflectivity, 2, 1, 0xFF},
    .confidence = {},
    .tail = kPandarTail,
    .tail_size = 22,
    .year_base = 2000,
    .crcs = {},
    .optional_sequence = true,
};

// What a model's packets hold, and the constant bytes its real units send (each checked on the
// model's capture by test_hesai).
struct ModelFormat {
  std::string_view name;
  const ProtocolFormat* protocol;
  int lasers;
  int blocks;                      // per packet, whatever the return mode
  std::uint8_t flags;              // header byte 11 (none without a header)
  std::uint8_t distance_unit_mm;   // header byte 9 (the protocol's, without a header)
  std::uint8_t factory;            // tail factory byte
  std::uint8_t confidence;         // what the record's confidence byte carries
  std::uint8_t dual_first_block;   // header byte 8 in dual mode: 1 last first, 2 strongest first
  std::uint8_t dual_return_num;    // header byte 10 in the two-block modes (XT32M2X: 3)
  std::uint8_t status_version;     // pre-header byte 4
  std::uint8_t safety_version;     // the functional-safety block's first byte (none: 0)
  bool sends_sequence;             // Pandar64, 40P: the optional UDP sequence appended
  std::uint8_t operational_state;  // OT128's tail byte: 2, standard resolution (none: 0)

  [[nodiscard]] constexpr std::size_t block_size() const {
    return protocol->first_record + static_cast<std::size_t>(lasers) * protocol->record_size;
  }
  [[nodiscard]] constexpr std::size_t block_at(int block) const {
    return protocol->first_block + static_cast<std::size_t>(block) * block_size();
  }
  [[nodiscard]] constexpr std::size_t record_at(int block, int channel) const {
    return block_at(block) + protocol->first_record +
           static_cast<std::size_t>(channel) * protocol->record_size;
  }
  [[nodiscard]] constexpr std::size_t tail_at() const { return block_at(blocks); }
  [[nodiscard]] constexpr std::size_t packet_size() const {
    return tail_at() + protocol->tail_size;
  }
  // With the optional UDP sequence appended (0: the protocol has none).
  [[nodiscard]] constexpr std::size_t packet_size_with_sequence() const {
    return protocol->optional_sequence ? packet_size() + 4 : 0;
  }
  // What the emulated unit sends.
  [[nodiscard]] constexpr std::size_t sent_size() const {
    return sends_sequence ? packet_size_with_sequence() : packet_size();
  }
};

// Flags: XT and QT64 0x01 (UDP sequence), QT128C2X 0x1D (sequence, functional safety,
// signature, confidence); the Pandar64 "first block" byte is 0 even in dual mode on the real
// unit, which appends the UDP sequence (1198 bytes); the 40P's capture does not (1262). The
// XT32M2X's header counts 3 returns in its first + strongest mode (the unit's triple mode is
// the most it has), the others 2. The OT128: flags 0x07, pre-header byte 4 0x80 (the SDK takes
// a value above 127 for an OT128), functional-safety version 1 (as the QT128's), standard
// resolution. The AT128: flags 0x09 (sequence and signature, as its 1118 bytes hold; the sheet's
// [?]), status byte 0 (its value unknown), confidence 0.
inline constexpr auto kModelFormats = std::to_array<ModelFormat>({
    {"pandar-xt32", &kProtocol61, 32, 8, 0x01, 4, 0x42, 0xFF, 1, 2, 0, 0, false, 0},
    {"pandar-xt16", &kProtocol61, 16, 8, 0x01, 4, 0x42, 0xFF, 1, 2, 0, 0, false, 0},
    {"pandar-xt32m", &kProtocol61, 32, 6, 0x01, 5, 0x42, 0xFF, 1, 3, 0, 0, false, 0},
    {"pandar-qt128", &kProtocol32, 128, 2, 0x1D, 4, 0x42, 0x00, 1, 2, 3, 1, false, 0},
    {"pandar-qt64", &kProtocol31, 64, 4, 0x01, 4, 0x42, 0x00, 1, 2, 0, 0, false, 0},
    {"pandar-64", &kPandar64Protocol, 64, 6, 0x00, 4, 0x42, 0x00, 0, 2, 0, 0, true, 0},
    {"pandar-40p", &kPandar40Protocol, 40, 10, 0x00, 4, 0x42, 0x00, 0, 2, 0, 0, false, 0},
    {"pandar-ot128", &kProtocol14, 128, 2, 0x07, 4, 0x42, 0x00, 1, 2, 0x80, 1, false, 2},
    {"pandar-at128", &kProtocol43, 128, 2, 0x09, 4, 0x42, 0x00, 1, 2, 0, 0, false, 0},
});

// The GPS packet a unit with a GPS input sends to UDP 10110 once a second (XT32M2X user manual,
// 3.2.2 "GPS UDP Data", and the Pandar40P SDK's parser): 512 bytes, the flag FF EE, the date and
// time as two ASCII digits each, units first (year from 2000, month, day, second, minute, hour),
// microseconds, the NMEA sentence, 388 bytes of 0xDF, positioning status (the GPRMC's 'A' / 'V'),
// PPS lock (1 locked), 4 reserved.
enum class GpsField : std::uint8_t {
  kFlag,
  kYear,
  kMonth,
  kDay,
  kSecond,
  kMinute,
  kHour,
  kMicroseconds,
  kPositioningStatus,
  kPpsLock
};

struct GpsPacketFormat {
  std::size_t size;
  std::array<PacketField<GpsField>, 10> fields;
  std::size_t nmea_at, nmea_bytes;
  std::size_t reserved_at, reserved_bytes;
  std::uint8_t reserved_fill;
};

inline constexpr GpsPacketFormat kGpsPacket{
    .size = 512,
    .fields = {{
        {GpsField::kFlag, 0, 2, 0xFFFF},
        {GpsField::kYear, 2, 2, 0xFFFF},
        {GpsField::kMonth, 4, 2, 0xFFFF},
        {GpsField::kDay, 6, 2, 0xFFFF},
        {GpsField::kSecond, 8, 2, 0xFFFF},
        {GpsField::kMinute, 10, 2, 0xFFFF},
        {GpsField::kHour, 12, 2, 0xFFFF},
        {GpsField::kMicroseconds, 14, 4, 0xFFFFFFFF},
        {GpsField::kPositioningStatus, 506, 1, 0xFF},
        {GpsField::kPpsLock, 507, 1, 0xFF},
    }},
    .nmea_at = 18,
    .nmea_bytes = 100,
    .reserved_at = 118,
    .reserved_bytes = 388,
    .reserved_fill = 0xDF,
};
inline constexpr std::uint16_t kGpsFlagValue = 0xEEFF;  // bytes FF EE, little-endian

}  // namespace lidaremu::core::hesai
