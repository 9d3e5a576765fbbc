#include "lidaremu/daemon/config/settings.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <boost/asio/ip/address_v4.hpp>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/scan_choice.hpp"
#include "lidaremu/daemon/config/settings_schema.hpp"
#include "lidaremu/daemon/net/destination_policy.hpp"
#include "settings_build.hpp"

namespace lidaremu::daemon {
namespace {

// A stable identity per sensor: the same configuration always claims the same serial and
// init_id, so captures and metadata files stay comparable between runs.
core::SensorIdentity identity_for(std::uint64_t seed, std::uint16_t sensor_id) {
  core::SensorIdentity id;
  id.serial_number = 992200000000ull + sensor_id;
  std::uint64_t h = (seed + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t{sensor_id} << 17);
  h ^= h >> 29;
  id.init_id = static_cast<std::uint32_t>(h & 0xFFFFFF) | 1u;
  return id;
}

}  // namespace

std::optional<std::pair<std::string, std::uint16_t>> parse_http_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  int port = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data() + colon + 1, end, port);
  if (ec != std::errc() || ptr != end || port < 0 || port > 65535) return std::nullopt;
  // A host name (a compose service, "localhost") resolves here, once, like every address.
  Endpoint e{text.substr(0, colon), static_cast<std::uint16_t>(port)};
  if (e.host.empty() || resolve_host(e)) return std::nullopt;
  return std::pair{e.host, e.port};
}

std::optional<std::vector<core::CloudFormat>> parse_export_formats(const std::string& text) {
  std::vector<core::CloudFormat> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto comma = std::min(text.find(',', from), text.size());
    const auto format = core::cloud_format_for("." + text.substr(from, comma - from));
    if (!format) return std::nullopt;
    if (std::find(out.begin(), out.end(), *format) == out.end()) out.push_back(*format);
    from = comma + 1;
  }
  return out;
}

std::vector<std::string> check_daemon_settings(const DaemonSettings& d, const std::string& at) {
  std::vector<std::string> problems;
  const auto path = [&](std::string_view key) {
    return setting_path(*setting_by_key(SettingScope::kDaemon, key), at);
  };
  for (const auto& [key, address] : {std::pair{"http", &d.http}, {"foxglove", &d.foxglove}}) {
    if (*address != "off" && !parse_http_address(*address)) {
      problems.push_back(
          path(key) + " = '" + *address +
          "': expected HOST:PORT (an IPv4 address or a host name that resolves) or \"off\"");
    }
  }
  if (!parse_export_formats(d.export_formats)) {
    problems.push_back(path("export_formats") + " = '" + d.export_formats +
                       "': expected a comma-separated list of pcd, ply, bin");
  }
  // A run of up to ten years (the row's range); counters at most every 0.1 s (a shorter
  // interval is a log storm).
  check_daemon_values(d, at, problems);
  if (!(d.stats_interval_s == 0 || (d.stats_interval_s >= 0.1 && d.stats_interval_s <= 86400))) {
    problems.push_back(
        setting_path(*setting_by_key(SettingScope::kDaemon, "stats_interval_s"), at) + " = " +
        std::to_string(d.stats_interval_s) + ": expected 0 (never) or 0.1 .. 86400 seconds");
  }
  for (const auto& host : d.http_allowed_hosts) {
    if (host.empty() || host.size() > 253 || !std::all_of(host.begin(), host.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
        })) {
      problems.push_back(path("http_allowed_hosts") + ": '" + host +
                         "': expected a host name (letters, digits, '-', '.'), without a port");
    }
  }
  for (const auto& range : d.allow_destinations) {
    if (!parse_ipv4_range(range)) {
      problems.push_back(path("allow_destinations") + ": '" + range +
                         "': expected an IPv4 range (192.168.1.0/24) or address");
    }
  }
  for (const auto& origin : d.http_allowed_origins) {
    const auto scheme = origin.find("://");
    const std::string scheme_name = origin.substr(0, scheme);
    if (scheme == std::string::npos || (scheme_name != "http" && scheme_name != "https") ||
        origin.size() == scheme + 3 || origin.find('/', scheme + 3) != std::string::npos) {
      problems.push_back(path("http_allowed_origins") + ": '" + origin +
                         "': expected an origin as browsers send it: http://HOST[:PORT] or "
                         "https://HOST[:PORT], no path");
    }
  }
  return problems;
}

bool valid_sensor_name(const std::string& name) {
  // It becomes a metric label, a file name in the export directory and a Foxglove topic: plain
  // characters only, and never a path that climbs out of the directory.
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string default_sensor_ip(std::uint16_t sensor_id) {
  const int host = 2 + sensor_id;
  return "127.0." + std::to_string(host >> 8) + "." + std::to_string(host & 0xFF);
}

namespace {

using BadValue = std::function<void(const std::string&, const std::string&, const std::string&)>;

// Ouster: profile (which fixes the echoes reported), azimuth window, timestamp mode.
// (The schema's rows refuse them on other families and check their choices.)
void read_ouster_output(const SensorFlags& f, bool ouster, SensorSettings& s, const BadValue& bad) {
  if (!ouster) return;
  static const std::map<std::string, core::OusterProfile> profiles{
      {"legacy", core::OusterProfile::kLegacy},
      {"rng19", core::OusterProfile::kRng19},
      {"rng19-dual", core::OusterProfile::kRng19Dual},
      {"rng15", core::OusterProfile::kRng15}};
  if (const auto profile = profiles.find(f.profile); profile != profiles.end()) {
    s.ouster.profile = profile->second;
    s.pipeline.return_mode = core::ouster_return_mode(profile->second);
  }
  if (f.timestamp_mode == "ptp" || f.timestamp_mode == "TIME_FROM_PTP_1588") {
    s.ouster.timestamp_mode = core::OusterTimestampMode::kPtp;
  }
  if (!f.azimuth_window.empty()) {
    unsigned start = 0, end = 0;
    char comma = 0;
    std::istringstream in(f.azimuth_window);
    if (!(in >> start >> comma >> end) || comma != ',' || !in.eof() || start > 360000 ||
        end > 360000) {
      bad("azimuth_window", f.azimuth_window,
          "START,END in millidegrees, each 0..360000 (START > END wraps through 0)");
    } else {
      s.ouster.azimuth_window_start_mdeg = start;
      s.ouster.azimuth_window_end_mdeg = end;
    }
  }
}

// The scan: a rotation rate, a lidar mode or a scan table, as the model's family takes (the
// schema's rows refuse a setting of another kind of scan).
void read_scan(const SensorFlags& f, const std::string& at, SensorSettings& s, Problems& problems) {
  auto r =
      core::make_scan(*s.model, {.rpm = f.rpm, .mode = f.mode, .scan_pattern = f.scan_pattern});
  if (r.pattern) {
    s.pattern = *r.pattern;
    return;
  }
  const SettingRow* row = setting_by_key(SettingScope::kSensor, r.setting);
  problems.push_back(setting_path(*row, at) + ": " + r.error);
}

void read_allow_list(const SensorFlags& f, SensorSettings& s, const BadValue& bad) {
  for (const std::string& sender : f.allow) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address_v4(sender, ec);
    if (ec) {
      bad("allow", sender, "IPv4 addresses of the senders to accept, e.g. [\"127.0.0.1\"]");
    } else {
      s.allowed_senders.push_back(address.to_uint());
    }
  }
}

void read_sensor_address(const SensorFlags& f, SensorSettings& s, const BadValue& bad) {
  s.api_port_explicit = f.api_port >= 0;
  s.api_port = f.api_port < 0 ? core::family_of(*s.model).default_api_port() : f.api_port;
  boost::system::error_code ec;
  if (!f.sensor_ip.empty()) {
    boost::asio::ip::make_address_v4(f.sensor_ip, ec);
    if (ec) bad("sensor_ip", f.sensor_ip, "an IPv4 address, e.g. 127.0.0.2");
    s.sensor_ip = f.sensor_ip;
    return;
  }
  // Only a loopback output can leave from a loopback source address.
  const auto out = boost::asio::ip::make_address_v4(s.out.host, ec);
  s.sensor_ip = !ec && out.is_loopback() ? default_sensor_ip(s.sensor_id) : "";
}

// The physics chain: the stages `physics_stages` lists, or the preset `physics` names with the
// surface and detection models substituted.
void read_physics_chain(const SensorFlags& f, const std::string& at, SensorSettings& s,
                        Problems& problems) {
  const bool flags = at == "--";
  std::vector<std::string> chain;
  if (!f.physics_stages.empty()) {
    const std::string list = flags ? "--physics-stages" : at + "physics_stages";
    const auto conflict = [&](const std::string& key) {
      problems.push_back(at + key + " and " + list + " both choose the physics chain: keep one (" +
                         list + " lists every stage)");
    };
    if (f.physics != "default") conflict("physics");
    if (f.surface != "brdf") conflict("surface");
    if (f.detection != "threshold") conflict("detection");
    chain = f.physics_stages;
  } else {
    if (f.physics == "default") {
      chain = core::stage_chain(core::PhysicsMode::kDefault);
    } else if (f.physics == "ideal") {
      chain = core::stage_chain(core::PhysicsMode::kIdeal);
    } else {
      return;  // the schema's choices name it
    }
    if (f.surface != "brdf" && f.surface != "ipsp") return;
    core::use_stage(chain, "surface." + f.surface);
    if (f.detection == "threshold" || f.detection == "capability") {
      if (f.physics != "ideal") core::use_stage(chain, "detection." + f.detection);
    }
  }
  try {
    core::check_chain(chain);
    s.pipeline.stages = std::move(chain);
  } catch (const std::invalid_argument& e) {
    problems.push_back(at + (flags ? "physics-stages" : "physics_stages") + ": " + e.what());
  }
}

}  // namespace

void raise(const Problems& problems, const std::string& source) {
  std::string msg = source + ": " + std::to_string(problems.size()) + " problem(s):";
  for (const auto& p : problems) msg += "\n  " + p;
  throw SettingsError(msg);
}

void build_sensor(const SensorFlags& f, const std::string& at, SensorSettings& s,
                  Problems& problems) {
  auto bad = [&](const std::string& key, const std::string& value, const std::string& accepted) {
    // The flag's spelling on a command line, the key's in a file.
    const SettingRow* row = setting_by_key(SettingScope::kSensor, key);
    problems.push_back((row != nullptr ? setting_path(*row, at) : at + key) + " = '" + value +
                       "': expected " + accepted);
  };
  s.model = core::find_sensor_model(f.model);
  if (!s.model) {
    bad("model", f.model, core::sensor_model_names());
    return;
  }
  s.name = f.name.empty() ? std::string(s.model->name) + "-" + std::to_string(f.sensor_id) : f.name;
  check_sensor_values(f, s.model->family, at, problems);
  read_scan(f, at, s, problems);
  s.sensor_id = static_cast<std::uint16_t>(f.sensor_id);

  // Host names (a compose service, a Kubernetes service) are resolved here, at start and on each
  // reload, to the IPv4 address the sockets use.
  const auto resolved = [&](const char* key, const std::string& text, Endpoint& e) {
    if (const auto error = resolve_host(e)) {
      bad(key, text, "a host that resolves to an IPv4 address (" + *error + ")");
    }
  };
  if (auto e = parse_endpoint(f.hits)) {
    s.hits = *e;
    resolved("hits", f.hits, s.hits);
  } else {
    bad("hits", f.hits, "udp://HOST:PORT");
  }
  const core::FamilyPorts ports = core::family_of(*s.model).default_ports();
  const std::uint16_t default_data = ports.data, default_telemetry = ports.telemetry;
  if (f.out.empty())
    s.out = {"127.0.0.1", default_data};
  else if (auto e = parse_endpoint(f.out)) {
    s.out = *e;
    resolved("out", f.out, s.out);
  } else {
    bad("out", f.out, "udp://HOST:PORT");
  }
  if (f.telemetry.empty()) {
    s.telemetry = {s.out.host, default_telemetry};
  } else if (auto e = parse_endpoint(f.telemetry)) {
    s.telemetry = *e;
    resolved("telemetry", f.telemetry, s.telemetry);
  } else {
    bad("telemetry", f.telemetry, "udp://HOST:PORT");
  }
  if (s.out.port == 0) bad("out", f.out, "a non-zero port");
  // Livox SDK2 takes points only from the unit's point port, and IMU packets from its IMU port.
  s.data_source_port = ports.data_source;
  s.telemetry_source_port = ports.telemetry_source;

  if (f.hits_format == "framed")
    s.hits_format = HitsFormat::kFramed;
  else if (f.hits_format == "raw7")
    s.hits_format = HitsFormat::kRaw7;
  else if (f.hits_format == "raw8")
    s.hits_format = HitsFormat::kRaw8;
  if (s.hits_format != HitsFormat::kFramed &&
      core::scan_kind(*s.model) == core::ScanKind::kScanTable) {
    bad("hits_format", f.hits_format,
        "framed for a " + std::string(core::family_name(s.model->family)) +
            " model (a raw row carries no beam, and a table scan's beam cannot be found from "
            "where it hit)");
  }
  if (s.hits_format != HitsFormat::kFramed && s.model->hesai.mirror != nullptr) {
    bad("hits_format", f.hits_format,
        "framed for the " + std::string(s.model->name) +
            " (a raw row carries no beam, and its three mirror facets sweep the same directions: "
            "where a hit lies does not tell which pass it was cast in)");
  }

  s.pace = f.pace == "afap" ? Pace::kAfap : Pace::kRealtime;
  s.clock = f.clock == "sim" ? ClockSource::kSim : ClockSource::kWall;

  s.pipeline.params = core::default_physics_params(*s.model);
  for (const auto& [field, value] : f.physics_params) field(s.pipeline.params) = value;
  read_physics_chain(f, at, s, problems);
  // The return modes the model offers (its family's reading of its row).
  const core::Family& family = core::family_of(*s.model);
  const std::string echoes =
      f.return_mode.empty()
          ? std::string(core::return_mode_name(family.default_return_mode(*s.model)))
          : f.return_mode;
  const auto offered = family.return_modes(*s.model);
  const auto named = core::return_mode_named(echoes);
  if (named && std::find(offered.begin(), offered.end(), *named) != offered.end()) {
    s.pipeline.return_mode = *named;
  } else {
    std::string accepted;
    for (const auto mode : offered) {
      accepted += (accepted.empty() ? "" : "|") + std::string(core::return_mode_name(mode));
    }
    const std::string note(family.return_mode_note());
    bad("return_mode", echoes,
        accepted + " (this model's return modes" + (note.empty() ? "" : "; " + note) + ")");
  }
  // The profile, window and timestamp mode where the schema says they apply (Ouster).
  const bool ouster =
      setting_by_key(SettingScope::kSensor, "profile")->families.contains(s.model->family);
  read_ouster_output(f, ouster, s, bad);
  auto& weather = s.pipeline.params.weather;
  weather.rain_mm_per_h = f.rain_mm_per_h;
  weather.visibility_m = f.visibility_m;
  weather.sun_irradiance_w_per_m2 = f.sun_irradiance_w_per_m2;
  if (auto e = protocol::engine_conventions(f.engine)) s.engine = *e;
  s.idle_timeout_s = f.idle_timeout_ms / 1000.0;
  s.pacing_margin_s = f.pacing_margin_ms >= 0 ? f.pacing_margin_ms / 1000.0 : -1.0;
  s.layout = core::HitLayout{static_cast<std::uint8_t>(std::clamp(f.rays_per_beam, 1, 12)),
                             static_cast<std::uint8_t>(std::clamp(f.segments_per_path, 1, 16))};
  s.metadata_out = f.metadata_out;
  s.calibration_out = f.calibration_out;
  s.firetimes_out = f.firetimes_out;
  if (!f.firetimes_out.empty() && s.model != nullptr) {
    const std::string none = core::family_of(*s.model).no_firetimes_file(*s.model);
    if (!none.empty()) bad("firetimes_out", f.firetimes_out, "none for " + f.model + ": " + none);
  }
  read_sensor_address(f, s, bad);
  read_allow_list(f, s, bad);
  s.pipeline.seed = f.seed;
  s.pipeline.sensor_index = s.sensor_id;
  s.identity = identity_for(f.seed, s.sensor_id);
  const auto ipv4 = [](const std::string& text) -> std::uint32_t {
    boost::system::error_code ec;
    const auto a = boost::asio::ip::make_address_v4(text, ec);
    return ec ? 0 : a.to_uint();
  };
  s.identity.address = ipv4(s.sensor_ip);
  s.identity.destination = ipv4(s.out.host);
  s.identity.data_port = s.out.port;
  s.identity.telemetry_port = s.telemetry.port;
}

std::optional<std::string> resolve_host(Endpoint& e) {
  boost::system::error_code ec;
  boost::asio::ip::make_address_v4(e.host, ec);
  if (!ec) return std::nullopt;  // already an address
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(e.host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) return std::string(gai_strerror(rc));
  char text[INET_ADDRSTRLEN] = {};
  // getaddrinfo hands back the sockaddr it was asked for (AF_INET).
  const auto* in = reinterpret_cast<const sockaddr_in*>(found->ai_addr);  // NOLINT
  inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  freeaddrinfo(found);
  e.host = text;
  return std::nullopt;
}

std::optional<Endpoint> parse_endpoint(const std::string& text) {
  constexpr std::string_view kScheme = "udp://";
  if (text.rfind(kScheme, 0) != 0) return std::nullopt;
  const std::string rest = text.substr(kScheme.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  int port = -1;
  const char* first = rest.data() + colon + 1;
  const char* last = rest.data() + rest.size();
  const auto [ptr, ec] = std::from_chars(first, last, port);
  if (ec != std::errc() || ptr != last || port < 0 || port > 65535) return std::nullopt;
  return Endpoint{rest.substr(0, colon), static_cast<std::uint16_t>(port)};
}

SensorSettings sensor_from_flags(const SensorFlags& flags) {
  Problems problems;
  SensorSettings s;
  build_sensor(flags, "--", s, problems);
  if (!problems.empty()) raise(problems, "command line");
  return s;
}

}  // namespace lidaremu::daemon
