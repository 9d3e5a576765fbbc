// The Ouster family: OS0, OS1 and OS2, their lidar and IMU packets, HTTP API and TCP 7501.
#include "lidaremu/core/family.hpp"

#include "lidaremu/core/ouster.hpp"

namespace lidaremu::core::ouster {
namespace {

class OusterFamily final : public Family {
 public:
  [[nodiscard]] std::string_view name() const override { return "Ouster"; }
  [[nodiscard]] std::vector<SensorModel> models() const override { return ouster::models(); }
  [[nodiscard]] ScanKind scan_kind() const override { return ScanKind::kLidarMode; }
  // The sensor's factory udp_port_lidar and udp_port_imu.
  [[nodiscard]] FamilyPorts default_ports() const override { return {7502, 7503, "IMU"}; }
  [[nodiscard]] int default_api_port() const override { return 80; }
  [[nodiscard]] bool stream_needs_metadata() const override { return true; }
  [[nodiscard]] bool reinitialisation_stops_stream() const override { return true; }
  // The profile decides: one return, or the two strongest (RNG19 dual).
  [[nodiscard]] bool supports(ReturnMode echoes) const override {
    return echoes == ReturnMode::kStrongest || echoes == ReturnMode::kTwoStrongest;
  }
  // The settings' one; the profile decides what is reported (see return_mode_note).
  [[nodiscard]] std::vector<ReturnMode> return_modes(const SensorModel& /*model*/) const override {
    return {ReturnMode::kStrongest};
  }
  [[nodiscard]] std::string_view return_mode_note() const override {
    return "the rng19-dual profile reports the two strongest";
  }
  [[nodiscard]] std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern,
                                                      const SensorIdentity& identity,
                                                      ReturnMode echoes,
                                                      const OusterOutput& ouster) const override {
    if (echoes != ouster_return_mode(ouster.profile)) return nullptr;
    return std::make_unique<OusterEncoder>(pattern, identity, ouster);
  }
  [[nodiscard]] std::unique_ptr<PacketDecoder> make_decoder(
      const ScanPattern& pattern, const StreamFacts& facts) const override {
    return ouster::make_packet_decoder(pattern, facts);
  }
};

}  // namespace

const Family& family() {
  static const OusterFamily f;
  return f;
}

}  // namespace lidaremu::core::ouster
