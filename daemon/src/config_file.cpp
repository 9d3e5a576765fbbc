// The TOML config file: its [daemon] table and every [[sensor]], each key read into the flags a
// sensor is built from, every problem collected with its key path.
#include <toml++/toml.h>

#include <functional>
#include <map>
#include <string>

#include "lidaremu/core/config_text.hpp"
#include "lidaremu/daemon/settings.hpp"
#include "settings_build.hpp"

namespace lidaremu::daemon {
namespace {

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

// An array of strings.
void read_strings(const toml::node& node, const std::string& path, std::vector<std::string>& out,
                  Problems& problems) {
  const auto* a = node.as_array();
  if (!a) {
    problems.push_back(path + ": must be an array of strings");
    return;
  }
  for (const auto& item : *a) {
    if (auto v = item.value<std::string>()) {
      out.push_back(*v);
    } else {
      problems.push_back(path + ": must be an array of strings");
      return;
    }
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

DaemonSettings load_config_file(const std::filesystem::path& file) {
  const core::ConfigText read = core::read_config_file(file);
  if (read.error) throw SettingsError(*read.error);
  return load_config_text(read.text, file.string());
}

DaemonSettings load_config_text(const std::string& text, const std::string& source_name) {
  if (auto deep = core::find_too_deep_toml(text)) {
    throw SettingsError(source_name + ":" + *deep);
  }
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
            problems.push_back(
                path + " = '" + d.http +
                "': expected HOST:PORT (an IPv4 address or a host name that resolves) or \"off\"");
          }
        } else if (dk.str() == "http_token")
          read_value(dn, path, d.http_token, problems);
        else if (dk.str() == "http_allowed_hosts")
          read_strings(dn, path, d.http_allowed_hosts, problems);
        else if (dk.str() == "http_allowed_origins")
          read_strings(dn, path, d.http_allowed_origins, problems);
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
          problems.push_back(
              path +
              ": unknown key (accepted: threads, log_level, materials, duration_s, "
              "stats_interval_s, pcap, record, http, http_token, http_allowed_hosts, "
              "http_allowed_origins, foxglove, "
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
        {"calibration_out",
         [&](const toml::node& n, const std::string& p) {
           read_value(n, p, f.calibration_out, problems);
         }},
        {"physics",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.physics, problems); }},
        {"rpm",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.rpm, problems); }},
        {"mode",
         [&](const toml::node& n, const std::string& p) { read_value(n, p, f.mode, problems); }},
        {"scan_pattern", [&](const toml::node& n,
                             const std::string& p) { read_value(n, p, f.scan_pattern, problems); }},
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
