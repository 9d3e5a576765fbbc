#pragma once
// What an Ouster unit answers on its own address besides its packets (FORMATS.md): the HTTP API
// (firmware 3.1 config endpoints, the older cmd/ family, system/firmware) and its TCP 7501 text
// protocol. The logic lives here, apart from the sockets (http_server.hpp), so each request maps
// to one function.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/net/http_server.hpp"
#include "lidaremu/daemon/vendor/reconfigure.hpp"

namespace lidaremu::daemon {

class OusterApi {
 public:
  // `initializing`: whether the sensor has not yet streamed since its last reinitialisation.
  OusterApi(
      const SensorSettings& active, Reconfigure reconfigure,
      std::function<bool()> initializing = [] { return false; });
  HttpResponse handle(const HttpRequest& request);
  // Writes of any method, and the cmd/ GETs that change the unit (the SDK sends those as GETs).
  static bool changes_state(const HttpRequest& request);
  // TCP 7501: one command per line, one JSON (or echoed command) line back.
  std::string handle_line(const std::string& line, const std::string& remote_ip);
  [[nodiscard]] const SensorSettings& active() const { return active_; }
  [[nodiscard]] int reinitialisations() const { return reinitialisations_; }

 private:
  // The active configuration's metadata, as the firmware reports it now (INITIALIZING while a
  // reinitialisation takes effect).
  [[nodiscard]] const nlohmann::ordered_json& metadata() const;
  // Built once per configuration: a client asking TCP 7501 in a loop cost a JSON build per line.
  void build_metadata();
  [[nodiscard]] nlohmann::ordered_json config_of(const SensorSettings& s) const;
  // Merges `changes` into the staged config; "@auto" becomes the requester. Empty or an error.
  std::string stage(const nlohmann::json& changes, const std::string& requester);
  // Applies the staged config, asked by `requester`: {} or the error (403: a destination the
  // policy refuses).
  HttpResponse reinitialize(const std::string& requester);
  HttpResponse post_config(const HttpRequest& request);
  HttpResponse cmd(const std::string& command, const std::string& args,
                   const std::string& requester);

  SensorSettings active_;
  nlohmann::ordered_json staged_;
  Reconfigure reconfigure_;
  std::function<bool()> initializing_;
  nlohmann::ordered_json metadata_;
  nlohmann::ordered_json metadata_initializing_;
  int reinitialisations_ = 0;
};

// The settings an Ouster config_params object describes, over `base`; or why not.
struct OusterConfigResult {
  std::optional<SensorSettings> settings;
  std::string error;
};
OusterConfigResult settings_from_ouster_config(const SensorSettings& base,
                                               const nlohmann::json& config);

}  // namespace lidaremu::daemon
