#pragma once
// The JSON replies every HTTP API of the daemon gives (nlohmann::json, the daemon's one JSON
// library): a body, or {"error": message} with the status that says why.
#include <nlohmann/json.hpp>
#include <string_view>

#include "lidaremu/daemon/net/http_server.hpp"

namespace lidaremu::daemon {

inline HttpResponse json_reply(const nlohmann::ordered_json& body, int status = 200) {
  return {status, "application/json", body.dump()};
}

inline HttpResponse json_error(int status, std::string_view message) {
  return {status, "application/json", nlohmann::ordered_json{{"error", message}}.dump()};
}

}  // namespace lidaremu::daemon
