#pragma once
// What an emulated unit answers on its own address, as its family's drivers talk to it: the
// Ouster HTTP API and TCP 7501, the Velodyne web interface, Hesai PTC, Livox SDK2 discovery and
// commands (RoboSense drivers ask the unit nothing). Which family serves which is unit_apis.cpp's
// table, keyed by the family (core/family.hpp).
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lidaremu/daemon/net/browser_guard.hpp"
#include "lidaremu/daemon/net/request_server.hpp"
#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"
#include "lidaremu/daemon/vendor/reconfigure.hpp"

namespace lidaremu::daemon {

struct ApiPortCounts {
  std::string api;  // the label /metrics gives it
  ConnectionCounts counts;
};

class UnitApi {
 public:
  virtual ~UnitApi() = default;
  UnitApi() = default;
  UnitApi(const UnitApi&) = delete;
  UnitApi& operator=(const UnitApi&) = delete;
  // What the start-up line says of it: ", API http://127.0.0.2:80".
  [[nodiscard]] virtual std::string note() const = 0;
  // The Livox SDK2 ports' datagram counts (other families: none).
  [[nodiscard]] virtual std::optional<LivoxSdkCounts> livox_sdk_counts() const {
    return std::nullopt;
  }
  // Its TCP request/reply ports' connection counts, by API ("ptc", "tcp7501").
  [[nodiscard]] virtual std::vector<ApiPortCounts> port_counts() const { return {}; }
};

struct UnitApiContext {
  const SensorSettings& settings;
  boost::asio::io_context& io;
  const BrowserPolicy& browsers;  // who may change the unit's settings
  Reconfigure apply;              // a change the API accepted, for the sensor to apply
  // Whether the sensor is between a reinitialisation and the first packet of its new
  // configuration (an Ouster reports INITIALIZING meanwhile).
  std::function<bool()> initializing = [] { return false; };
};

// The API of the settings' family, listening on the unit's address (its ports closed when it is
// destroyed); null when its family's units serve none. Throws when a port cannot be bound.
std::unique_ptr<UnitApi> make_unit_api(const UnitApiContext& context);

}  // namespace lidaremu::daemon
