#include "lidaremu/daemon/vendor/velodyne/velodyne_api.hpp"

#include "lidaremu/daemon/net/address.hpp"
#include "lidaremu/daemon/net/json_reply.hpp"

namespace lidaremu::daemon {
using nlohmann::json;
using nlohmann::ordered_json;

VelodyneApi::VelodyneApi(const SensorSettings& active, Reconfigure reconfigure)
    : active_(active), reconfigure_(std::move(reconfigure)) {}

ordered_json VelodyneApi::info() const {
  const std::uint64_t serial = active_.identity.serial_number;
  char mac[18];
  std::snprintf(mac, sizeof mac, "60:76:88:%02x:%02x:%02x", unsigned((serial >> 16) & 0xFF),
                unsigned((serial >> 8) & 0xFF), unsigned(serial & 0xFF));
  return {{"model", active_.model->velodyne.product_name},
          {"serial", std::to_string(serial)},
          {"mac", mac},
          {"ver", {{"bot", "V1.2.3"}, {"top", "V1.2.3"}, {"fpga", "lidaremu"}}}};
}

ordered_json VelodyneApi::settings_json() const {
  const core::ReturnMode e = active_.pipeline.return_mode;
  return {{"laser", "On"},
          {"returns", e == core::ReturnMode::kDual   ? "Dual"
                      : e == core::ReturnMode::kLast ? "Last"
                                                     : "Strongest"},
          {"rpm", static_cast<int>(std::lround(active_.pattern.rpm))},
          {"fov", {{"start", 0}, {"end", 359}}},
          {"phaselock", {{"enabled", "Off"}, {"offset", 0}}},
          {"host",
           {{"addr", active_.out.host},
            {"dport", active_.out.port},
            {"tport", active_.telemetry.port}}},
          {"net",
           {{"addr", active_.sensor_ip},
            {"mask", "255.0.0.0"},
            {"gateway", "127.0.0.1"},
            {"dhcp", "Off"}}}};
}

ordered_json VelodyneApi::status() const {
  return {{"gps", {{"pps_state", "Locked"}, {"position", "00 00.000000 N 000 00.000000 E"}}},
          {"motor",
           {{"state", "On"},
            {"rpm", static_cast<int>(std::lround(active_.pattern.rpm))},
            {"lock", "Off"},
            {"phase", 0}}},
          {"laser", {{"state", "On"}}}};
}

// Raw ADC readings as the real unit reports them: the LM20 sensors at about 40 degrees C
// (V = raw * 5 / 4096; T = -1481.96 + sqrt(2.1962e6 + (1.8639 - V) / 3.88e-6)).
ordered_json VelodyneApi::diag() {
  return {{"volt_temp",
           {{"bot",
             {{"i_out", 1200},
              {"1.2v", 983},
              {"lm20_temp", 1145},
              {"5v", 2048},
              {"2.5v", 2048},
              {"3.3v", 2703},
              {"5v_raw", 2048},
              {"vcc", 1862}}},
            {"top",
             {{"hv", 1900},
              {"ad_temp", 1100},
              {"lm20_temp", 1145},
              {"pwr_5v", 2048},
              {"pwr_2_5v", 2048},
              {"pwr_3_3v", 2703},
              {"pwr_raw", 2048},
              {"pwr_vccint", 983}}}}}};
}

HttpResponse VelodyneApi::post_setting(const HttpRequest& request) {
  // Forms as the web page and nebula send them: rpm=600, returns=Strongest, laser=on, ...
  SensorSettings next = active_;
  const auto form = parse_query(request.body);
  for (const auto& [key, value] : form) {
    if (key == "rpm") {
      int rpm = 0;
      std::istringstream(value) >> rpm;
      const auto r = core::make_rpm_scan(*next.model, rpm);
      if (!r.pattern) return json_error(400, r.error);
      next.pattern = *r.pattern;
    } else if (key == "returns") {
      if (value == "Strongest") {
        next.pipeline.return_mode = core::ReturnMode::kStrongest;
      } else if (value == "Last") {
        next.pipeline.return_mode = core::ReturnMode::kLast;
      } else if (value == "Dual" && next.model->velodyne.dual_return) {
        next.pipeline.return_mode = core::ReturnMode::kDual;
      } else if (value == "Dual") {
        return json_error(400, "returns: Strongest or Last (no dual-return layout)");
      } else {
        return json_error(400, "returns: Strongest, Last or Dual");
      }
    } else if (key == "addr" && request.path == "/cgi/setting/host") {
      if (!is_ipv4(value)) return json_error(400, "addr: an IPv4 address");
      next.out.host = next.telemetry.host = value;
    } else if ((key == "dport" || key == "tport") && request.path == "/cgi/setting/host") {
      int port = 0;
      std::istringstream(value) >> port;
      if (port < 1 || port > 65535) return json_error(400, key + ": 1..65535");
      (key == "dport" ? next.out : next.telemetry).port = static_cast<std::uint16_t>(port);
    }
    // Other settings (laser, fov, phase lock, network) are accepted and not emulated.
  }
  if (const auto r = reconfigure_(next, request.remote_ip); !r.ok()) {
    return json_error(r.forbidden ? 403 : 500, r.error);
  }
  active_ = next;
  return {200, "text/plain", ""};
}

bool VelodyneApi::changes_state(const HttpRequest& request) {
  return request.method != "GET" && request.method != "HEAD";
}

HttpResponse VelodyneApi::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (request.method == "POST" && path.starts_with("/cgi/setting")) return post_setting(request);
  if (request.method == "POST" && path == "/cgi/reset") return {200, "text/plain", ""};
  if (request.method != "GET") return json_error(405, "GET, or POST to /cgi/setting");
  if (path == "/cgi/info.json") return json_reply(info());
  if (path == "/cgi/settings.json") return json_reply(settings_json());
  if (path == "/cgi/status.json") return json_reply(status());
  if (path == "/cgi/diag.json") return json_reply(diag());
  if (path == "/cgi/snapshot.hdl") {
    return json_reply(
        {{"info", info()}, {"settings", settings_json()}, {"status", status()}, {"diag", diag()}});
  }
  return json_error(404, "not found: " + path);
}

}  // namespace lidaremu::daemon
