// The RoboSense family: RS-Helios and RS-Bpearl, MSOP and DIFOP, rs_driver's angle.csv.
#include "lidaremu/core/family.hpp"

#include "lidaremu/core/robosense.hpp"

namespace lidaremu::core::robosense {
namespace {

class RoboSenseFamily final : public Family {
 public:
  [[nodiscard]] std::string_view name() const override { return "RoboSense"; }
  [[nodiscard]] std::vector<SensorModel> models() const override { return robosense::models(); }
  [[nodiscard]] ScanKind scan_kind() const override { return ScanKind::kRotationRate; }
  // rs_driver's msop_port and difop_port.
  [[nodiscard]] FamilyPorts default_ports() const override { return {6699, 7788, "DIFOP"}; }
  // Drivers ask the unit nothing: its DIFOP tells them.
  [[nodiscard]] int default_api_port() const override { return 0; }
  [[nodiscard]] bool supports(ReturnMode echoes) const override {
    return echoes == ReturnMode::kStrongest || echoes == ReturnMode::kLast ||
           echoes == ReturnMode::kFirst || echoes == ReturnMode::kDual;
  }
  [[nodiscard]] std::vector<ReturnMode> return_modes(const SensorModel& model) const override {
    std::vector<ReturnMode> modes;
    for (const auto& m : model.robosense.return_modes) modes.push_back(m.return_mode);
    return modes;
  }
  [[nodiscard]] std::unique_ptr<Encoder> make_encoder(
      const ScanPattern& pattern, const SensorIdentity& identity, ReturnMode echoes,
      const OusterOutput& /*ouster*/) const override {
    if (!supports(echoes) || pattern.model->robosense.return_mode(echoes) == nullptr) {
      return nullptr;
    }
    return std::make_unique<RoboSenseEncoder>(pattern, identity, echoes);
  }
  [[nodiscard]] std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& facts) const override {
    return robosense::make_packet_decoder(pattern, facts);
  }
  [[nodiscard]] bool writes_calibration_file() const override { return true; }
  [[nodiscard]] std::string calibration_file(const SensorModel& model) const override {
    return angle_csv(model);
  }
};

}  // namespace

const Family& family() {
  static const RoboSenseFamily f;
  return f;
}

}  // namespace lidaremu::core::robosense
