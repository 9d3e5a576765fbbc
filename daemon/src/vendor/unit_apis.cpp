// Each family's unit API (unit_api.hpp), and the table that says which family serves which.
#include <boost/asio/ip/address_v4.hpp>
#include <memory>
#include <nlohmann/json.hpp>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/livox/format.hpp"
#include "lidaremu/daemon/net/json_reply.hpp"
#include "lidaremu/daemon/vendor/hesai/ptc_server.hpp"
#include "lidaremu/daemon/vendor/ouster/ouster_api.hpp"
#include "lidaremu/daemon/vendor/unit_api.hpp"
#include "lidaremu/daemon/vendor/velodyne/velodyne_api.hpp"

namespace lidaremu::daemon {
namespace {

// The API's own handler, behind the browser guard for requests that change the unit.
template <typename Api>
HttpServer::Handler guarded(std::shared_ptr<Api> api, BrowserPolicy browsers) {
  return [api = std::move(api), browsers = std::move(browsers)](const HttpRequest& r) {
    if (Api::changes_state(r)) {
      if (auto why = refuse_cross_site(r, browsers)) {
        return json_error(403, *why);
      }
    }
    return api->handle(r);
  };
}

// Ouster: the HTTP API on the API port and the TCP 7501 text protocol (the SDK and ouster-ros
// configure a sensor with both).
class OusterUnitApi final : public UnitApi {
 public:
  static constexpr std::uint16_t kTextPort = 7501;
  explicit OusterUnitApi(const UnitApiContext& c)
      : api_(std::make_shared<OusterApi>(c.settings, c.apply, c.initializing)),
        http_(c.io, c.settings.sensor_ip, static_cast<std::uint16_t>(c.settings.api_port),
              guarded(api_, c.browsers)),
        text_(c.io, c.settings.sensor_ip, kTextPort,
              line_framing(ServerLimits{}.max_line_bytes,
                           [api = api_](const std::string& line, const std::string& remote) {
                             return api->handle_line(line, remote);
                           })),
        ip_(c.settings.sensor_ip) {}
  [[nodiscard]] std::string note() const override {
    return ", API http://" + ip_ + ":" + std::to_string(http_.port()) + " and tcp " +
           std::to_string(kTextPort);
  }
  [[nodiscard]] std::vector<ApiPortCounts> port_counts() const override {
    return {{"tcp7501", text_.counts()}};
  }

 private:
  // Shared with the servers' sessions, which may outlive the unit (a reload).
  std::shared_ptr<OusterApi> api_;
  HttpServer http_;
  RequestServer text_;
  std::string ip_;
};

// Velodyne: the /cgi/ web interface.
class VelodyneUnitApi final : public UnitApi {
 public:
  explicit VelodyneUnitApi(const UnitApiContext& c)
      : api_(std::make_shared<VelodyneApi>(c.settings, c.apply)),
        http_(c.io, c.settings.sensor_ip, static_cast<std::uint16_t>(c.settings.api_port),
              guarded(api_, c.browsers)),
        ip_(c.settings.sensor_ip) {}
  [[nodiscard]] std::string note() const override {
    return ", API http://" + ip_ + ":" + std::to_string(http_.port());
  }

 private:
  std::shared_ptr<VelodyneApi> api_;
  HttpServer http_;
  std::string ip_;
};

// Hesai: PTC on TCP. PTC is not HTTP: no browser can send its binary frames, so no browser guard.
class HesaiUnitApi final : public UnitApi {
 public:
  explicit HesaiUnitApi(const UnitApiContext& c)
      : api_(std::make_shared<HesaiApi>(c.settings, c.apply)),
        ptc_(c.io, c.settings.sensor_ip, static_cast<std::uint16_t>(c.settings.api_port),
             ptc_framing([api = api_](std::uint8_t command, std::span<const std::uint8_t> payload,
                                      const std::string& remote) {
               return api->handle(command, payload, remote);
             })),
        ip_(c.settings.sensor_ip) {}
  [[nodiscard]] std::string note() const override {
    return ", PTC tcp " + ip_ + ":" + std::to_string(ptc_.port());
  }
  [[nodiscard]] std::vector<ApiPortCounts> port_counts() const override {
    return {{"ptc", ptc_.counts()}};
  }

 private:
  std::shared_ptr<HesaiApi> api_;
  RequestServer ptc_;
  std::string ip_;
};

// Livox: SDK2's discovery port and the unit's command port, over UDP. The point and IMU host
// ends a host sets (0x0100, as SDK2 does at connection from its config's host_net_info) move
// the running streams there, from the unit ports it names.
class LivoxUnitApi final : public UnitApi {
 public:
  explicit LivoxUnitApi(const UnitApiContext& c)
      : active_(std::make_shared<SensorSettings>(c.settings)),
        sdk_(c.io, c.settings.sensor_ip, core::livox::kDiscoveryPort,
             static_cast<std::uint16_t>(c.settings.api_port),
             std::to_string(c.settings.identity.serial_number),
             ends(c.settings.out, c.settings.data_source_port),
             ends(c.settings.telemetry, c.settings.telemetry_source_port),
             [active = active_, apply = c.apply](const core::livox::WorkModeChange& change,
                                                 const std::string& requester) {
               SensorSettings next = *active;
               if (change.points) {
                 next.out = endpoint(*change.points);
                 next.data_source_port = change.points->lidar_port;
               }
               if (change.imu) {
                 next.telemetry = endpoint(*change.imu);
                 next.telemetry_source_port = change.imu->lidar_port;
               }
               if (next.out == active->out && next.telemetry == active->telemetry &&
                   next.data_source_port == active->data_source_port &&
                   next.telemetry_source_port == active->telemetry_source_port) {
                 return true;  // as it is (SDK2 sets them at every connection)
               }
               if (!apply(next, requester).ok()) return false;
               *active = next;
               return true;
             }),
        ip_(c.settings.sensor_ip) {}
  [[nodiscard]] std::string note() const override {
    return ", Livox SDK2 discovery udp " + std::to_string(sdk_.discovery_port()) +
           ", commands udp " + ip_ + ":" + std::to_string(sdk_.command_port());
  }
  [[nodiscard]] std::optional<LivoxSdkCounts> livox_sdk_counts() const override {
    return sdk_.counts();
  }

 private:
  static core::livox::HostPorts ends(const Endpoint& to, std::uint16_t from_port) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address_v4(to.host, ec);
    return {ec ? 0 : address.to_uint(), to.port, from_port};
  }
  static Endpoint endpoint(const core::livox::HostPorts& h) {
    return {boost::asio::ip::address_v4(h.host_address).to_string(), h.host_port};
  }
  std::shared_ptr<SensorSettings> active_;  // what the unit runs with: shared with the handler
  LivoxSdkServer sdk_;
  std::string ip_;
};

template <typename Api>
std::unique_ptr<UnitApi> make(const UnitApiContext& c) {
  return std::make_unique<Api>(c);
}

// Which family's units serve which API; a family not listed serves none (RoboSense).
struct UnitApiRow {
  const core::Family& family;
  std::unique_ptr<UnitApi> (*make)(const UnitApiContext&);
};

}  // namespace

std::unique_ptr<UnitApi> make_unit_api(const UnitApiContext& context) {
  static const UnitApiRow rows[] = {{core::ouster::family(), make<OusterUnitApi>},
                                    {core::velodyne::family(), make<VelodyneUnitApi>},
                                    {core::hesai::family(), make<HesaiUnitApi>},
                                    {core::livox::family(), make<LivoxUnitApi>}};
  const core::Family& family = core::family_of(*context.settings.model);
  for (const UnitApiRow& row : rows) {
    if (&row.family == &family) return row.make(context);
  }
  return nullptr;
}

}  // namespace lidaremu::daemon
