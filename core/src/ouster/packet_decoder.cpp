// An Ouster lidar stream as the Ouster SDK decodes it (ouster::SpecDecoder, with the metadata the
// unit serves).
#include "lidaremu/core/packet_decoder.hpp"

#include "lidaremu/core/family.hpp"

namespace lidaremu::core::ouster {
namespace {

Metadata metadata_of(const ScanPattern& pattern, const StreamFacts& facts) {
  if (facts.ouster_metadata) return *facts.ouster_metadata;
  return parse_metadata(metadata_json(pattern, {}, {.output = {.profile = facts.profile}}));
}

class OusterDecoder final : public PacketDecoder {
 public:
  OusterDecoder(const ScanPattern& pattern, const StreamFacts& facts)
      : decoder_(metadata_of(pattern, facts)),
        profile_(facts.profile),
        layout_(profile_layout(facts.profile)),
        channels_(pattern.model->channels),
        columns_per_packet_(pattern.model->ouster.columns_per_packet) {}

  [[nodiscard]] FrameCut frame_cut() const override { return FrameCut::kFrameCount; }
  // A frame is W / 16 whole packets.
  [[nodiscard]] bool frames_carry_previous_tail() const override { return false; }

  DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) override {
    columns_.clear();
    out.returns.clear();
    if (decoder_.decode(packet, columns_) != DecodeError::kNone || columns_.empty()) {
      return DecodeVerdict::kMalformed;
    }
    out.time_s = static_cast<double>(columns_.front().timestamp_ns) * 1e-9;
    out.frame_count = columns_.front().frame_id;
    for (const auto& column : columns_) {
      for (int row = 0; row < static_cast<int>(column.pixels.size()); ++row) {
        const auto& px = column.pixels[static_cast<std::size_t>(row)];
        const auto add = [&](std::uint32_t range_mm, std::uint16_t reflectivity,
                             std::uint8_t echo) {
          if (range_mm == 0) return;
          const auto xyz = decoder_.to_xyz(column, row, range_mm);
          out.returns.push_back({static_cast<float>(xyz[0]), static_cast<float>(xyz[1]),
                                 static_cast<float>(xyz[2]), static_cast<float>(range_mm) * 0.001f,
                                 reflectivity, static_cast<std::uint16_t>(row),
                                 column.measurement_id, echo});
        };
        add(px.range_mm, px.reflectivity, 0);
        add(px.range2_mm, px.reflectivity2, 1);
      }
    }
    return DecodeVerdict::kDecoded;
  }

  [[nodiscard]] std::size_t count_returns(std::span<const std::uint8_t> packet) const override {
    if (packet.size() < layout_.packet_size(channels_, columns_per_packet_)) return 0;
    const auto word = [&](std::size_t at) {
      return std::uint32_t{packet[at]} | std::uint32_t{packet[at + 1]} << 8 |
             std::uint32_t{packet[at + 2]} << 16 | std::uint32_t{packet[at + 3]} << 24;
    };
    const std::size_t column_bytes =
        layout_.column_header + std::size_t(channels_) * layout_.pixel + layout_.column_footer;
    std::size_t n = 0;
    for (int c = 0; c < columns_per_packet_; ++c) {
      const std::size_t column = layout_.packet_header + std::size_t(c) * column_bytes;
      for (int ch = 0; ch < channels_; ++ch) {
        const std::size_t px = column + layout_.column_header + std::size_t(ch) * layout_.pixel;
        switch (profile_) {
          case OusterProfile::kRng15:
            n += ((packet[px] | packet[px + 1] << 8) & 0x7FFF) != 0;
            break;
          case OusterProfile::kLegacy:
            n += (word(px) & 0xFFFFFu) != 0;
            break;
          case OusterProfile::kRng19:
            n += (word(px) & 0x7FFFFu) != 0;
            break;
          case OusterProfile::kRng19Dual:
            n += (word(px) & 0x7FFFFu) != 0;
            n += (word(px + 4) & 0x7FFFFu) != 0;
            break;
        }
      }
    }
    return n;
  }

  // The first column header's timestamp (nanoseconds).
  [[nodiscard]] double first_column_time_s(std::span<const std::uint8_t> packet) const override {
    const std::size_t at = layout_.packet_header;
    if (packet.size() < at + 8) return -1.0;
    std::uint64_t ns = 0;
    for (std::size_t i = 0; i < 8; ++i) ns |= std::uint64_t{packet[at + i]} << (8 * i);
    return static_cast<double>(ns) * 1e-9;
  }

 private:
  SpecDecoder decoder_;
  OusterProfile profile_;
  ProfileLayout layout_;
  int channels_;
  int columns_per_packet_;
  std::vector<Column> columns_;
};

}  // namespace

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts) {
  return std::make_unique<OusterDecoder>(pattern, facts);
}

}  // namespace lidaremu::core::ouster
