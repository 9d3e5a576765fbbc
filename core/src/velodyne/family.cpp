// The Velodyne family: VLP-16 to VLS-128, their data and position packets and /cgi/ web API.
#include "lidaremu/core/family.hpp"

#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::core::velodyne {
namespace {

class VelodyneFamily final : public Family {
 public:
  [[nodiscard]] std::string_view name() const override { return "Velodyne"; }
  [[nodiscard]] std::vector<SensorModel> models() const override { return velodyne::models(); }
  [[nodiscard]] ScanKind scan_kind() const override { return ScanKind::kRotationRate; }
  // velodyne_driver's defaults: data on 2368, position packets on 8308.
  // A unit sends from its own data and position ports to the same ports of the host.
  [[nodiscard]] FamilyPorts default_ports() const override {
    return {.data = 2368,
            .telemetry = 8308,
            .telemetry_name = "position",
            .data_source = 2368,
            .telemetry_source = 8308};
  }
  [[nodiscard]] int default_api_port() const override { return 80; }
  // Return-mode byte 0x37, 0x38, 0x39.
  [[nodiscard]] bool supports(ReturnMode echoes) const override {
    return echoes == ReturnMode::kStrongest || echoes == ReturnMode::kLast ||
           echoes == ReturnMode::kDual;
  }
  [[nodiscard]] std::vector<ReturnMode> return_modes(const SensorModel& model) const override {
    if (!model.velodyne.dual_return) return {ReturnMode::kStrongest, ReturnMode::kLast};
    return {ReturnMode::kStrongest, ReturnMode::kLast, ReturnMode::kDual};
  }
  [[nodiscard]] std::unique_ptr<Encoder> make_encoder(
      const ScanPattern& pattern, const SensorIdentity& identity, ReturnMode echoes,
      const OusterOutput& /*ouster*/) const override {
    if (!supports(echoes)) return nullptr;
    if (echoes == ReturnMode::kDual && !pattern.model->velodyne.dual_return) return nullptr;
    return std::make_unique<VelodyneEncoder>(pattern, identity, echoes);
  }
  [[nodiscard]] std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& /*facts*/) const override {
    return velodyne::make_packet_decoder(pattern);
  }
};

}  // namespace

const Family& family() {
  static const VelodyneFamily f;
  return f;
}

}  // namespace lidaremu::core::velodyne
