// What lidaremu-bench reads from the daemon's packets: returns per packet (bench.hpp) and the
// sensor time each packet carries, which names its frame.
#include "bench_packets.hpp"

#include <algorithm>

#include "lidaremu/clients/bench.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/robosense.hpp"

namespace lidaremu::clients {

core::OusterProfile profile_of(const std::string& flag) {
  if (flag == "rng19") return core::OusterProfile::kRng19;
  if (flag == "rng19-dual") return core::OusterProfile::kRng19Dual;
  if (flag == "rng15") return core::OusterProfile::kRng15;
  return core::OusterProfile::kLegacy;
}

// The sensor time of a data packet's first column, as the daemon stamped it: an Ouster column
// header's timestamp (ns), a Velodyne packet's microseconds past the hour. With clock = "sim"
// and the internal-oscillator timestamp mode these are the simulation time the batches carried.
double packet_sensor_time_s(std::span<const std::uint8_t> packet, bool ouster,
                            const std::string& profile) {
  const auto little_endian = [&](std::size_t at, std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v |= std::uint64_t{packet[at + i]} << (8 * i);
    return v;
  };
  if (ouster) {
    const std::size_t at = core::ouster::profile_layout(profile_of(profile)).packet_header;
    return packet.size() < at + 8 ? -1.0 : static_cast<double>(little_endian(at, 8)) * 1e-9;
  }
  constexpr std::size_t kTimestampAt = 1200;
  return packet.size() < kTimestampAt + 4
             ? -1.0
             : static_cast<double>(little_endian(kTimestampAt, 4)) * 1e-6;
}

std::size_t count_returns_velodyne(std::span<const std::uint8_t> packet) {
  constexpr std::size_t kBlocks = 12, kBlockBytes = 100, kPoints = 32;
  if (packet.size() < kBlocks * kBlockBytes) return 0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < kBlocks; ++b) {
    const std::uint8_t* block = packet.data() + b * kBlockBytes;
    if (block[0] != 0xFF) continue;
    for (std::size_t p = 0; p < kPoints; ++p) {
      n += (block[4 + 3 * p] | block[5 + 3 * p]) != 0;
    }
  }
  return n;
}

std::size_t count_returns_ouster(std::span<const std::uint8_t> packet, int channels,
                                 const std::string& profile) {
  const auto which = profile_of(profile);
  const bool legacy = which == core::OusterProfile::kLegacy;
  const bool dual = which == core::OusterProfile::kRng19Dual;
  const bool rng15 = which == core::OusterProfile::kRng15;
  const auto layout = core::ouster::profile_layout(which);
  constexpr int kColumnsPerPacket = 16;
  if (packet.size() < layout.packet_size(channels, kColumnsPerPacket)) return 0;
  const auto word = [&](std::size_t at) {
    return std::uint32_t{packet[at]} | std::uint32_t{packet[at + 1]} << 8 |
           std::uint32_t{packet[at + 2]} << 16 | std::uint32_t{packet[at + 3]} << 24;
  };
  const std::size_t column_bytes =
      layout.column_header + std::size_t(channels) * layout.pixel + layout.column_footer;
  std::size_t n = 0;
  for (int c = 0; c < kColumnsPerPacket; ++c) {
    const std::size_t column = layout.packet_header + std::size_t(c) * column_bytes;
    for (int ch = 0; ch < channels; ++ch) {
      const std::size_t px = column + layout.column_header + std::size_t(ch) * layout.pixel;
      if (rng15) {
        n += ((packet[px] | packet[px + 1] << 8) & 0x7FFF) != 0;
      } else if (legacy) {
        n += (word(px) & 0xFFFFFu) != 0;
      } else {
        n += (word(px) & 0x7FFFFu) != 0;
        if (dual) n += (word(px + 4) & 0x7FFFFu) != 0;
      }
    }
  }
  return n;
}

std::size_t count_returns_hesai(std::span<const std::uint8_t> packet,
                                const core::hesai::ModelFormat& format) {
  if (packet.size() != format.sent_size()) return 0;
  std::size_t n = 0;
  for (int b = 0; b < format.blocks; ++b) {
    for (int ch = 0; ch < format.lasers; ++ch) {
      n += core::load_field(packet, format.record_at(b, ch), format.protocol->distance) != 0;
    }
  }
  return n;
}

double hesai_packet_time_s(std::span<const std::uint8_t> packet,
                           const core::hesai::ModelFormat& format) {
  if (packet.size() != format.sent_size()) return -1.0;
  core::hesai::PacketInfo info;
  return core::hesai::read_tail(packet, format, info) ? info.time_s : -1.0;
}

double robosense_packet_time_s(std::span<const std::uint8_t> packet,
                               const core::robosense::ModelFormat& format) {
  return core::robosense::msop_time_s(packet, format).value_or(-1.0);
}

std::size_t count_returns_livox(std::span<const std::uint8_t> packet) {
  // The receive loop's one thread counts every packet: its scratch is allocated once.
  thread_local std::vector<core::livox::Point> points;
  points.clear();
  if (core::livox::decode_points(packet, points) != core::livox::DecodeError::kNone) return 0;
  return static_cast<std::size_t>(std::count_if(points.begin(), points.end(), [](const auto& p) {
    return p.x != 0 || p.y != 0 || p.z != 0;
  }));
}

double livox_packet_time_s(std::span<const std::uint8_t> packet) {
  core::livox::PacketInfo info;
  if (core::livox::read_header(packet, info) != core::livox::DecodeError::kNone) return -1;
  return static_cast<double>(info.timestamp_ns) * 1e-9;
}

std::size_t count_returns_robosense(std::span<const std::uint8_t> packet) {
  using namespace core::robosense;
  if (packet.size() != kPacketSize) return 0;
  std::size_t n = 0;
  for (int b = 0; b < kBlocks; ++b) {
    for (int ch = 0; ch < kChannels; ++ch) n += core::load_be(packet, record_at(b, ch), 2) != 0;
  }
  return n;
}

}  // namespace lidaremu::clients
