#pragma once
// One interface at the family boundary; inside a family the layout is data of the model.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/motion.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

enum class PacketChannel : std::uint8_t { kData, kTelemetry };

// Receives every packet an encoder completes, with the sensor-clock time it belongs to.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void on_packet(PacketChannel channel, std::span<const std::uint8_t> bytes,
                         double sensor_time_s) = 0;
};

// What the emulated unit says about itself, the same in packets, metadata and telemetry.
struct SensorIdentity {
  std::uint64_t serial_number = 0;
  std::uint32_t init_id = 0;  // 24 bits
  double latitude_deg = 0;    // GPRMC (Velodyne position, Hesai GPS packets)
  double longitude_deg = 0;
  // Where the unit is and sends to, as RoboSense's DIFOP states it: IPv4 addresses in host
  // order and UDP ports; 0 where unknown (the vendor's defaults are stated instead).
  std::uint32_t address = 0;
  std::uint32_t destination = 0;
  std::uint16_t data_port = 0;
  std::uint16_t telemetry_port = 0;
  bool operator==(const SensorIdentity&) const = default;
};

// Ouster output settings (FORMATS.md): the lidar profile, the azimuth window the sensor sends,
// and the clock its timestamps count.
enum class OusterProfile : std::uint8_t { kLegacy, kRng19, kRng19Dual, kRng15 };
enum class OusterTimestampMode : std::uint8_t { kInternalOsc, kPtp };
struct OusterOutput {
  OusterProfile profile = OusterProfile::kLegacy;
  std::uint32_t azimuth_window_start_mdeg = 0;     // [start, end] millidegrees of encoder angle;
  std::uint32_t azimuth_window_end_mdeg = 360000;  // start > end wraps through 0
  OusterTimestampMode timestamp_mode = OusterTimestampMode::kInternalOsc;
  // Sensor-clock time the internal oscillator counts from (the emulated power-on).
  double power_on_time_s = 0;
  bool operator==(const OusterOutput&) const = default;
};

// The echo a dual-return block reports (Velodyne and Hesai XT manuals): the first block of a pair
// (copy 0) the last return, the second (copy 1) the strongest, or the second strongest when the
// strongest is the last; both the same with one return. Echo plane 0 holds the strongest,
// plane 1 the last or the second strongest (by range).
[[nodiscard]] inline std::size_t dual_block_slot(const FrameReturns& returns, std::size_t beam,
                                                 int copy) {
  const std::size_t strongest = returns.slot(beam, 0);
  const std::size_t second = returns.slot(beam, 1);
  const bool second_is_last = returns.range_m[second] > returns.range_m[strongest];
  const bool has_second = returns.range_m[second] > 0;
  if ((copy == 0 && second_is_last) || (copy == 1 && has_second && !second_is_last)) return second;
  return strongest;
}

// The echo each block of a two-block column reports, for the dual modes that name their blocks
// (Hesai): kFirstLast the first, then the last (QT64 0x3B, its real capture); kFirstStrongest the
// first, then the strongest (XT32M2X 0x3C, its real capture); kDual as dual_block_slot. With one
// echo both blocks carry it, as the captures show.
[[nodiscard]] inline std::size_t paired_block_slot(const FrameReturns& returns, std::size_t beam,
                                                   int copy, ReturnMode echoes) {
  const std::size_t primary = returns.slot(beam, 0);
  const std::size_t second = returns.slot(beam, 1);
  const bool has_second = returns.range_m[second] > 0;
  switch (echoes) {
    case ReturnMode::kFirstLast:  // plane 0 the first, plane 1 the last
      return copy == 1 && has_second ? second : primary;
    case ReturnMode::kFirstStrongest:  // plane 0 the strongest, plane 1 the first
      return copy == 0 && has_second ? second : primary;
    default:
      return dual_block_slot(returns, beam, copy);
  }
}

class Encoder {
 public:
  virtual ~Encoder() = default;
  // frame_start_s: sensor-clock time of column 0, seconds (UNIX time or simulation time).
  void encode_frame(const FrameReturns& returns, double frame_start_s, PacketSink& sink) {
    encode_columns(returns, frame_start_s, returns.shape.columns, sink);
  }
  // A frame encoded as its columns become final: continues from the column the last call of
  // this frame stopped at up to `end` (exclusive), sending every packet whose columns are all
  // in; end == returns.shape.columns ends the frame. The same bytes as encode_frame, whatever
  // the steps.
  virtual void encode_columns(const FrameReturns& returns, double frame_start_s, std::uint32_t end,
                              PacketSink& sink) = 0;
  // Completes a packet left part-filled at the end of the input (stop, drain): the rest of its
  // firings carry no returns, as a real sensor sends when nothing is in range.
  virtual void flush(PacketSink& sink) = 0;
  // What the unit's IMU reads from now on (Ouster IMU packets); others ignore it.
  virtual void set_motion(const ImuReading& /*reading*/) {}
  [[nodiscard]] virtual std::size_t data_packet_size() const = 0;
  [[nodiscard]] virtual double data_packet_period_s() const = 0;
  // The room the encoder holds besides its settings (the memory estimate counts it).
  [[nodiscard]] virtual std::size_t working_bytes() const { return 0; }
};

// Spinning heads (Velodyne, Hesai, RoboSense): columns go one after another into packets, which
// may span the end of a frame; what a packet holds is the family's append_column. A family that
// can also write a whole packet on its own (write_packet) has the packets that start where the
// last one ended and whose columns are all in written kPacketsAtOnce at a time on TBB's workers
// and the calling thread, then sent in order (send_packet): the same bytes, in the same order,
// as one column at a time (issue 32: a sensor's encoding was one thread's, its serial part).
class ColumnEncoder : public Encoder {
 public:
  static constexpr std::size_t kPacketsAtOnce = 32;

  void encode_columns(const FrameReturns& returns, double frame_start_s, std::uint32_t end,
                      PacketSink& sink) final;
  void flush(PacketSink& sink) final;
  [[nodiscard]] std::size_t working_bytes() const override { return staged_.capacity(); }

 protected:
  explicit ColumnEncoder(double column_period_s) : column_period_s_(column_period_s) {}
  // returns == nullptr: a firing with no returns.
  virtual void append_column(const FrameReturns* returns, std::uint32_t column, double time_s,
                             PacketSink& sink) = 0;
  // Whether a packet is part-filled (flush completes it).
  [[nodiscard]] virtual bool packet_open() const = 0;

  // Whole packets: the columns a packet holds when write_packet can write it; 0 where the family
  // appends one column at a time only.
  [[nodiscard]] virtual std::uint32_t columns_per_whole_packet() const { return 0; }
  // How many of the columns [first, end) whole packets may take, in order: all of them, but where
  // a mirror scan's dark columns (which send nothing) begin.
  [[nodiscard]] virtual std::uint32_t firing_run(std::uint32_t first, std::uint32_t end) const {
    return end - first;
  }
  // Any thread, many at once: every byte of the packet of the frame's columns [first, first +
  // columns_per_whole_packet()), the `ordinal`-th whole packet after the last one sent (0: the
  // next), as append_column would have left it complete.
  virtual void write_packet(std::span<std::uint8_t> /*packet*/, const FrameReturns& /*returns*/,
                            std::uint32_t /*first*/, double /*frame_start_s*/,
                            std::uint32_t /*ordinal*/) const {}
  // Calling thread, in order: a packet write_packet wrote leaves, as append_column sends a
  // complete one (and what goes with it: position, GPS, DIFOP packets).
  virtual void send_packet(std::span<const std::uint8_t> /*packet*/, std::uint32_t /*first*/,
                           double /*frame_start_s*/, PacketSink& /*sink*/) {}
  // A family that writes whole packets reserves their room (in its constructor: the hot path
  // does not allocate).
  void reserve_whole_packets(std::size_t packet_size) {
    staged_.resize(kPacketsAtOnce * packet_size);
  }
  // The time append_column is given for a frame's column (whole packets use the same).
  [[nodiscard]] double column_time_s(double frame_start_s, std::uint32_t column) const {
    return frame_start_s + column * column_period_s_;
  }

 private:
  // Writes and sends up to kPacketsAtOnce whole packets from frame_column_, all before `end`;
  // false when fewer than two are in (one column at a time then).
  bool encode_whole_packets(const FrameReturns& returns, double frame_start_s, std::uint32_t end,
                            PacketSink& sink);

  double column_period_s_;
  std::uint32_t frame_column_ = 0;  // the next column of the frame being encoded
  std::uint32_t next_column_ = 0;   // flush: where the part-filled packet's firings go on
  double next_time_s_ = 0;
  std::vector<std::uint8_t> staged_;  // kPacketsAtOnce whole packets' room (reserve_whole_packets)
};

// The encoder for a model reporting `echoes` (Velodyne: strongest, last or dual; Ouster:
// strongest, or the two strongest in the dual profile). Nothing for a mode the output cannot
// carry (settings reject it first).
std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                      ReturnMode echoes = ReturnMode::kStrongest,
                                      const OusterOutput& ouster = {});
// Whether a family's packets can carry this echo mode (Ouster: in some profile).
bool family_supports(SensorFamily family, ReturnMode echoes);
// The echo mode an Ouster profile carries.
ReturnMode ouster_return_mode(OusterProfile profile);

}  // namespace lidaremu::core
