// A RoboSense data stream as rs_driver decodes it (robosense::SpecDecoder): no point before the
// first DIFOP, which names the angles and the return mode.
#include "lidaremu/core/packet_decoder.hpp"

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/robosense.hpp"

namespace lidaremu::core::robosense {
namespace {

class RoboSenseDecoder final : public PacketDecoder {
 public:
  RoboSenseDecoder(const ScanPattern& pattern, const StreamFacts& facts)
      : format_(*pattern.model->robosense.format),
        decoder_(*pattern.model),
        columns_(static_cast<std::uint32_t>(pattern.columns_per_frame)) {
    if (facts.side_channel_known) {
      // The DIFOP the emulated unit sends: its return mode and the row's angles.
      const auto* mode = pattern.model->robosense.return_mode(facts.return_mode);
      decoder_.on_difop(difop_packet(*pattern.model, difop_rpm(pattern),
                                     mode != nullptr ? mode->difop_code : 0, 0, {}));
    }
  }

  [[nodiscard]] FrameCut frame_cut() const override { return FrameCut::kColumnWrap; }

  [[nodiscard]] bool needs_side_channel() const override { return true; }

  bool feed_side_channel(std::span<const std::uint8_t> packet) override {
    return decoder_.on_difop(packet) == DifopError::kNone;
  }

  DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) override {
    points_.clear();
    out.returns.clear();
    PacketInfo info;
    const auto error = decoder_.decode(packet, points_, &info);
    if (error == DecodeError::kNoDifop) return DecodeVerdict::kAwaitingSideChannel;
    if (error != DecodeError::kNone) return DecodeVerdict::kMalformed;
    out.time_s = info.time_s;
    // A block's azimuth names its first column; a second firing in it (RS-LiDAR-16) the next.
    for (const auto& p : points_) {
      out.returns.push_back({p.x, p.y, p.z, p.distance_m, p.intensity, p.channel,
                             (column_of_azimuth(p.block_azimuth, columns_) + p.firing) % columns_,
                             p.echo});
    }
    return DecodeVerdict::kDecoded;
  }

  [[nodiscard]] std::size_t count_returns(std::span<const std::uint8_t> packet) const override {
    if (packet.size() != kPacketSize) return 0;
    std::size_t n = 0;
    for (int b = 0; b < kBlocks; ++b) {
      for (int ch = 0; ch < kChannels; ++ch) n += load_be(packet, record_at(b, ch), 2) != 0;
    }
    return n;
  }

  // The MSOP header's time: the start of the packet's first block.
  [[nodiscard]] double first_column_time_s(std::span<const std::uint8_t> packet) const override {
    return msop_time_s(packet, format_).value_or(-1.0);
  }

 private:
  const ModelFormat& format_;
  SpecDecoder decoder_;
  std::uint32_t columns_;
  std::vector<Point> points_;
};

}  // namespace

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts) {
  return std::make_unique<RoboSenseDecoder>(pattern, facts);
}

}  // namespace lidaremu::core::robosense
