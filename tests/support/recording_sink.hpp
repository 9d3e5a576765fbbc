#pragma once
// Every packet an encoder emits, with its channel and the time it belongs to, in order.
#include <cstdint>
#include <span>
#include <vector>

#include "lidaremu/core/encoder.hpp"

namespace lidaremu::test {

struct TimedPacket {
  core::PacketChannel channel;
  std::vector<std::uint8_t> bytes;
  double time_s;
};

class RecordingSink final : public core::PacketSink {
 public:
  std::vector<TimedPacket> packets;
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double time_s) override {
    packets.push_back({channel, {bytes.begin(), bytes.end()}, time_s});
  }
};

}  // namespace lidaremu::test
