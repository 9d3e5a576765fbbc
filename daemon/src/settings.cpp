#include "lidaremu/daemon/settings.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <boost/asio/ip/address_v4.hpp>
#include <cctype>
#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

namespace lidaremu::daemon {
namespace {

using Problems = std::vector<std::string>;

[[noreturn]] void raise(const Problems& problems, const std::string& source) {
  std::string msg = source + ": " + std::to_string(problems.size()) + " problem(s):";
  for (const auto& p : problems) msg += "\n  " + p;
  throw SettingsError(msg);
}

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
  boost::system::error_code bad;
  boost::asio::ip::make_address_v4(text.substr(0, colon), bad);
  if (bad) return std::nullopt;
  return std::pair{text.substr(0, colon), static_cast<std::uint16_t>(port)};
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
  if (d.foxglove != "off" && !parse_http_address(d.foxglove)) {
    problems.push_back(at + "foxglove = '" + d.foxglove + "': expected HOST:PORT or \"off\"");
  }
  if (!parse_export_formats(d.export_formats)) {
    problems.push_back(at + "export_formats = '" + d.export_formats +
                       "': expected a comma-separated list of pcd, ply, bin");
  }
  if (d.export_every < 1 || d.export_every > 1'000'000) {
    problems.push_back(at + "export_every = " + std::to_string(d.export_every) +
                       ": expected 1..1000000 (frames between exports)");
  }
  if (d.export_frames < 1 || d.export_frames > 100'000) {
    problems.push_back(at + "export_frames = " + std::to_string(d.export_frames) +
                       ": expected 1..100000 (frames written per sensor)");
  }
  static constexpr std::array<std::string_view, 7> kLevels{"trace", "debug",    "info", "warn",
                                                           "error", "critical", "off"};
  if (std::find(kLevels.begin(), kLevels.end(), d.log_level) == kLevels.end()) {
    problems.push_back(at + "log_level = '" + d.log_level +
                       "': expected trace|debug|info|warn|error|critical|off");
  }
  // A run of up to ten years; counters at most every 0.1 s (a shorter interval is a log storm).
  const bool flags = at == "--";  // the flags' names differ from the keys'
  if (!(d.duration_s >= 0 && d.duration_s <= 3.2e8)) {
    problems.push_back(at + (flags ? "duration" : "duration_s") + " = " +
                       std::to_string(d.duration_s) +
                       ": expected 0 (run until stopped) .. 3.2e8 seconds");
  }
  if (!(d.stats_interval_s == 0 || (d.stats_interval_s >= 0.1 && d.stats_interval_s <= 86400))) {
    problems.push_back(at + (flags ? "stats-interval" : "stats_interval_s") + " = " +
                       std::to_string(d.stats_interval_s) +
                       ": expected 0 (never) or 0.1 .. 86400 seconds");
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

std::optional<core::EchoMode> echo_mode(const std::string& name) {
  static const std::map<std::string, core::EchoMode> modes{
      {"strongest", core::EchoMode::kStrongest},
      {"last", core::EchoMode::kLast},
      {"first", core::EchoMode::kFirst},
      {"dual", core::EchoMode::kDual},
      {"triple", core::EchoMode::kTriple}};
  const auto it = modes.find(name);
  return it == modes.end() ? std::nullopt : std::optional(it->second);
}

using BadValue = std::function<void(const std::string&, const std::string&, const std::string&)>;

// Ouster: profile (which fixes the echoes reported), azimuth window, timestamp mode.
void read_ouster_output(const SensorFlags& f, bool velodyne, SensorSettings& s,
                        const BadValue& bad) {
  static const std::map<std::string, core::OusterProfile> profiles{
      {"legacy", core::OusterProfile::kLegacy},
      {"rng19", core::OusterProfile::kRng19},
      {"rng19-dual", core::OusterProfile::kRng19Dual},
      {"rng15", core::OusterProfile::kRng15}};
  const auto profile = profiles.find(f.profile);
  if (profile == profiles.end()) {
    bad("profile", f.profile, "legacy|rng19|rng19-dual|rng15");
  } else if (velodyne && profile->second != core::OusterProfile::kLegacy) {
    bad("profile", f.profile, "nothing for a Velodyne model (Ouster only)");
  } else if (!velodyne) {
    s.ouster.profile = profile->second;
    s.pipeline.echoes = core::ouster_echoes(profile->second);
  }
  if (f.timestamp_mode == "internal-osc" || f.timestamp_mode == "TIME_FROM_INTERNAL_OSC") {
    s.ouster.timestamp_mode = core::OusterTimestampMode::kInternalOsc;
  } else if (f.timestamp_mode == "ptp" || f.timestamp_mode == "TIME_FROM_PTP_1588") {
    s.ouster.timestamp_mode = core::OusterTimestampMode::kPtp;
  } else {
    bad("timestamp_mode", f.timestamp_mode, "internal-osc|ptp");
  }
  if (!f.azimuth_window.empty()) {
    unsigned start = 0, end = 0;
    char comma = 0;
    std::istringstream in(f.azimuth_window);
    if (velodyne) {
      bad("azimuth_window", f.azimuth_window, "nothing for a Velodyne model (Ouster only)");
    } else if (!(in >> start >> comma >> end) || comma != ',' || !in.eof() || start > 360000 ||
               end > 360000) {
      bad("azimuth_window", f.azimuth_window,
          "START,END in millidegrees, each 0..360000 (START > END wraps through 0)");
    } else {
      s.ouster.azimuth_window_start_mdeg = start;
      s.ouster.azimuth_window_end_mdeg = end;
    }
  }
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
  s.api_port = f.api_port < 0 ? 80 : f.api_port;
  if (f.api_port > 65535) bad("api_port", std::to_string(f.api_port), "0..65535 (0: no web API)");
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
                        const BadValue& bad, Problems& problems) {
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
      bad("physics", f.physics, "ideal|default");
      return;
    }
    if (f.surface == "brdf" || f.surface == "ipsp") {
      core::use_stage(chain, "surface." + f.surface);
    } else {
      bad("surface", f.surface, "brdf|ipsp");
    }
    if (f.detection == "threshold" || f.detection == "capability") {
      if (f.physics != "ideal") core::use_stage(chain, "detection." + f.detection);
    } else {
      bad("detection", f.detection, "threshold|capability");
    }
    if (f.surface != "brdf" && f.surface != "ipsp") return;
  }
  try {
    core::check_chain(chain);
    s.pipeline.stages = std::move(chain);
  } catch (const std::invalid_argument& e) {
    problems.push_back(at + (flags ? "physics-stages" : "physics_stages") + ": " + e.what());
  }
}

void build_sensor(const SensorFlags& f, const std::string& at, SensorSettings& s,
                  Problems& problems) {
  const bool flags = at == "--";
  auto bad = [&](const std::string& key, const std::string& value, const std::string& accepted) {
    std::string name = key;  // the flag's spelling on a command line, the key's in a file
    if (flags) std::replace(name.begin(), name.end(), '_', '-');
    problems.push_back(at + name + " = '" + value + "': expected " + accepted);
  };
  s.model = core::find_sensor_model(f.model);
  if (!s.model) {
    bad("model", f.model, core::sensor_model_names());
    return;
  }
  s.name = s.name.empty() ? std::string(s.model->name) + "-" + std::to_string(f.sensor_id) : s.name;
  const bool velodyne = s.model->family == core::SensorFamily::kVelodyne;
  if (velodyne) {
    if (!f.mode.empty()) bad("mode", f.mode, "no mode for a Velodyne model (use rpm)");
    const auto r =
        core::make_velodyne_scan(*s.model, f.rpm ? f.rpm : s.model->velodyne.default_rpm);
    if (!r.pattern)
      problems.push_back(at + "rpm: " + r.error);
    else
      s.pattern = *r.pattern;
  } else {
    if (f.rpm) bad("rpm", std::to_string(f.rpm), "no rpm for an Ouster model (use mode)");
    int columns = s.model->ouster.default_columns, fps = s.model->ouster.default_fps;
    if (!f.mode.empty()) {
      const auto x = f.mode.find('x');
      if (x == std::string::npos) {
        columns = fps = 0;
      } else {
        std::from_chars(f.mode.data(), f.mode.data() + x, columns);
        std::from_chars(f.mode.data() + x + 1, f.mode.data() + f.mode.size(), fps);
      }
    }
    const auto r = core::make_ouster_scan(*s.model, columns, fps);
    if (!r.pattern)
      problems.push_back(at + "mode: " + r.error);
    else
      s.pattern = *r.pattern;
  }
  if (f.sensor_id < 0 || f.sensor_id > 65535)
    bad("sensor_id", std::to_string(f.sensor_id), "0..65535");
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
  const std::uint16_t default_data = velodyne ? 2368 : 7502;
  const std::uint16_t default_telemetry = velodyne ? 8308 : 7503;
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

  if (f.hits_format == "framed")
    s.hits_format = HitsFormat::kFramed;
  else if (f.hits_format == "raw7")
    s.hits_format = HitsFormat::kRaw7;
  else if (f.hits_format == "raw8")
    s.hits_format = HitsFormat::kRaw8;
  else
    bad("hits_format", f.hits_format, "framed|raw7|raw8");

  if (f.pace == "realtime")
    s.pace = Pace::kRealtime;
  else if (f.pace == "afap")
    s.pace = Pace::kAfap;
  else
    bad("pace", f.pace, "realtime|afap");

  if (f.clock == "wall")
    s.clock = ClockSource::kWall;
  else if (f.clock == "sim")
    s.clock = ClockSource::kSim;
  else
    bad("clock", f.clock, "wall|sim");

  s.pipeline.params = core::default_physics_params(*s.model);
  read_physics_chain(f, at, s, bad, problems);
  if (auto e = echo_mode(f.echoes)) {
    s.pipeline.echoes = *e;
    if (velodyne && !core::family_supports(s.model->family, *e)) {
      bad("return_mode", f.echoes, "strongest|last|dual (what Velodyne packets carry)");
    } else if (velodyne && *e == core::EchoMode::kDual && !s.model->velodyne.dual_return) {
      bad("return_mode", f.echoes, "strongest|last (no dual-return layout for this model)");
    }
    if (!velodyne && *e != core::EchoMode::kStrongest) {
      bad("return_mode", f.echoes,
          "strongest for Ouster (the rng19-dual profile reports the two strongest)");
    }
  } else {
    bad("return_mode", f.echoes, "strongest|last|dual");
  }
  read_ouster_output(f, velodyne, s, bad);
  auto& weather = s.pipeline.params.weather;
  if (!(f.rain_mm_per_h >= 0 && f.rain_mm_per_h <= 500))
    bad("rain", std::to_string(f.rain_mm_per_h), "0..500 mm/h");
  weather.rain_mm_per_h = f.rain_mm_per_h;
  if (!(f.visibility_m >= 10 && f.visibility_m <= 1e6))
    bad("visibility", std::to_string(f.visibility_m), "10..1000000 m");
  weather.visibility_m = f.visibility_m;
  if (!(f.sun_irradiance_w_per_m2 >= 0 && f.sun_irradiance_w_per_m2 <= 2000))
    bad("sun", std::to_string(f.sun_irradiance_w_per_m2), "0..2000 W/m^2");
  weather.sun_irradiance_w_per_m2 = f.sun_irradiance_w_per_m2;

  if (auto e = protocol::engine_conventions(f.engine))
    s.engine = *e;
  else
    bad("engine", f.engine, "ros|unreal|unity");

  if (f.idle_timeout_ms < 10 || f.idle_timeout_ms > 60000) {
    bad("idle_timeout_ms", std::to_string(f.idle_timeout_ms), "10..60000");
  }
  s.idle_timeout_s = f.idle_timeout_ms / 1000.0;
  if (f.pacing_margin_ms != -1 && (f.pacing_margin_ms < 0 || f.pacing_margin_ms > 1000)) {
    bad("pacing_margin_ms", std::to_string(f.pacing_margin_ms), "0..1000");
  }
  s.pacing_margin_s =
      f.pacing_margin_ms >= 0 ? f.pacing_margin_ms / 1000.0 : s.pattern.frame_period_s;
  if (f.rays_per_beam < 1 || f.rays_per_beam > 12)
    bad("rays_per_beam", std::to_string(f.rays_per_beam), "1..12 (centre ray first)");
  if (f.segments_per_path < 1 || f.segments_per_path > 16)
    bad("segments_per_path", std::to_string(f.segments_per_path), "1..16");
  s.layout = core::HitLayout{static_cast<std::uint8_t>(std::clamp(f.rays_per_beam, 1, 12)),
                             static_cast<std::uint8_t>(std::clamp(f.segments_per_path, 1, 16))};
  if (!f.metadata_out.empty() && velodyne) {
    bad("metadata_out", f.metadata_out, "nothing for a Velodyne model (Ouster only)");
  }
  s.metadata_out = f.metadata_out;
  read_sensor_address(f, s, bad);
  read_allow_list(f, s, bad);
  s.pipeline.seed = f.seed;
  s.pipeline.sensor_index = s.sensor_id;
  s.identity = identity_for(f.seed, s.sensor_id);
}

// Reads one typed value into `out`, reporting a wrong type with its key path.
template <typename T>
void read_value(const toml::node& node, const std::string& path, T& out, Problems& problems) {
  if (auto v = node.value<T>()) {
    out = *v;
  } else {
    problems.push_back(path + ": wrong type (expected " +
                       (std::is_same_v<T, std::string> ? "a string" : "a number") + ")");
  }
}

// Applies a table of numeric keys to the fields named in `keys`, each with its accepted range.
using NumericKeys = std::map<std::string, std::pair<double*, std::pair<double, double>>>;
void read_numbers(const toml::table& t, const std::string& at, const NumericKeys& keys,
                  Problems& problems) {
  for (const auto& [key, node] : t) {
    const std::string path = at + std::string(key.str());
    const auto it = keys.find(std::string(key.str()));
    if (it == keys.end()) {
      std::string accepted;
      for (const auto& [k, v] : keys) accepted += (accepted.empty() ? "" : ", ") + k;
      problems.push_back(path + ": unknown key (accepted: " + accepted + ")");
      continue;
    }
    double v = 0;
    if (!node.value<double>()) {
      problems.push_back(path + ": wrong type (expected a number)");
      continue;
    }
    v = *node.value<double>();
    const auto [lo, hi] = it->second.second;
    if (!(v >= lo && v <= hi)) {
      problems.push_back(path + " = " + std::to_string(v) + ": expected " + std::to_string(lo) +
                         " .. " + std::to_string(hi));
    } else {
      *it->second.first = v;
    }
  }
}

void read_physics_params(const toml::table& t, const std::string& at, core::PhysicsParams& p,
                         Problems& problems) {
  const NumericKeys keys{
      {"peak_power_w", {&p.peak_power_w, {1e-3, 1e4}}},
      {"detector_efficiency", {&p.detector_efficiency, {1e-9, 1}}},
      {"nep_w_per_sqrt_hz", {&p.nep_w_per_sqrt_hz, {1e-15, 1e-6}}},
      {"bandwidth_hz", {&p.bandwidth_hz, {1e6, 1e11}}},
      {"wavelength_nm", {&p.wavelength_nm, {400, 2000}}},
      {"quantum_efficiency", {&p.receiver.quantum_efficiency, {1e-3, 1}}},
      {"rx_aperture_m", {&p.receiver.aperture_m, {1e-4, 0.5}}},
      {"rx_fov_rad", {&p.receiver.fov_rad, {1e-5, 0.1}}},
      {"optical_filter_nm", {&p.receiver.filter_nm, {0.1, 200}}},
      {"optics_efficiency", {&p.receiver.optics_efficiency, {1e-3, 1}}},
      {"ambient_knee_w", {&p.receiver.knee_w, {1e-15, 1e-3}}},
      {"datasheet_sun_w_per_m2", {&p.datasheet_sun_w_per_m2, {0, 2000}}},
      {"datasheet_range_m", {&p.datasheet_range_m, {1, 2000}}},
      {"datasheet_reflectivity", {&p.datasheet_reflectivity, {0.01, 1}}},
      {"datasheet_detection_probability", {&p.datasheet_detection_probability, {0.01, 0.99}}},
      {"beam_exit_radius_m", {&p.beam_exit_radius_m, {0, 0.1}}},
      {"beam_divergence_rad", {&p.beam_divergence_rad, {0, 0.05}}},
      {"bistatic_baseline_m", {&p.optics.baseline_m, {0, 1}}},
      {"full_overlap_m", {&p.optics.full_overlap_m, {0, 500}}},
      {"tx_aperture_radius_m", {&p.optics.tx_aperture_radius_m, {0, 0.1}}},
      {"rx_aperture_radius_m", {&p.optics.rx_aperture_radius_m, {0, 0.1}}},
      {"tx_opening_rad", {&p.optics.tx_opening_rad, {1e-5, 0.5}}},
      {"rx_opening_rad", {&p.optics.rx_opening_rad, {1e-5, 0.5}}},
      {"pulse_half_width_ns", {&p.pulse_half_width_ns, {0.1, 100}}},
      {"range_noise_sigma_m", {&p.range_noise_sigma_m, {0, 1}}},
      {"range_noise_pulse_m", {&p.range_noise_pulse_m, {0, 10}}},
      {"range_resolution_m", {&p.range_resolution_m, {0.001, 5}}},
      {"echo_min_separation_m", {&p.echo_min_separation_m, {0, 50}}},
      {"false_alarm_rate", {&p.false_alarm_rate, {1e-9, 0.1}}},
      {"range_gate_m", {&p.range_gate_m, {1, 2000}}},
      {"threshold_sigmas", {&p.threshold_sigmas_set, {0, 20}}},
      {"capability_max_range_m", {&p.capability_max_range_m, {1, 2000}}},
      {"capability_max_reflectance_limit", {&p.capability_max_reflectance_limit, {0.01, 10}}},
      {"sun_elevation_deg", {&p.sun_elevation_deg, {-90, 90}}},
      {"sun_azimuth_deg", {&p.sun_azimuth_deg, {-360, 360}}},
      {"rain_drop_reflectance", {&p.rain_drop_reflectance, {0, 1}}},
      {"rain_min_range_m", {&p.rain_min_range_m, {0.05, 100}}},
      {"rain_range_jitter_m_per_drop", {&p.rain_range_jitter_m_per_drop, {0, 0.01}}},
      {"bloom_core_sigma_h_deg", {&p.bloom_core_sigma_h_deg, {1e-4, 5}}},
      {"bloom_core_sigma_v_deg", {&p.bloom_core_sigma_v_deg, {1e-4, 5}}},
      {"bloom_skirt_level", {&p.bloom_skirt_level, {0, 0.5}}},
      {"bloom_skirt_decay_deg", {&p.bloom_skirt_decay_deg, {1e-3, 10}}},
      {"bloom_extent_deg", {&p.bloom_extent_deg, {0, 20}}},
      {"multibounce_resolution_deg", {&p.multibounce_resolution_deg, {0, 10}}},
  };
  read_numbers(t, at, keys, problems);
}

// `physics_stages = ["geometry", ...]`: the chain, stage by stage (names checked when the
// sensor is built).
void read_stage_list(const toml::node& n, const std::string& path, SensorFlags& f,
                     Problems& problems) {
  const auto* a = n.as_array();
  if (!a) {
    problems.push_back(path +
                       ": must be a list of stage names, e.g. [\"geometry\", \"surface.brdf\", "
                       "\"detection.threshold\", \"echoes\", \"report\"] (the table of "
                       "switches of earlier versions is gone)");
    return;
  }
  for (const auto& item : *a) {
    if (auto v = item.value<std::string>()) {
      f.physics_stages.push_back(*v);
    } else {
      problems.push_back(path + ": must be a list of stage names (strings)");
      return;
    }
  }
  if (f.physics_stages.empty()) problems.push_back(path + ": lists no stage");
}

void read_weather(const toml::table& t, const std::string& at, SensorFlags& f, Problems& problems) {
  const NumericKeys keys{{"rain_mm_per_h", {&f.rain_mm_per_h, {0, 500}}},
                         {"visibility_m", {&f.visibility_m, {10, 1e6}}},
                         {"sun_irradiance_w_per_m2", {&f.sun_irradiance_w_per_m2, {0, 2000}}}};
  read_numbers(t, at, keys, problems);
}

}  // namespace

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

DaemonSettings load_config_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw SettingsError(file.string() + ": cannot read the config file");
  std::stringstream text;
  text << in.rdbuf();
  return load_config_text(text.str(), file.string());
}

DaemonSettings load_config_text(const std::string& text, const std::string& source_name) {
  toml::table doc;
  try {
    doc = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw SettingsError(source_name + ":" + std::to_string(e.source().begin.line) +
                        ": not valid TOML: " + std::string(e.description()));
  }
  Problems problems;
  DaemonSettings d;
  for (const auto& [key, node] : doc) {
    const std::string k(key.str());
    if (k == "daemon") {
      const toml::table* t = node.as_table();
      if (!t) {
        problems.push_back("daemon: must be a table");
        continue;
      }
      for (const auto& [dk, dn] : *t) {
        const std::string path = "daemon." + std::string(dk.str());
        if (dk.str() == "threads")
          read_value(dn, path, d.threads, problems);
        else if (dk.str() == "log_level")
          read_value(dn, path, d.log_level, problems);
        else if (dk.str() == "materials") {
          std::string m;
          read_value(dn, path, m, problems);
          d.materials = m;
        } else if (dk.str() == "duration_s")
          read_value(dn, path, d.duration_s, problems);
        else if (dk.str() == "stats_interval_s")
          read_value(dn, path, d.stats_interval_s, problems);
        else if (dk.str() == "http") {
          read_value(dn, path, d.http, problems);
          d.http_explicit = true;
          if (d.http != "off" && !parse_http_address(d.http)) {
            problems.push_back(path + " = '" + d.http + "': expected HOST:PORT or \"off\"");
          }
        } else if (dk.str() == "http_token")
          read_value(dn, path, d.http_token, problems);
        else if (dk.str() == "foxglove") {
          read_value(dn, path, d.foxglove, problems);
          d.foxglove_explicit = true;
        } else if (dk.str() == "export_dir") {
          std::string dir;
          read_value(dn, path, dir, problems);
          d.export_dir = dir;
        } else if (dk.str() == "export_formats")
          read_value(dn, path, d.export_formats, problems);
        else if (dk.str() == "export_every")
          read_value(dn, path, d.export_every, problems);
        else if (dk.str() == "export_frames")
          read_value(dn, path, d.export_frames, problems);
        else if (dk.str() == "record") {
          std::string file;
          read_value(dn, path, file, problems);
          d.record = file;
        } else if (dk.str() == "pcap") {
          std::string file;
          read_value(dn, path, file, problems);
          d.pcap = file;
        } else
          problems.push_back(path +
                             ": unknown key (accepted: threads, log_level, materials, duration_s, "
                             "stats_interval_s, pcap, record, http, http_token, foxglove, "
                             "export_dir, export_formats, export_every, export_frames)");
      }
      for (auto& p : check_daemon_settings(d, "daemon.")) problems.push_back(std::move(p));
    } else if (k != "sensor") {
      problems.push_back(k + ": unknown key (accepted: [daemon], [[sensor]])");
    }
  }
  const toml::array* sensors = doc["sensor"].as_array();
  if (!sensors || sensors->empty())
    problems.push_back("sensor: at least one [[sensor]] is required");
  for (std::size_t i = 0; sensors && i < sensors->size(); ++i) {
    const std::string at = "sensor[" + std::to_string(i) + "].";
    const toml::table* t = (*sensors)[i].as_table();
    if (!t) {
      problems.push_back(at + ": must be a table");
      continue;
    }
    SensorFlags f;
    SensorSettings s;
    std::int64_t seed = 0;
    std::pair<const toml::table*, std::string> params_table{nullptr, ""};
    const std::map<std::string, std::function<void(const toml::node&, const std::string&)>> keys{
        {"name",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, s.name, problems); }},
        {"model",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.model, problems); }},
        {"hits",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.hits, problems); }},
        {"hits_format", [&](const toml::node& n,
                            const std::string& p) { read_value(n, p, f.hits_format, problems); }},
        {"out",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.out, problems); }},
        {"telemetry", [&](const toml::node& n,
                          const std::string& p) { read_value(n, p, f.telemetry, problems); }},
        {"pace",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.pace, problems); }},
        {"seed",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, seed, problems); }},
        {"metadata_out", [&](const toml::node& n,
                             const std::string& p) { read_value(n, p, f.metadata_out, problems); }},
        {"physics",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.physics, problems); }},
        {"rpm",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.rpm, problems); }},
        {"mode",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.mode, problems); }},
        {"engine",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.engine, problems); }},
        {"clock",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.clock, problems); }},
        {"sensor_id", [&](const toml::node& n,
                          const std::string& p) { read_value(n, p, f.sensor_id, problems); }},
        {"idle_timeout_ms",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.idle_timeout_ms, problems);
         }},
        {"pacing_margin_ms",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.pacing_margin_ms, problems);
         }},
        {"return_mode",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.echoes, problems); }},
        {"profile",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.profile, problems); }},
        {"timestamp_mode",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.timestamp_mode, problems);
         }},
        {"sensor_ip", [&](const toml::node& n,
                          const std::string& p) { read_value(n, p, f.sensor_ip, problems); }},
        {"allow",
         [&](const toml::node& n, const std::string& p) {
           const auto* a = n.as_array();
           if (!a) {
             problems.push_back(p + ": must be an array of IPv4 addresses");
             return;
           }
           for (const auto& item : *a) {
             if (auto v = item.value<std::string>()) {
               f.allow.push_back(*v);
             } else {
               problems.push_back(p + ": must be an array of IPv4 addresses");
             }
           }
         }},
        {"api_port", [&](const toml::node& n,
                         const std::string& p) { read_value(n, p, f.api_port, problems); }},
        {"azimuth_window",
         [&](const toml::node& n, const std::string& p) {
           const auto* a = n.as_array();
           if (!a || a->size() != 2 || !(*a)[0].value<std::int64_t>() ||
               !(*a)[1].value<std::int64_t>()) {
             problems.push_back(p + ": must be [START, END] in millidegrees");
             return;
           }
           f.azimuth_window = std::to_string(*(*a)[0].value<std::int64_t>()) + "," +
                              std::to_string(*(*a)[1].value<std::int64_t>());
         }},
        {"rays_per_beam",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.rays_per_beam, problems);
         }},
        {"segments_per_path",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.segments_per_path, problems);
         }},
        {"physics_params",
         [&](const toml::node& n, const std::string& p) {
           // Applied after the model's defaults, below.
           if (const auto* pt = n.as_table())
             params_table = {pt, p + "."};
           else
             problems.push_back(p + ": must be a table");
         }},
        {"physics_stages",
         [&](const toml::node& n, const std::string& p) { read_stage_list(n, p, f, problems); }},
        {"surface",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.surface, problems); }},
        {"detection", [&](const toml::node& n,
                          const std::string& p) { read_value(n, p, f.detection, problems); }},
        {"weather",
         [&](const toml::node& n, const std::string& p) {
           if (const auto* pt = n.as_table())
             read_weather(*pt, p + ".", f, problems);
           else
             problems.push_back(p + ": must be a table");
         }},
    };
    for (const auto& [key, node] : *t) {
      const std::string k(key.str());
      const auto it = keys.find(k);
      if (it == keys.end()) {
        std::string accepted;
        for (const auto& [name, fn] : keys) accepted += (accepted.empty() ? "" : ", ") + name;
        problems.push_back(at + k + ": unknown key (accepted: " + accepted + ")");
        continue;
      }
      it->second(node, at + k);
    }
    if (seed < 0) problems.push_back(at + "seed: must not be negative");
    f.seed = static_cast<std::uint64_t>(seed);
    build_sensor(f, at, s, problems);
    if (!valid_sensor_name(s.name)) {
      problems.push_back(
          at + "name = '" + s.name +
          "': expected 1-64 letters, digits, '-', '_' or '.', not starting with '.'");
    }
    if (params_table.first) {
      const core::Weather weather = s.pipeline.params.weather;
      read_physics_params(*params_table.first, params_table.second, s.pipeline.params, problems);
      s.pipeline.params.weather = weather;
    }
    d.sensors.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < d.sensors.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& a = d.sensors[i];
      const auto& b = d.sensors[j];
      if (a.hits.port != 0 && a.hits.host == b.hits.host && a.hits.port == b.hits.port) {
        problems.push_back("sensor[" + std::to_string(i) + "].hits: " + a.hits.to_string() +
                           " is already used by sensor[" + std::to_string(j) + "]");
      }
    }
  }
  if (!problems.empty()) raise(problems, source_name);
  return d;
}

}  // namespace lidaremu::daemon
