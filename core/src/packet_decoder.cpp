// A stream's decoder, chosen by its family.
#include "lidaremu/core/packet_decoder.hpp"

#include <cmath>

#include "lidaremu/core/family.hpp"

namespace lidaremu::core {

bool PacketDecoder::feed_side_channel(std::span<const std::uint8_t> /*packet*/) { return false; }

void PacketDecoder::place_frame(std::span<DecodedReturn> /*returns*/,
                                std::uint32_t /*frame_number*/) const {}

std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts) {
  return family_of(*pattern.model).make_decoder(pattern, facts);
}

std::uint32_t column_of_azimuth(std::uint16_t centidegrees, std::uint32_t columns) {
  return static_cast<std::uint32_t>(std::lround(centidegrees * double(columns) / 36000.0)) %
         columns;
}

}  // namespace lidaremu::core
