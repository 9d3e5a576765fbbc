#pragma once
// What a Velodyne unit answers on its own address besides its packets (FORMATS.md): the web
// interface's /cgi/ JSON that nebula and Autoware's monitor read, and the settings form.
#include <nlohmann/json.hpp>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/net/http_server.hpp"
#include "lidaremu/daemon/vendor/reconfigure.hpp"

namespace lidaremu::daemon {

class VelodyneApi {
 public:
  VelodyneApi(const SensorSettings& active, Reconfigure reconfigure);
  HttpResponse handle(const HttpRequest& request);
  // Every POST (the settings forms and reset).
  static bool changes_state(const HttpRequest& request);
  [[nodiscard]] const SensorSettings& active() const { return active_; }

 private:
  [[nodiscard]] nlohmann::ordered_json info() const;
  [[nodiscard]] nlohmann::ordered_json settings_json() const;
  [[nodiscard]] nlohmann::ordered_json status() const;
  [[nodiscard]] static nlohmann::ordered_json diag();
  HttpResponse post_setting(const HttpRequest& request);

  SensorSettings active_;
  Reconfigure reconfigure_;
};

}  // namespace lidaremu::daemon
