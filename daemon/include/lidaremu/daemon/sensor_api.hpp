#pragma once
// What an emulated unit answers on its own address besides its packets (FORMATS.md): the Ouster
// HTTP API (firmware 3.1 config endpoints, the older cmd/ family, system/firmware) and its TCP
// 7501 text protocol; the Velodyne web interface nebula and Autoware's monitor read. The logic
// lives here, apart from the sockets (http_server.hpp), so each request maps to one function.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "lidaremu/daemon/http_server.hpp"
#include "lidaremu/daemon/settings.hpp"

namespace lidaremu::daemon {

// Applies new settings to the running sensor (a new init_id, mode, profile, destination...).
// Returns an empty string, or why it could not.
using Reconfigure = std::function<std::string(const SensorSettings&)>;

class OusterApi {
 public:
  OusterApi(const SensorSettings& active, Reconfigure reconfigure);
  HttpResponse handle(const HttpRequest& request);
  // Writes of any method, and the cmd/ GETs that change the unit (the SDK sends those as GETs).
  static bool changes_state(const HttpRequest& request);
  // TCP 7501: one command per line, one JSON (or echoed command) line back.
  std::string handle_line(const std::string& line, const std::string& remote_ip);
  [[nodiscard]] const SensorSettings& active() const { return active_; }
  [[nodiscard]] int reinitialisations() const { return reinitialisations_; }

 private:
  [[nodiscard]] nlohmann::ordered_json metadata() const;
  [[nodiscard]] nlohmann::ordered_json config_of(const SensorSettings& s) const;
  // Merges `changes` into the staged config; "@auto" becomes the requester. Empty or an error.
  std::string stage(const nlohmann::json& changes, const std::string& requester);
  std::string reinitialize();
  HttpResponse post_config(const HttpRequest& request);
  HttpResponse cmd(const std::string& command, const std::string& args,
                   const std::string& requester);

  SensorSettings active_;
  nlohmann::ordered_json staged_;
  Reconfigure reconfigure_;
  int reinitialisations_ = 0;
};

// The settings an Ouster config_params object describes, over `base`; or why not.
struct OusterConfigResult {
  std::optional<SensorSettings> settings;
  std::string error;
};
OusterConfigResult settings_from_ouster_config(const SensorSettings& base,
                                               const nlohmann::json& config);

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
