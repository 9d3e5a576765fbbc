#include "lidaremu/daemon/ops/control_api.hpp"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/daemon/config/settings_schema.hpp"
#include "lidaremu/daemon/net/json_reply.hpp"
#include "lidaremu/daemon/ops/metrics.hpp"
#include "lidaremu/daemon/view/web_assets.hpp"

namespace lidaremu::daemon {
namespace {
using nlohmann::json;
using nlohmann::ordered_json;

// "application/json", with or without parameters ("; charset=utf-8"), in any case.
bool is_json_type(std::string_view content_type) {
  const std::string_view type = content_type.substr(0, content_type.find(';'));
  constexpr std::string_view kJson = "application/json";
  return type.size() >= kJson.size() &&
         std::equal(
             kJson.begin(), kJson.end(), type.begin(),
             [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }) &&
         type.find_first_not_of(' ', kJson.size()) == std::string_view::npos;
}

ordered_json weather_json(const core::Weather& w) {
  return {{"rain_mm_per_h", w.rain_mm_per_h},
          {"visibility_m", w.visibility_m},
          {"sun_irradiance_w_per_m2", w.sun_irradiance_w_per_m2}};
}

ordered_json sensor_json(const EmulatedSensor& sensor) {
  const SensorRuntime& r = sensor.runtime();
  const SensorSettings& s = r.settings();
  const SensorCounters& c = r.counters();
  ordered_json j{{"name", s.name},
                 {"model", std::string(s.model->name)},
                 {"columns_per_frame", s.pattern.columns_per_frame},
                 {"channels", s.model->channels},
                 {"engine", s.engine.name},
                 {"frames_per_second", std::lround(1.0 / s.pattern.frame_period_s)},
                 {"hits", r.bound_hits().to_string()},
                 {"out", s.out.to_string()},
                 {"telemetry", s.telemetry.to_string()},
                 {"sensor_ip", s.sensor_ip},
                 {"paused", r.paused()},
                 {"weather", weather_json(r.weather())},
                 {"datagrams_in", c.datagrams_in.load()},
                 {"frames_processed", c.frames_processed.load()},
                 {"frames_dropped", c.frames_dropped.load()},
                 {"packets_out", c.packets_out.load()},
                 {"memory_estimate_mib", std::lround(sensor.memory_estimate_bytes() / 1048576.0)}};
  // The scan's setting: an Ouster's profile (its mode fixes the rest), a spinning head's rate.
  if (setting_by_key(SettingScope::kSensor, "profile")->families.contains(s.model->family)) {
    j["profile"] = core::ouster::profile_name(s.ouster.profile);
  } else {
    j["rpm"] = std::lround(s.pattern.rpm);
  }
  return j;
}

// The beams an engine casts, so that an engine with no lidaremu library (a GDScript node, a
// shader) casts the very rays the daemon's beam search expects: for each column, each channel,
// the beam's origin and unit direction as six little-endian float32, in the sensor's engine
// frame and units.
std::string beam_table_bytes(const core::ScanPattern& pattern,
                             const protocol::EngineConventions& engine) {
  const core::BeamGeometry geometry(pattern);
  const auto columns = static_cast<std::uint32_t>(pattern.columns_per_frame);
  const auto channels = static_cast<std::uint16_t>(pattern.model->channels);
  constexpr std::size_t kBytesPerBeam = 6 * sizeof(float);
  std::vector<std::uint8_t> out(std::size_t{columns} * channels * kBytesPerBeam);
  std::size_t at = 0;
  for (std::uint32_t c = 0; c < columns; ++c) {
    for (std::uint16_t ch = 0; ch < channels; ++ch) {
      const core::BeamRay ray = geometry.ray(c, ch);
      const Eigen::Vector3d origin = engine.engine_point(ray.origin);
      const Eigen::Vector3d direction = engine.engine_direction(ray.direction);
      for (const double v :
           {origin.x(), origin.y(), origin.z(), direction.x(), direction.y(), direction.z()}) {
        core::store_le(std::span(out), at, static_cast<float>(v));
        at += sizeof(float);
      }
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace

ControlApi::ControlApi(std::vector<std::unique_ptr<EmulatedSensor>>& sensors, std::string token,
                       const LiveView* view, BrowserPolicy browsers,
                       std::vector<const CaptureFile*> captures)
    : sensors_(sensors),
      token_(std::move(token)),
      view_(view),
      browsers_(std::move(browsers)),
      captures_(std::move(captures)) {}

HttpResponse ControlApi::view_page(const HttpRequest& request) const {
  if (request.method != "GET") return json_error(405, "GET");
  if (request.path == "/view/config.json") {
    // The page connects to the WebSocket on the host it was loaded from.
    return json_reply({{"port", view_ ? view_->foxglove_port() : 0}});
  }
  // The page's URLs are absolute: it loads the same from /, /view and /view/.
  const std::string path = request.path == "/" || request.path == "/view" ? "/view/" : request.path;
  for (const auto& asset : web_assets()) {
    if (asset.url == path) {
      return {200, std::string(asset.content_type), std::string(asset.bytes)};
    }
  }
  return json_error(404, "not found: " + request.path + " (the live view is at /view/)");
}

EmulatedSensor* ControlApi::find(const std::string& name) const {
  for (const auto& s : sensors_) {
    if (s->runtime().settings().name == name) return s.get();
  }
  return nullptr;
}

std::string ControlApi::metrics() const {
  std::vector<SensorSnapshot> snapshots;
  for (const auto& s : sensors_) snapshots.push_back(s->snapshot());
  const FoxgloveServer* f = view_ ? view_->foxglove() : nullptr;
  std::ostringstream out;
  write_exposition(out, snapshots, f ? &f->counters() : nullptr, true, captures_);
  return out.str();
}

HttpResponse ControlApi::weather(EmulatedSensor& sensor, const HttpRequest& request) {
  SensorRuntime& runtime = sensor.runtime();
  if (request.method == "GET") return json_reply(weather_json(runtime.weather()));
  // PUT only: a browser sends a cross-origin PUT only after asking (a CORS preflight, which
  // is never granted here), where a POST of a form or text/plain goes out unasked.
  if (request.method != "PUT") return json_error(405, "GET or PUT");
  if (auto why = refuse_cross_site(request, browsers_)) return json_error(403, *why);
  if (!token_.empty() && request.authorization != "Bearer " + token_) {
    return json_error(401, "this endpoint changes state: send Authorization: Bearer <token>");
  }
  if (!is_json_type(request.content_type)) {
    return json_error(415, "send the body as Content-Type: application/json");
  }
  const json body = json::parse(request.body, nullptr, false);
  if (!body.is_object()) return json_error(400, "body must be a JSON object");
  core::Weather w = runtime.weather();
  // The keys and ranges of the settings schema's rows this API may change (weather.*).
  const auto row_of = [](const std::string& key) -> const SettingRow* {
    const SettingRow* row = setting_by_key(SettingScope::kSensor, "weather." + key);
    return row != nullptr && (row->change & kByControlApi) != 0 ? row : nullptr;
  };
  const auto number = [&](const char* key, double& out) -> std::string {
    if (!body.contains(key)) return {};
    const auto range = *row_of(key)->range;
    if (!body[key].is_number() || !(body[key].get<double>() >= range.lo) ||
        !(body[key].get<double>() <= range.hi)) {
      std::ostringstream why;
      why << key << ": expected a number in " << range.lo << ".." << range.hi;
      return why.str();
    }
    out = body[key].get<double>();
    return {};
  };
  for (const auto& [key, value] : body.items()) {
    if (row_of(key) == nullptr) {
      return json_error(400, "unknown key '" + key +
                                 "' (accepted: rain_mm_per_h, visibility_m, "
                                 "sun_irradiance_w_per_m2)");
    }
  }
  for (const auto& problem :
       {number("rain_mm_per_h", w.rain_mm_per_h), number("visibility_m", w.visibility_m),
        number("sun_irradiance_w_per_m2", w.sun_irradiance_w_per_m2)}) {
    if (!problem.empty()) return json_error(400, problem);
  }
  runtime.set_weather(w);
  return json_reply(weather_json(w));
}

HttpResponse ControlApi::beams(const EmulatedSensor& sensor, const HttpRequest& request) {
  if (request.method != "GET") return json_error(405, "GET");
  const SensorSettings& s = sensor.runtime().settings();
  // A table scan (Livox) points elsewhere every frame: no single table.
  if (s.pattern.table) {
    return json_error(409,
                      "a table scan's beams change every frame: send framed batches built "
                      "with the client library (docs/engines.md)");
  }
  // Tables of sensors a reload removed go; a sensor whose mode or conventions changed gets anew.
  std::erase_if(beam_tables_, [&](const auto& entry) { return find(entry.first) == nullptr; });
  BeamTable& table = beam_tables_[s.name];
  if (!table.body || !(table.pattern == s.pattern) || !(table.engine == s.engine)) {
    table = {s.pattern, s.engine,
             std::make_shared<const std::string>(beam_table_bytes(s.pattern, s.engine))};
  }
  return {200, "application/octet-stream", {}, table.body};
}

HttpResponse ControlApi::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/healthz") {
    // Healthy while every sensor's threads run (they only stop at shutdown). A capture that a
    // write error ended leaves the streams running: "degraded", still 200, so that a liveness
    // probe does not restart a daemon whose only fault is a full disk.
    ordered_json health{{"status", "ok"}, {"sensors", sensors_.size()}};
    if (!captures_.empty()) {
      ordered_json captures = ordered_json::array();
      for (const CaptureFile* c : captures_) {
        ordered_json entry{{"kind", c->kind()}, {"path", c->path().string()}};
        if (const int failed = c->error(); failed != 0) {
          entry["writing"] = false;
          entry["error"] = errno_name(failed) + ": " + std::strerror(failed);
          health["status"] = "degraded";
        } else {
          entry["writing"] = true;
        }
        captures.push_back(std::move(entry));
      }
      health["captures"] = std::move(captures);
    }
    return json_reply(health);
  }
  if (path == "/metrics") {
    if (request.method != "GET") return json_error(405, "GET");
    return {200, "text/plain; version=0.0.4", metrics()};
  }
  if (path == "/" || path == "/view" || path.starts_with("/view/")) return view_page(request);
  constexpr std::string_view kSensors = "/api/v1/sensors";
  if (path == kSensors) {
    ordered_json list = ordered_json::array();
    for (const auto& s : sensors_) list.push_back(sensor_json(*s));
    return json_reply(list);
  }
  if (path.starts_with(kSensors) && path.size() > kSensors.size() + 1) {
    std::string rest = path.substr(kSensors.size() + 1);
    const auto slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    EmulatedSensor* sensor = find(name);
    if (!sensor) return json_error(404, "no sensor named '" + name + "'");
    if (slash == std::string::npos) return json_reply(sensor_json(*sensor));
    if (rest.substr(slash) == "/weather") return weather(*sensor, request);
    if (rest.substr(slash) == "/beams") return beams(*sensor, request);
  }
  return json_error(404, "not found: " + path +
                             " (try /healthz, /metrics, /api/v1/sensors, "
                             "/api/v1/sensors/NAME/weather, /api/v1/sensors/NAME/beams, /view/)");
}

}  // namespace lidaremu::daemon
