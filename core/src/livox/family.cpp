// The Livox family: the Mid-360's point and IMU packets from the unit's own ports, SDK2
// discovery and commands.
#include "lidaremu/core/family.hpp"

#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/livox/format.hpp"

namespace lidaremu::core::livox {
namespace {

class LivoxFamily final : public Family {
 public:
  [[nodiscard]] std::string_view name() const override { return "Livox"; }
  [[nodiscard]] std::vector<SensorModel> models() const override { return livox::models(); }
  [[nodiscard]] ScanKind scan_kind() const override { return ScanKind::kScanTable; }
  // The host's point and IMU ports of SDK2's configuration (MID360_config.json); SDK2 takes
  // points only from the unit's point port, IMU packets only from its IMU port.
  [[nodiscard]] FamilyPorts default_ports() const override {
    return {.data = kPointPorts.host,
            .telemetry = kImuPorts.host,
            .telemetry_name = "IMU",
            .data_source = kPointPorts.lidar,
            .telemetry_source = kImuPorts.lidar};
  }
  [[nodiscard]] int default_api_port() const override { return kCommandPorts.lidar; }
  // The Mid-360's datasheet: first return.
  [[nodiscard]] bool supports(ReturnMode echoes) const override {
    return echoes == ReturnMode::kFirst;
  }
  [[nodiscard]] std::vector<ReturnMode> return_modes(const SensorModel& /*model*/) const override {
    return {ReturnMode::kFirst};
  }
  [[nodiscard]] std::string_view return_mode_note() const override {
    return "the datasheet's points are first returns";
  }
  [[nodiscard]] std::unique_ptr<Encoder> make_encoder(
      const ScanPattern& pattern, const SensorIdentity& /*identity*/, ReturnMode echoes,
      const OusterOutput& /*ouster*/) const override {
    if (!supports(echoes) || pattern.table == nullptr) return nullptr;
    return std::make_unique<LivoxEncoder>(pattern);
  }
  [[nodiscard]] std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& /*facts*/) const override {
    return livox::make_packet_decoder(pattern);
  }
};

}  // namespace

const Family& family() {
  static const LivoxFamily f;
  return f;
}

}  // namespace lidaremu::core::livox
