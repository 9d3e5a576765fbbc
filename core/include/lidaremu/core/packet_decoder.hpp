#pragma once
// One data stream's packets decoded as its drivers decode them, whatever the family: a decoder is
// chosen once per stream (make_packet_decoder) and used by the live view and exports
// (CloudDecoder), lidaremu-inspect (clients::PacketInspector) and lidaremu-bench. Each family's
// implementation, in its folder, wraps that family's spec decoder (written from the public format
// and tested on real captures).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/return_mode.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

// How a stream's frames are told apart.
enum class FrameCut : std::uint8_t {
  kColumnWrap,  // spinning heads: the stream does not break, a frame ends where columns wrap to 0
  kFrameCount,  // each packet names its frame (Ouster frame_id, Livox frame_cnt)
};

struct DecodedReturn {
  float x = 0, y = 0, z = 0;  // metres, the sensor frame its driver reports in
  float range_m = 0;          // 0: a beam without a return, kept where its place counts (Livox)
  std::uint16_t reflectivity = 0;
  std::uint16_t channel = 0;  // laser id, Ouster row, Hesai / RoboSense channel from 0
  // The column of the frame's scan grid. Livox: the firing within its packet, until place_frame
  // makes it the frame's (negative: the previous frame's).
  std::int64_t column = 0;
  std::uint8_t echo = 0;  // 0 first reported return, 1 second
};

struct DecodedPacket {
  double time_s = 0;  // the sensor time the packet carries (its header's; Hesai: its tail's)
  std::uint32_t frame_count = 0;  // FrameCut::kFrameCount streams: the frame the packet names
  std::vector<DecodedReturn> returns;
};

enum class DecodeVerdict : std::uint8_t {
  kDecoded,
  kMalformed,            // not a packet of this stream (size, flags, CRC, ...): counted, skipped
  kAwaitingSideChannel,  // RoboSense before its first DIFOP: drivers decode no point yet
};

// What a decoder needs besides the scan.
struct StreamFacts {
  ReturnMode return_mode = ReturnMode::kStrongest;  // the return mode configured
  OusterProfile profile = OusterProfile::kLegacy;   // Ouster
  // Ouster: the metadata the unit serves (none: made from the scan and profile, as it serves it).
  std::optional<ouster::Metadata> ouster_metadata{};
  // RoboSense: begin as if the unit's DIFOP had arrived (the live view, which sees only data).
  bool side_channel_known = false;
};

class PacketDecoder {
 public:
  virtual ~PacketDecoder() = default;
  PacketDecoder() = default;
  PacketDecoder(const PacketDecoder&) = delete;
  PacketDecoder& operator=(const PacketDecoder&) = delete;

  [[nodiscard]] virtual FrameCut frame_cut() const = 0;
  // Whether a frame's first packet may hold the previous frame's last columns (every stream
  // whose frames are not whole packets: spinning heads, Livox).
  [[nodiscard]] virtual bool frames_carry_previous_tail() const { return true; }
  // Decodes one data packet of the stream, in stream order, into `out` (its returns replaced).
  virtual DecodeVerdict decode(std::span<const std::uint8_t> packet, DecodedPacket& out) = 0;
  // A side-channel packet drivers need before any point (RoboSense DIFOP); false when it is not
  // one this decoder takes.
  virtual bool feed_side_channel(std::span<const std::uint8_t> packet);
  // Whether no point decodes before such a packet, as with its drivers (RoboSense).
  [[nodiscard]] virtual bool needs_side_channel() const { return false; }
  // The returns a data packet holds, counted without placing them (the bench's per-packet path:
  // no allocation); 0 for a packet of another kind.
  [[nodiscard]] virtual std::size_t count_returns(std::span<const std::uint8_t> packet) const = 0;
  // The sensor time of the packet's first column as the unit stamped it (seconds; negative when
  // the packet cannot hold it): without a full decode.
  [[nodiscard]] virtual double first_column_time_s(std::span<const std::uint8_t> packet) const = 0;
  // The period the stamped time wraps at (Velodyne: microseconds past the hour, 3600 s); 0: never.
  [[nodiscard]] virtual double time_wrap_s() const { return 0; }
  // A frame's returns in stream order: their columns made the frame's. Only Livox has work here
  // (its frame starts with the previous frame's last firings, found by where they point).
  virtual void place_frame(std::span<DecodedReturn> returns, std::uint32_t frame_number) const;
};

// The decoder of a stream of `pattern.model`'s family (family.hpp).
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts);

// Column azimuths are 360 degrees * c / W: the column a block azimuth in hundredths of a degree
// stands for (Velodyne, Hesai, RoboSense).
[[nodiscard]] std::uint32_t column_of_azimuth(std::uint16_t centidegrees, std::uint32_t columns);

}  // namespace lidaremu::core
