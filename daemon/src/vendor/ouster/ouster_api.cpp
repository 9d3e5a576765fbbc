#include "lidaremu/daemon/vendor/ouster/ouster_api.hpp"

#include <set>
#include <sstream>

#include "lidaremu/core/ouster.hpp"
#include "lidaremu/daemon/net/address.hpp"
#include "lidaremu/daemon/net/json_reply.hpp"

namespace lidaremu::daemon {
namespace {
using nlohmann::json;
using nlohmann::ordered_json;

// Keys the emulated firmware stores and reports but whose effect it does not emulate
// (synchronisation inputs and outputs, NMEA, phase lock): accepted so clients that round-trip
// the whole config keep working.
const std::set<std::string, std::less<>> kStoredOnly{
    "multipurpose_io_mode",      "nmea_baud_rate",           "nmea_ignore_valid_char",
    "nmea_in_polarity",          "nmea_leap_seconds",        "phase_lock_enable",
    "phase_lock_offset",         "signal_multiplier",        "sync_pulse_in_polarity",
    "sync_pulse_out_angle",      "sync_pulse_out_frequency", "sync_pulse_out_polarity",
    "sync_pulse_out_pulse_width"};
const std::set<std::string, std::less<>> kEffective{
    "azimuth_window", "columns_per_packet", "lidar_mode",       "operating_mode",
    "timestamp_mode", "udp_dest",           "udp_ip",           "udp_port_imu",
    "udp_port_lidar", "udp_profile_imu",    "udp_profile_lidar"};

bool is_config_key(const std::string& key) {
  return kStoredOnly.contains(key) || kEffective.contains(key);
}

// A new init_id: what a real sensor's reinitialisation shows its clients.
std::uint32_t next_init_id(std::uint32_t current) {
  return static_cast<std::uint32_t>((std::uint64_t{current} * 2654435761u + 0x9E37u) & 0xFFFFFFu) |
         1u;
}

// "set_config_param KEY VALUE": VALUE as JSON when it reads as JSON (numbers, booleans,
// arrays), otherwise as a string ("2048x10", "RNG19_RFL8_SIG16_NIR16").
json value_of(const std::string& text) {
  const json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json(text) : parsed;
}

}  // namespace

OusterConfigResult settings_from_ouster_config(const SensorSettings& base, const json& config) {
  if (!config.is_object()) return {std::nullopt, "config must be a JSON object"};
  SensorSettings s = base;
  for (const auto& item : config.items()) {
    // Named, not structured bindings: the lambda below captures them.
    const std::string& key = item.key();
    const json& value = item.value();
    if (kStoredOnly.contains(key)) continue;
    if (!kEffective.contains(key)) return {std::nullopt, "unknown config parameter '" + key + "'"};
    auto bad = [&](const std::string& expected) {
      return OusterConfigResult{std::nullopt,
                                key + " = " + value.dump() + ": expected " + expected};
    };
    if (key == "lidar_mode") {
      const std::string mode = value.is_string() ? value.get<std::string>() : "";
      int columns = 0, fps = 0;
      char x = 0;
      std::istringstream in(mode);
      if (!(in >> columns >> x >> fps) || x != 'x') return bad("\"COLUMNSxFPS\"");
      const auto r = core::make_ouster_scan(*s.model, columns, fps);
      if (!r.pattern) return bad(r.error);
      s.pattern = *r.pattern;
    } else if (key == "udp_profile_lidar") {
      const auto profile =
          core::ouster::profile_from_name(value.is_string() ? value.get<std::string>() : "");
      if (!profile) {
        return bad(
            "LEGACY, RNG19_RFL8_SIG16_NIR16, RNG19_RFL8_SIG16_NIR16_DUAL or RNG15_RFL8_NIR8");
      }
      s.ouster.profile = *profile;
      s.pipeline.return_mode = core::ouster_return_mode(*profile);
    } else if (key == "udp_profile_imu") {
      if (value != "LEGACY") return bad("LEGACY (the IMU profile emulated)");
    } else if (key == "udp_dest" || key == "udp_ip") {  // udp_ip: firmware 1.x's name
      if (!value.is_string() || !is_ipv4(value.get<std::string>()))
        return bad("an IPv4 address or \"@auto\"");
      s.out.host = s.telemetry.host = value.get<std::string>();
    } else if (key == "udp_port_lidar" || key == "udp_port_imu") {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
          value.get<std::int64_t>() > 65535) {
        return bad("1..65535");
      }
      (key == "udp_port_lidar" ? s.out : s.telemetry).port = value.get<std::uint16_t>();
    } else if (key == "azimuth_window") {
      if (!value.is_array() || value.size() != 2 || !value[0].is_number_integer() ||
          !value[1].is_number_integer() || value[0].get<std::int64_t>() < 0 ||
          value[1].get<std::int64_t>() < 0 || value[0].get<std::int64_t>() > 360000 ||
          value[1].get<std::int64_t>() > 360000) {
        return bad("[START, END] millidegrees, each 0..360000");
      }
      s.ouster.azimuth_window_start_mdeg = value[0].get<std::uint32_t>();
      s.ouster.azimuth_window_end_mdeg = value[1].get<std::uint32_t>();
    } else if (key == "timestamp_mode") {
      const auto mode =
          core::ouster::timestamp_mode_from_name(value.is_string() ? value.get<std::string>() : "");
      if (!mode) return bad("TIME_FROM_INTERNAL_OSC or TIME_FROM_PTP_1588");
      s.ouster.timestamp_mode = *mode;
    } else if (key == "columns_per_packet") {
      if (value != 16) return bad("16 (the value emulated)");
    } else if (key == "operating_mode") {
      if (value != "NORMAL") return bad("NORMAL (the mode emulated)");
    }
  }
  return {s, {}};
}

OusterApi::OusterApi(const SensorSettings& active, Reconfigure reconfigure,
                     std::function<bool()> initializing)
    : active_(active),
      staged_(config_of(active)),
      reconfigure_(std::move(reconfigure)),
      initializing_(std::move(initializing)) {
  build_metadata();
}

void OusterApi::build_metadata() {
  const core::ouster::MetadataSettings m{active_.out.host, active_.out.port, active_.telemetry.port,
                                         active_.ouster};
  metadata_ =
      ordered_json::parse(core::ouster::metadata_json(active_.pattern, active_.identity, m));
  // The firmware's state while a reinitialisation takes effect (the SDK waits it out).
  metadata_initializing_ = metadata_;
  metadata_initializing_["sensor_info"]["status"] = "INITIALIZING";
}

const ordered_json& OusterApi::metadata() const {
  return initializing_() ? metadata_initializing_ : metadata_;
}

ordered_json OusterApi::config_of(const SensorSettings& s) const {
  const core::ouster::MetadataSettings m{s.out.host, s.out.port, s.telemetry.port, s.ouster};
  return ordered_json::parse(
      core::ouster::metadata_json(s.pattern, s.identity, m))["config_params"];
}

std::string OusterApi::stage(const json& changes, const std::string& requester) {
  if (!changes.is_object()) return "config must be a JSON object";
  ordered_json next = staged_;
  for (const auto& [key, value] : changes.items()) {
    next[key] = key == "udp_dest" && value == "@auto" ? json(requester) : value;
  }
  const auto checked = settings_from_ouster_config(active_, next);
  if (!checked.settings) return checked.error;
  staged_ = std::move(next);
  return {};
}

HttpResponse OusterApi::reinitialize(const std::string& requester) {
  auto next = settings_from_ouster_config(active_, staged_);
  if (!next.settings) return json_error(500, next.error);
  next.settings->identity.init_id = next_init_id(active_.identity.init_id);
  if (const auto r = reconfigure_(*next.settings, requester); !r.ok()) {
    // A destination the policy refuses stays staged: the client may stage another.
    return json_error(r.forbidden ? 403 : 500, r.error);
  }
  active_ = *next.settings;
  build_metadata();
  staged_ = metadata_["config_params"];
  ++reinitialisations_;
  return json_reply(ordered_json::object());
}

HttpResponse OusterApi::post_config(const HttpRequest& request) {
  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return json_error(400, "body is not JSON");
  if (std::string error = stage(body, request.remote_ip); !error.empty()) {
    return json_error(400, error);
  }
  // Firmware 3.1: staging=true only stages; reinit=true (the default without staging) applies.
  const auto flag = [&](const char* name, bool otherwise) {
    const auto it = request.query.find(name);
    return it == request.query.end() ? otherwise : it->second == "true";
  };
  const bool staging = flag("staging", false);
  if (flag("reinit", !staging)) return reinitialize(request.remote_ip);
  return json_reply(ordered_json::object());
}

HttpResponse OusterApi::cmd(const std::string& command, const std::string& args,
                            const std::string& requester) {
  const ordered_json& md = metadata();
  if (command == "get_sensor_info") return json_reply(md["sensor_info"]);
  if (command == "get_beam_intrinsics") return json_reply(md["beam_intrinsics"]);
  if (command == "get_imu_intrinsics") return json_reply(md["imu_intrinsics"]);
  if (command == "get_lidar_intrinsics") return json_reply(md["lidar_intrinsics"]);
  if (command == "get_lidar_data_format") return json_reply(md["lidar_data_format"]);
  if (command == "get_calibration_status") return json_reply(md["calibration_status"]);
  if (command == "get_config_param") {
    if (args == "active") return json_reply(config_of(active_));
    if (args == "staged") return json_reply(staged_);
    return json_error(400, "get_config_param takes 'active' or 'staged'");
  }
  if (command == "set_udp_dest_auto") {
    if (std::string error = stage({{"udp_dest", requester}}, requester); !error.empty()) {
      return json_error(400, error);
    }
    return json_reply(ordered_json::object());
  }
  if (command == "set_config_param") {
    const auto space = args.find(' ');
    if (space == std::string::npos) return json_error(400, "set_config_param KEY VALUE");
    const std::string key = args.substr(0, space);
    json changes = json::object();
    if (key == ".") {
      // SDK 0.4-0.14 send the whole config as one blob: the active one with their changes
      // merged in. Firmware takes the keys it knows and ignores the rest (the SDK relies on it).
      const json blob = value_of(args.substr(space + 1));
      if (!blob.is_object()) return json_error(400, "set_config_param . takes a JSON object");
      for (const auto& [k, v] : blob.items()) {
        if (is_config_key(k)) changes[k] = v;
      }
    } else {
      changes[key] = value_of(args.substr(space + 1));
    }
    if (std::string error = stage(changes, requester); !error.empty()) {
      return json_error(400, error);
    }
    return json_reply("set_config_param");
  }
  if (command == "reinitialize") return reinitialize(requester);
  // Persisting the config across power cycles: nothing to persist in an emulator; answered as
  // the firmware does (HTTP: {}, TCP 7501: the command echoed, under its old name).
  if (command == "save_config_params" || command == "write_config_txt") {
    return json_reply(ordered_json::object());
  }
  if (command == "get_alerts") {
    // FW 2.x: the alerts now active, the log of past ones, and where the log continues. An
    // emulated unit raises none.
    return json_reply(
        {{"active", ordered_json::array()}, {"log", ordered_json::array()}, {"next_cursor", 0}});
  }
  return json_error(404, "unknown command '" + command + "'");
}

bool OusterApi::changes_state(const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") return true;
  constexpr std::string_view kCmd = "/api/v1/sensor/cmd/";
  if (!request.path.starts_with(kCmd)) return false;
  const std::string_view command = std::string_view(request.path).substr(kCmd.size());
  return !command.starts_with("get_");
}

HttpResponse OusterApi::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  const bool get = request.method == "GET";
  constexpr std::string_view kCmd = "/api/v1/sensor/cmd/";
  constexpr std::string_view kMetadata = "/api/v1/sensor/metadata";
  if (path == "/api/v1/sensor/config") {
    if (get) {
      const auto staging = request.query.find("staging");
      const bool staged = staging != request.query.end() && staging->second == "true";
      return json_reply(staged ? staged_ : config_of(active_));
    }
    if (request.method == "POST") return post_config(request);
    return json_error(405, "GET or POST");
  }
  if (!get) return json_error(405, "GET only");
  if (path == kMetadata) return json_reply(metadata());
  if (path.starts_with(kMetadata) && path.size() > kMetadata.size() + 1 &&
      path[kMetadata.size()] == '/') {
    const std::string section = path.substr(kMetadata.size() + 1);
    const ordered_json& md = metadata();
    if (md.contains(section)) return json_reply(md[section]);
    return json_error(404, "no metadata section '" + section + "'");
  }
  if (path.starts_with(kCmd)) {
    const auto args = request.query.find("args");
    return cmd(path.substr(kCmd.size()), args == request.query.end() ? "" : args->second,
               request.remote_ip);
  }
  if (path == "/api/v1/system/firmware") {
    return json_reply({{"fw", metadata()["sensor_info"]["image_rev"]}});
  }
  if (path == "/api/v1/user/data") return json_reply("");
  // Firmware 2.x and later serve the alerts here too, as get_alerts answers them.
  if (path == "/api/v1/sensor/alerts") return cmd("get_alerts", "", request.remote_ip);
  return json_error(404, "not found: " + path);
}

std::string OusterApi::handle_line(const std::string& line, const std::string& remote_ip) {
  // The SDK's TCP client ends every token with a space ("get_config_param active \n").
  const std::string trimmed = line.substr(0, line.find_last_not_of(" \t") + 1);
  const auto space = trimmed.find(' ');
  std::string command = trimmed.substr(0, space);
  const std::string args = space == std::string::npos ? "" : trimmed.substr(space + 1);
  const HttpResponse r = cmd(command, args, remote_ip);
  if (r.status != 200) {
    const json body = json::parse(r.body, nullptr, false);
    return "error: " +
           (body.is_object() && body.contains("error") ? body["error"].get<std::string>() : r.body);
  }
  // The text protocol echoes commands that change state.
  if (command == "set_config_param" || command == "reinitialize" ||
      command == "set_udp_dest_auto" || command == "write_config_txt") {
    return command;
  }
  return r.body;
}

}  // namespace lidaremu::daemon
