#pragma once
// Velodyne data and position packets (FORMATS.md) in strongest, last and dual return modes, and a
// decoder written from the public specification, used by tests and tools to check what the
// encoder emits.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/velodyne/format.hpp"

namespace lidaremu::core::velodyne {

inline constexpr std::size_t kDataPacketSize = kDataPacket.size;
inline constexpr std::size_t kPositionPacketSize = kPositionPacket.size;
inline constexpr std::uint8_t kStrongest = 0x37;
inline constexpr std::uint8_t kLast = 0x38;
inline constexpr std::uint8_t kDual = 0x39;
inline constexpr int kPositionEveryDataPackets = 14;

std::uint32_t micros_past_hour(double time_s);
inline constexpr std::size_t kMaxNmeaBytes = kPositionPacket.nmea_bytes;
std::array<std::uint8_t, kPositionPacketSize> position_packet(double unix_time_s,
                                                              const SensorIdentity& identity);

class VelodyneEncoder final : public ColumnEncoder {
 public:
  // echoes: strongest or last (echo plane 0, one block per azimuth) or dual (blocks in pairs
  // with the same azimuth: last, then strongest or second strongest).
  VelodyneEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                  ReturnMode echoes = ReturnMode::kStrongest);
  [[nodiscard]] std::size_t data_packet_size() const override { return kDataPacketSize; }
  [[nodiscard]] double data_packet_period_s() const override;

 private:
  static constexpr std::size_t kMaxChannels = 128;
  using Packet = std::span<std::uint8_t>;
  // A column's range units by laser for each echo plane, in SIMD lanes a column at a time
  // (simd::range_units_u32); a record keeps their low 16 bits.
  using ColumnUnits = std::array<std::array<std::uint32_t, kMaxChannels>, 2>;

  void append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                     PacketSink& sink) override;
  [[nodiscard]] bool packet_open() const override { return sequences_in_packet_ != 0; }
  [[nodiscard]] std::uint32_t columns_per_whole_packet() const override;
  void write_packet(Packet packet, const FrameReturns& returns, std::uint32_t first,
                    double frame_start_s, std::uint32_t ordinal) const override;
  void send_packet(std::span<const std::uint8_t> packet, std::uint32_t first, double frame_start_s,
                   PacketSink& sink) override;
  // The column's blocks' headers and records, the packet's `sequence`-th column.
  void write_column(Packet packet, const FrameReturns* returns, std::uint32_t column,
                    int sequence_in_packet, ColumnUnits& units) const;
  void write_firing(Packet packet, const FrameReturns* returns, std::uint32_t column,
                    std::size_t block_at, int sequence, int bank, int copy,
                    const ColumnUnits& units) const;
  // What a packet carries once its columns are in: the unused blocks, its time, its mode or
  // the HDL-64E status of its place (status_index) in the rotation.
  void finish_packet(Packet packet, double packet_time_s, std::size_t status_index) const;
  void write_status(Packet packet, double time_s, std::size_t status_index) const;
  // A complete packet leaves, with a position packet at its rate.
  void emit(std::span<const std::uint8_t> packet, double packet_time_s, PacketSink& sink);
  [[nodiscard]] int sequences_per_packet() const;
  BeamGeometry geometry_;
  SensorIdentity identity_;
  ReturnMode echoes_;
  int blocks_per_azimuth_ = 1;  // 2 in dual mode
  ColumnUnits column_units_{};  // append_column's
  std::array<std::uint8_t, kDataPacketSize> packet_{};
  int sequences_in_packet_ = 0;
  double packet_time_s_ = 0;
  int packets_since_position_ = 0;
  std::size_t status_index_ = 0;  // HDL-64E status rotation: the next packet's place
};

// ---- decoding (spec decoder) ----

enum class DecodeError : std::uint8_t {
  kNone,
  kWrongSize,
  kBadBlockFlag,
  kBadAzimuth,
  kWrongProduct
};
const char* to_string(DecodeError e);

struct Point {
  float x = 0, y = 0, z = 0;
  float distance_m = 0;
  float azimuth_deg = 0;
  std::uint8_t reflectivity = 0;
  std::uint16_t laser = 0;
  std::uint8_t return_kind = 0;  // 0 strongest/single, 1 last, 2 second strongest (dual)
  double time_s = 0;             // packet time (µs past hour) + firing offset
  // Where the point sits in the packet: its block's azimuth (0.01°, as sent) and the firing
  // sequence within the block, which together name the rotation step (column) it belongs to.
  std::uint16_t block_azimuth = 0;
  std::uint8_t sequence = 0;
};

struct PacketInfo {
  std::uint16_t first_azimuth = 0;
  std::uint32_t timestamp_us = 0;
  std::uint8_t return_mode = 0;
  std::uint8_t product_id = 0;
};

class SpecDecoder {
 public:
  explicit SpecDecoder(const SensorModel& model);
  // Appends the returns of one data packet (distance 0 skipped). Packets of one stream go
  // through one decoder in order: a packet holding a single column (VLS-128 dual) takes its
  // rotation step from the packet before.
  DecodeError decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                     PacketInfo* info = nullptr);

 private:
  const SensorModel& model_;
  int previous_azimuth_ = -1;
  int previous_step_ = 0;
};

}  // namespace lidaremu::core::velodyne
