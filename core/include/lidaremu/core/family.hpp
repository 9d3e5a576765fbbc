#pragma once
// A sensor family: what every model of one vendor line shares, behind one interface. Each family
// is a folder (core/src/<family>/) that implements it once (family.cpp) beside its model rows
// (models.cpp), encoder and decoder; families.cpp lists the families. Code that differs by family
// asks family_of(model) instead of testing the family.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/packet_decoder.hpp"
#include "lidaremu/core/return_mode.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {

// Where a family's drivers listen unless told: data packets and the side channel.
struct FamilyPorts {
  std::uint16_t data = 0;
  std::uint16_t telemetry = 0;
  std::string_view telemetry_name;  // what the side channel carries: "position", "DIFOP", ...
  // The unit's own source ports, where its drivers take packets only from those (0: any).
  std::uint16_t data_source = 0;
  std::uint16_t telemetry_source = 0;
};

class Family {
 public:
  virtual ~Family() = default;
  Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  [[nodiscard]] virtual std::string_view name() const = 0;  // "Velodyne"
  // The family's model rows (data: models.cpp), in the order --model lists them.
  [[nodiscard]] virtual std::vector<SensorModel> models() const = 0;
  [[nodiscard]] virtual ScanKind scan_kind() const = 0;
  [[nodiscard]] virtual FamilyPorts default_ports() const = 0;
  // The port of the unit's own API (Ouster and Velodyne HTTP, Hesai PTC, Livox SDK2 commands);
  // 0: its drivers ask the unit nothing (RoboSense: the DIFOP tells them).
  [[nodiscard]] virtual int default_api_port() const = 0;
  // Whether the family's packets can carry `echoes` (a model may offer fewer).
  [[nodiscard]] virtual bool supports(ReturnMode echoes) const = 0;
  // The return modes `model` offers, as settings name them (its row's, in its order).
  [[nodiscard]] virtual std::vector<ReturnMode> return_modes(const SensorModel& model) const = 0;
  // What a user should know when a return mode is refused ("" for nothing).
  [[nodiscard]] virtual std::string_view return_mode_note() const { return {}; }
  // The return mode unless told: the strongest, or the first the model offers without it.
  [[nodiscard]] ReturnMode default_return_mode(const SensorModel& model) const;
  // The encoder of a stream of `pattern`'s model in `echoes`; null when the model cannot send it.
  [[nodiscard]] virtual std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern,
                                                              const SensorIdentity& identity,
                                                              ReturnMode echoes,
                                                              const OusterOutput& ouster) const = 0;
  [[nodiscard]] virtual std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& facts) const = 0;
  // Whether its drivers need the unit's metadata file to decode a stream (Ouster's JSON).
  [[nodiscard]] virtual bool stream_needs_metadata() const { return false; }
  // The angle calibration file its drivers read (Hesai's CSV, RoboSense's angle.csv); empty: the
  // family has none.
  [[nodiscard]] virtual std::string calibration_file(const SensorModel& model) const;
  [[nodiscard]] virtual bool writes_calibration_file() const { return false; }
  // The firing-time file its drivers read (Hesai: the SDK's firetimes_path); empty with the
  // reason in no_firetimes_file when the model has none.
  [[nodiscard]] virtual bool writes_firetimes_file() const { return false; }
  // Whether a reinitialisation stops the unit's stream at the command (an Ouster: nothing of the
  // old configuration follows its answer, INITIALIZING until the new one streams), rather than
  // letting what it measured go out.
  [[nodiscard]] virtual bool reinitialisation_stops_stream() const { return false; }
  [[nodiscard]] virtual std::string firetimes_file(const SensorModel& model) const;
  [[nodiscard]] virtual std::string no_firetimes_file(const SensorModel& model) const;
};

[[nodiscard]] const Family& family_of(SensorFamily family);
[[nodiscard]] inline const Family& family_of(const SensorModel& model) {
  return family_of(model.family);
}
// Every family, in the registry's order.
[[nodiscard]] std::span<const Family* const> all_families();
// A family's folder stamps its rows with the family they were listed under (the registry).
[[nodiscard]] SensorFamily family_id(const Family& family);

// Each family's, in its folder.
namespace velodyne {
const Family& family();
std::vector<SensorModel> models();
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern);
}  // namespace velodyne
namespace ouster {
const Family& family();
std::vector<SensorModel> models();
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts);
}  // namespace ouster
namespace hesai {
const Family& family();
std::vector<SensorModel> models();
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts);
}  // namespace hesai
namespace robosense {
const Family& family();
std::vector<SensorModel> models();
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern,
                                                   const StreamFacts& facts);
}  // namespace robosense
namespace livox {
const Family& family();
std::vector<SensorModel> models();
std::unique_ptr<PacketDecoder> make_packet_decoder(const ScanPattern& pattern);
}  // namespace livox

}  // namespace lidaremu::core
