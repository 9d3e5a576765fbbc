// A Velodyne data stream as velodyne_pointcloud decodes it (velodyne::SpecDecoder).
#include "lidaremu/core/packet_decoder.hpp"

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::core::velodyne {
namespace {

class VelodyneDecoder final : public PacketDecoder {
 public:
  explicit VelodyneDecoder(const ScanPattern& pattern)
      : decoder_(*pattern.model), columns_(static_cast<std::uint32_t>(pattern.columns_per_frame)) {}

  [[nodiscard]] FrameCut frame_cut() const override { return FrameCut::kColumnWrap; }

  DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) override {
    points_.clear();
    out.returns.clear();
    PacketInfo info;
    if (decoder_.decode(packet, points_, &info) != DecodeError::kNone) {
      return DecodeVerdict::kMalformed;
    }
    out.time_s = info.timestamp_us * 1e-6;
    for (const auto& p : points_) {
      // A block holds one column, or two firing sequences of consecutive columns (VLP-16).
      const std::uint32_t column =
          (column_of_azimuth(p.block_azimuth, columns_) + p.sequence) % columns_;
      out.returns.push_back({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.laser, column,
                             static_cast<std::uint8_t>(p.return_kind == 2 ? 1 : 0)});
    }
    return DecodeVerdict::kDecoded;
  }

  [[nodiscard]] std::size_t count_returns(std::span<const std::uint8_t> packet) const override {
    constexpr std::size_t kBlocks = 12, kBlockBytes = 100, kPoints = 32;
    if (packet.size() < kBlocks * kBlockBytes) return 0;
    std::size_t n = 0;
    for (std::size_t b = 0; b < kBlocks; ++b) {
      const std::uint8_t* block = packet.data() + b * kBlockBytes;
      if (block[0] != 0xFF) continue;
      for (std::size_t p = 0; p < kPoints; ++p) n += (block[4 + 3 * p] | block[5 + 3 * p]) != 0;
    }
    return n;
  }

  // The packet's timestamp (bytes 1200-1203): microseconds past the hour.
  [[nodiscard]] double first_column_time_s(std::span<const std::uint8_t> packet) const override {
    constexpr std::size_t kTimestampAt = 1200;
    if (packet.size() < kTimestampAt + 4) return -1.0;
    std::uint32_t us = 0;
    for (std::size_t i = 0; i < 4; ++i) us |= std::uint32_t{packet[kTimestampAt + i]} << (8 * i);
    return us * 1e-6;
  }
  [[nodiscard]] double time_wrap_s() const override { return 3600.0; }

 private:
  SpecDecoder decoder_;
  std::uint32_t columns_;
  std::vector<Point> points_;
};

}  // namespace

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern) {
  return std::make_unique<VelodyneDecoder>(pattern);
}

}  // namespace lidaremu::core::velodyne
