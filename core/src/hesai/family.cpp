// The Hesai family: the Pandar heads, their point and GPS packets, PTC on TCP 9347 and the
// calibration CSV.
#include "lidaremu/core/family.hpp"

#include "lidaremu/core/hesai.hpp"

namespace lidaremu::core::hesai {
namespace {

class HesaiFamily final : public Family {
 public:
  [[nodiscard]] std::string_view name() const override { return "Hesai"; }
  [[nodiscard]] std::vector<SensorModel> models() const override { return hesai::models(); }
  [[nodiscard]] ScanKind scan_kind() const override { return ScanKind::kRotationRate; }
  // nebula's data port and gnss_port.
  [[nodiscard]] FamilyPorts default_ports() const override { return {2368, 10110, "GPS"}; }
  [[nodiscard]] int default_api_port() const override { return 9347; }  // PTC
  [[nodiscard]] bool supports(ReturnMode echoes) const override {
    return return_mode_byte(echoes) != 0;
  }
  [[nodiscard]] std::vector<ReturnMode> return_modes(const SensorModel& model) const override {
    std::vector<ReturnMode> modes;
    for (const auto& m : model.hesai.return_modes) modes.push_back(m.return_mode);
    return modes;
  }
  [[nodiscard]] std::unique_ptr<Encoder> make_encoder(
      const ScanPattern& pattern, const SensorIdentity& identity, ReturnMode echoes,
      const OusterOutput& /*ouster*/) const override {
    if (!supports(echoes) || pattern.model->hesai.return_mode(echoes) == nullptr) return nullptr;
    return std::make_unique<HesaiEncoder>(pattern, identity, echoes);
  }
  [[nodiscard]] std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& facts) const override {
    return hesai::make_packet_decoder(pattern, facts);
  }
  [[nodiscard]] bool writes_calibration_file() const override { return true; }
  [[nodiscard]] bool writes_firetimes_file() const override { return true; }
  [[nodiscard]] std::string firetimes_file(const SensorModel& model) const override {
    return hesai::firetimes_file(model);
  }
  [[nodiscard]] std::string no_firetimes_file(const SensorModel& model) const override {
    return std::string(hesai::firetimes_file_note(model));
  }
  [[nodiscard]] std::string calibration_file(const SensorModel& model) const override {
    return hesai::calibration_file(model);
  }
};

}  // namespace

const Family& family() {
  static const HesaiFamily f;
  return f;
}

}  // namespace lidaremu::core::hesai
