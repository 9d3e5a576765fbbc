#pragma once
// One interface at the family boundary; inside a family the layout is data of the model.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "lidaremu/core/frame.hpp"
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
  double latitude_deg = 0;    // Velodyne GPRMC
  double longitude_deg = 0;
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  // frame_start_s: sensor-clock time of column 0, seconds (UNIX time or simulation time).
  virtual void encode_frame(const FrameReturns& returns, double frame_start_s,
                            PacketSink& sink) = 0;
  // Completes a packet left part-filled at the end of the input (stop, drain): the rest of its
  // firings carry no returns, as a real sensor sends when nothing is in range.
  virtual void flush(PacketSink& sink) = 0;
  [[nodiscard]] virtual std::size_t data_packet_size() const = 0;
  [[nodiscard]] virtual double data_packet_period_s() const = 0;
};

// The encoder for a model reporting `echoes` (Velodyne: strongest, last or dual; Ouster
// LEGACY: strongest). Nothing for a mode the family cannot carry (settings reject it first).
std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern, const SensorIdentity& identity,
                                      EchoMode echoes = EchoMode::kStrongest);
// Whether a family's packets can carry this echo mode.
bool family_supports(SensorFamily family, EchoMode echoes);

}  // namespace lidaremu::core
