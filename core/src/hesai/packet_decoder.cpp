// A Hesai data stream as nebula and the Hesai SDK decode it (hesai::SpecDecoder, with the
// calibration the unit serves on PTC 0x05).
#include "lidaremu/core/packet_decoder.hpp"

#include <algorithm>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/hesai.hpp"

namespace lidaremu::core::hesai {
namespace {

class HesaiDecoder final : public PacketDecoder {
 public:
  HesaiDecoder(const ScanPattern& pattern, const StreamFacts& facts)
      : format_(*pattern.model->hesai.format),
        decoder_(format_, calibration_of(*pattern.model)),
        traits_(pattern.model->hesai),
        columns_(static_cast<std::uint32_t>(pattern.columns_per_frame)),
        column_period_s_(pattern.column_period_s),
        columns_per_packet_(format_.blocks / (reports_two_echoes(facts.return_mode) ? 2 : 1)) {}

  [[nodiscard]] FrameCut frame_cut() const override { return FrameCut::kColumnWrap; }

  DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) override {
    points_.clear();
    out.returns.clear();
    PacketInfo info;
    if (decoder_.decode(packet, points_, &info) != DecodeError::kNone) {
      return DecodeVerdict::kMalformed;
    }
    out.time_s = info.time_s;
    // Dual modes send each column's blocks in pairs: the block's place in its pair is the echo.
    const int returns = std::max(1, info.return_num);
    for (const auto& p : points_) {
      out.returns.push_back({p.x, p.y, p.z, p.distance_m, p.reflectivity, p.channel,
                             column_of_azimuth(p.block_azimuth, columns_),
                             static_cast<std::uint8_t>(p.block % returns)});
    }
    return DecodeVerdict::kDecoded;
  }

  [[nodiscard]] std::size_t count_returns(std::span<const std::uint8_t> packet) const override {
    if (packet.size() != format_.sent_size()) return 0;
    std::size_t n = 0;
    for (int b = 0; b < format_.blocks; ++b) {
      for (int ch = 0; ch < format_.lasers; ++ch) {
        n += load_field(packet, format_.record_at(b, ch), format_.protocol->distance) != 0;
      }
    }
    return n;
  }

  // The tail's time, taken back to the packet's first column as the model's row says the two
  // relate (the start of its last column, or of its first; plus an offset).
  [[nodiscard]] double first_column_time_s(std::span<const std::uint8_t> packet) const override {
    if (packet.size() != format_.sent_size()) return -1.0;
    PacketInfo info;
    if (!read_tail(packet, format_, info)) return -1.0;
    const int before = traits_.stamp_from_first_column ? 0 : columns_per_packet_ - 1;
    return info.time_s - traits_.stamp_after_block_us * 1e-6 - before * column_period_s_;
  }

 private:
  const ModelFormat& format_;
  SpecDecoder decoder_;
  const HesaiTraits& traits_;
  std::uint32_t columns_;
  double column_period_s_;
  int columns_per_packet_;
  std::vector<Point> points_;
};

}  // namespace

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts) {
  return std::make_unique<HesaiDecoder>(pattern, facts);
}

}  // namespace lidaremu::core::hesai
