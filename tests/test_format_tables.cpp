// The declarative format tables: the field reader and writer, and each family's tables checked
// against the published layouts (FORMATS.md), independently of the encoder and decoder that
// read them (those are checked on real captures and by the output digests).
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lidaremu/core/hesai/format.hpp"
#include "lidaremu/core/livox/format.hpp"
#include "lidaremu/core/ouster/profiles.hpp"
#include "lidaremu/core/packet_field.hpp"
#include "lidaremu/core/velodyne/format.hpp"

using namespace lidaremu::core;

TEST_CASE("A packet field writes its own bits and leaves its neighbours'", "[format]") {
  enum class F : std::uint8_t { kRange, kReflectivity };
  // The Ouster dual profile's first return: 19 bits of range in a u32 whose top byte is the
  // reflectivity.
  const PacketField<F> range{F::kRange, 0, 4, 0x7FFFF};
  const PacketField<F> reflectivity{F::kReflectivity, 3, 1, 0xFF};
  std::vector<std::uint8_t> bytes(8, 0);
  store_raw(bytes, 2, reflectivity, 0xAB);
  store_raw(bytes, 2, range, 0x12345);
  CHECK(load_raw(std::span<const std::uint8_t>(bytes), 2, range) == 0x12345);
  CHECK(load_raw(std::span<const std::uint8_t>(bytes), 2, reflectivity) == 0xAB);
  CHECK(bytes == std::vector<std::uint8_t>{0, 0, 0x45, 0x23, 0x01, 0xAB, 0, 0});
  // Bits beyond the mask are cut, not carried into the neighbour.
  store_raw(bytes, 2, range, 0xFFFFFFFF);
  CHECK(load_raw(std::span<const std::uint8_t>(bytes), 2, range) == 0x7FFFF);
  CHECK(bytes[5] == 0xAB);
  // A unit of 2^3 (RNG15's 8 mm steps): the value is the bits times 8.
  const PacketField<F> coarse{F::kRange, 0, 2, 0x7FFF, 3};
  std::vector<std::uint8_t> two{0x10, 0x80};  // bit 15 (a flag) is not the range's
  CHECK(load_field(std::span<const std::uint8_t>(two), 0, coarse) == std::uint64_t{0x10} * 8);
  CHECK(coarse.max_value() == std::uint64_t{0x7FFF} * 8);
}

namespace {
// Every bit a table's fields claim, by byte of the part: no bit claimed twice, none outside.
template <typename Name>
void check_disjoint(std::span<const PacketField<Name>> fields, std::size_t part_bytes) {
  std::vector<std::uint8_t> claimed(part_bytes, 0);
  for (const auto& f : fields) {
    INFO("field at byte " << f.offset);
    REQUIRE(f.offset + f.bytes <= part_bytes);
    // The field reader loads words of these widths only (packet_field.hpp).
    CHECK((f.bytes == 1 || f.bytes == 2 || f.bytes == 4 || f.bytes == 8));
    for (std::size_t i = 0; i < f.bytes; ++i) {
      const auto bits = static_cast<std::uint8_t>(f.mask >> (8 * i));
      CHECK((claimed[f.offset + i] & bits) == 0);
      claimed[f.offset + i] |= bits;
    }
  }
}
}  // namespace

TEST_CASE("Ouster profile tables: sizes and bit positions as FORMATS.md publishes them",
          "[format][ouster]") {
  // FORMATS.md, "Ouster": the OS-x-64 packet size of each profile.
  const std::map<std::string, std::size_t> os64_size{{"LEGACY", 12608},
                                                     {"RNG19_RFL8_SIG16_NIR16", 12544},
                                                     {"RNG19_RFL8_SIG16_NIR16_DUAL", 16640},
                                                     {"RNG15_RFL8_NIR8", 4352}};
  REQUIRE(ouster::profile_formats().size() == os64_size.size());
  for (const auto p : {OusterProfile::kLegacy, OusterProfile::kRng19, OusterProfile::kRng19Dual,
                       OusterProfile::kRng15}) {
    CHECK(ouster::profile_format(p).profile == p);  // every profile has its own row
  }
  for (const auto& f : ouster::profile_formats()) {
    INFO(f.name);
    REQUIRE(os64_size.contains(f.name));
    CHECK(f.layout.packet_size(64, 16) == os64_size.at(f.name));
    check_disjoint(f.packet_header, f.layout.packet_header);
    check_disjoint(f.column_header, f.layout.column_header);
    check_disjoint(f.pixel, f.layout.pixel);
    check_disjoint(f.column_footer, f.layout.column_footer);
    CHECK(f.crc64_footer == (f.layout.packet_footer == 32));
  }
  // Bit positions in the byte stream (FORMATS.md's pixel list).
  const auto field = [](const ouster::ProfileFormat& f, ouster::PixelField name) {
    for (const auto& p : f.pixel)
      if (p.name == name) return p;
    FAIL("no such field");
    return PacketField<ouster::PixelField>{};
  };
  using P = ouster::PixelField;
  const auto& dual = ouster::profile_format(OusterProfile::kRng19Dual);
  CHECK(field(dual, P::kRange2).offset * 8 == 32);
  CHECK(field(dual, P::kRange2).mask == (1u << 19) - 1);  // bits 32-50
  CHECK(field(dual, P::kReflectivity2).offset == 7);
  CHECK(field(dual, P::kNearIr).offset == 12);
  const auto& low = ouster::profile_format(OusterProfile::kRng15);
  CHECK(field(low, P::kRange).max_value() == std::uint64_t{(1u << 15) - 1} * 8);  // 8 mm units
  CHECK(field(low, P::kNearIr).unit_shift == 4);                                  // value / 16
  const auto& legacy = ouster::profile_format(OusterProfile::kLegacy);
  CHECK(field(legacy, P::kRange).mask == (1u << 20) - 1);
  CHECK(legacy.status_valid == 0xFFFFFFFFu);
  CHECK(legacy.packet_header.empty());
}

TEST_CASE("Velodyne packet table: blocks, records and factory bytes fill the packet exactly",
          "[format][velodyne]") {
  const auto& d = velodyne::kDataPacket;
  // FORMATS.md: 12 blocks of 100 bytes (flag, azimuth, 32 records of 3 bytes), then the
  // timestamp and the two factory bytes: 1206 bytes, nothing left over, nothing shared.
  CHECK(d.first_record + 32 * d.record_size == d.block_size);
  CHECK(d.block_at(d.blocks) == d.timestamp.offset);
  CHECK(d.timestamp.offset + d.timestamp.bytes == d.return_mode.offset);
  CHECK(d.return_mode.offset + 1u == d.product_id.offset);
  CHECK(d.product_id.offset + 1u == d.size);
  const std::array<PacketField<velodyne::DataField>, 2> block_head{d.block_flag, d.azimuth};
  check_disjoint<velodyne::DataField>(block_head, d.first_record);
  const std::array<PacketField<velodyne::DataField>, 2> record{d.distance, d.reflectivity};
  check_disjoint<velodyne::DataField>(record, d.record_size);
  CHECK(d.record_at(d.block_at(11), 31) + d.record_size == d.timestamp.offset);
  const auto& p = velodyne::kPositionPacket;
  CHECK(p.nmea_at + p.nmea_bytes <= p.size);
  CHECK(p.timestamp.offset + p.timestamp.bytes <= p.pps_status.offset);
  CHECK(p.pps_status.offset < p.nmea_at);
}

TEST_CASE("Hesai tables: every model's packet size as FORMATS-HESAI-ROBOSENSE.md gives it",
          "[format][hesai]") {
  const std::map<std::string, std::pair<std::size_t, std::size_t>> published{
      {"pandar-xt32", {1080, 0}},   {"pandar-xt16", {568, 0}},  {"pandar-xt32m", {820, 0}},
      {"pandar-qt128", {1127, 0}},  {"pandar-qt64", {1072, 0}}, {"pandar-64", {1194, 1198}},
      {"pandar-40p", {1262, 1266}}, {"pandar-ot128", {861, 0}}, {"pandar-at128", {1118, 0}}};
  REQUIRE(hesai::kModelFormats.size() == published.size());
  for (const auto& m : hesai::kModelFormats) {
    const std::string name(m.name);
    INFO(name);
    REQUIRE(published.contains(name));
    CHECK(m.packet_size() == published.at(name).first);
    CHECK(m.packet_size_with_sequence() == published.at(name).second);
    const auto& p = *m.protocol;
    check_disjoint(p.header, p.first_block);
    check_disjoint(p.tail, p.tail_size + (p.optional_sequence ? 4 : 0));
    for (const auto& crc : p.crcs) {
      CHECK(crc.end <= crc.crc.offset);  // a CRC covers what comes before it
    }
  }
}

TEST_CASE("Livox tables: the header and command frame as FORMATS-HESAI-ROBOSENSE.md lays them out",
          "[format][livox]") {
  // Each row where its name points, no two claiming a bit, inside the 36-byte header (the
  // reserved 12 bytes at 12 unclaimed) and the 24-byte command header.
  for (std::size_t i = 0; i < livox::kHeader.size(); ++i) {
    CHECK(static_cast<std::size_t>(livox::kHeader[i].name) == i);
  }
  for (std::size_t i = 0; i < livox::kCommandHeader.size(); ++i) {
    CHECK(static_cast<std::size_t>(livox::kCommandHeader[i].name) == i);
  }
  check_disjoint<livox::HeaderField>(livox::kHeader, livox::kHeaderSize);
  check_disjoint<livox::CommandField>(livox::kCommandHeader, livox::kCommandHeaderSize);
  CHECK(livox::header_field(livox::HeaderField::kTimeType).offset + 1u == livox::kReservedAt);
  CHECK(livox::kReservedAt + 12 == livox::header_field(livox::HeaderField::kCrc32).offset);
  CHECK(livox::header_field(livox::HeaderField::kTimestamp).offset == livox::kCrcCoveredFrom);
  CHECK(livox::header_field(livox::HeaderField::kTimestamp).offset + 8u == livox::kHeaderSize);
  CHECK(livox::command_field(livox::CommandField::kHeaderCrc).offset == livox::kHeaderCrcCovers);
  CHECK(livox::command_field(livox::CommandField::kDataCrc).offset + 4u ==
        livox::kCommandHeaderSize);
  // The Mid-360 in practice: 96 points of 14 bytes, 1380 bytes; IMU 60 bytes.
  CHECK(livox::kPointPacketSize == 1380);
  CHECK(livox::kImuPacketSize == 60);
  CHECK(livox::kDetectionCmdPort + 2 == livox::kDetectionSize);
}
