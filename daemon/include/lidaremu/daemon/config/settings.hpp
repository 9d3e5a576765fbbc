#pragma once
// Everything the daemon is told, from flags or a TOML file, validated before anything starts.
// Loading collects every problem with its key path and refuses unknown keys.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lidaremu/core/cloud_export.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/protocol/engine_frame.hpp"

namespace lidaremu::daemon {

struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  [[nodiscard]] std::string to_string() const {
    return "udp://" + host + ":" + std::to_string(port);
  }
  bool operator==(const Endpoint&) const = default;
};
// "udp://HOST:PORT"; nothing on error (the caller names the key).
std::optional<Endpoint> parse_endpoint(const std::string& text);
// Replaces a host name by its IPv4 address (getaddrinfo); the reason when it does not resolve.
std::optional<std::string> resolve_host(Endpoint& e);

enum class HitsFormat : std::uint8_t { kFramed, kRaw7, kRaw8 };
enum class Pace : std::uint8_t { kRealtime, kAfap };
enum class ClockSource : std::uint8_t { kWall, kSim };

struct SensorSettings {
  std::string name;
  const core::SensorModel* model = nullptr;
  core::ScanPattern pattern;
  std::uint16_t sensor_id = 0;
  Endpoint hits{"127.0.0.1", 9870};
  HitsFormat hits_format = HitsFormat::kFramed;
  Endpoint out;
  Endpoint telemetry;
  // The ports packets leave from (0: any): a Livox unit's own, which SDK2 checks.
  std::uint16_t data_source_port = 0;
  std::uint16_t telemetry_source_port = 0;
  Pace pace = Pace::kRealtime;
  ClockSource clock = ClockSource::kWall;
  core::PipelineSettings pipeline;
  protocol::EngineConventions engine;
  std::filesystem::path metadata_out;
  std::filesystem::path calibration_out;  // Hesai: the angle calibration CSV
  std::filesystem::path firetimes_out;    // Hesai: the SDK's firetime file
  core::SensorIdentity identity;
  double idle_timeout_s = 0.2;
  // Real-time pacing schedules packets this long after the first one could leave, so that a
  // frame whose physics takes longer than the first one's still leaves on time. The end of a
  // Velodyne frame shares a packet with the next frame's start: a frame period covers it.
  // Negative: one frame period of the current scan pattern (which the sensor APIs may change).
  double pacing_margin_s = -1;
  [[nodiscard]] double pacing_margin() const {
    return pacing_margin_s >= 0 ? pacing_margin_s : pattern.frame_period_s;
  }
  int frame_buffers = 4;
  core::HitLayout layout;     // rays per beam and segments per path the engine sends
  core::OusterOutput ouster;  // profile, azimuth window, timestamp mode (Ouster only)
  // Senders whose datagrams are accepted (IPv4 addresses, host order); empty: anyone.
  std::vector<std::uint32_t> allowed_senders;
  // The emulated unit's own address: packets leave from it and its web API listens on it.
  // Empty: packets leave from any address (an --out beyond loopback) and no API runs.
  std::string sensor_ip;
  int api_port = 80;               // 0: no web API
  bool api_port_explicit = false;  // a failed bind is fatal only when asked for explicitly
  // Everything the file said (a reload keeps a running sensor whose table still says the same).
  bool operator==(const SensorSettings&) const = default;
};

struct DaemonSettings {
  std::vector<SensorSettings> sensors;
  std::filesystem::path materials;  // empty: the table the daemon ships
  int threads = 0;                  // TBB worker limit; 0 = all cores
  std::string log_level = "info";
  std::string simd_target = "best";  // the physics kernel's instruction set
  double duration_s = 0;             // stop by itself after this long (0 = run until signalled)
  double stats_interval_s = 0;       // log counters this often (0 = only at exit)
  double memory_limit_mib = 0;       // refuse a config estimated over this (0: cgroup, or RAM / 2)
  std::filesystem::path pcap;        // record every emitted packet here (empty: no capture)
  std::filesystem::path record;      // record every received datagram here (empty: none)
  // The daemon's own HTTP endpoint: HOST:PORT, or "off". A failed bind of the default only warns.
  std::string http = "127.0.0.1:9880";
  bool http_explicit = false;
  std::string http_token;  // required (Bearer) by requests that change state; empty: none
  // Who besides tools may change state, on this endpoint and the emulated sensor APIs
  // (browser_guard.hpp): host names clients use instead of an address, and web pages' origins.
  std::vector<std::string> http_allowed_hosts;
  std::vector<std::string> http_allowed_origins;
  // Where the unit APIs' clients may point streams besides loopback and themselves
  // (destination_policy.hpp): IPv4 ranges, "10.0.0.0/8" or an address.
  std::vector<std::string> allow_destinations;
  // The live view: decoded clouds on a Foxglove WebSocket, HOST:PORT or "off". A failed bind of
  // the default only warns.
  std::string foxglove = "127.0.0.1:8765";
  bool foxglove_explicit = false;
  // Decoded frames written to files: every `export_every`-th frame of each sensor, `export_frames`
  // of them, in each of `export_formats` (pcd, ply, bin). Empty dir: none.
  std::filesystem::path export_dir;
  std::string export_formats = "pcd";
  int export_every = 1;
  int export_frames = 1;
};
// "pcd,ply,bin" -> the formats; a message naming what is accepted otherwise.
std::optional<std::vector<core::CloudFormat>> parse_export_formats(const std::string& text);
// Every [daemon] problem of these fields (export, Foxglove address), one per line.
std::vector<std::string> check_daemon_settings(const DaemonSettings& d, const std::string& at);
// A sensor name is a metric label, an export file name and a Foxglove topic: letters, digits,
// '-', '_', '.', 1-64 characters, not starting with '.'.
bool valid_sensor_name(const std::string& name);
// "HOST:PORT" of --http or --foxglove, a host name resolved to its IPv4 address; nothing for a
// malformed one or a name that does not resolve.
std::optional<std::pair<std::string, std::uint16_t>> parse_http_address(const std::string& text);

// Raised with every problem found, one per line, each naming where and what would be accepted.
class SettingsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A physics parameter's place in the model's defaults: overrides apply after the model's own.
using PhysicsParamField = double& (*)(core::PhysicsParams&);

// Flag values for a single sensor, as typed by the user (empty = default).
struct SensorFlags {
  std::string name;  // empty: MODEL-ID
  std::string model = "vlp16";
  std::string hits = "udp://127.0.0.1:9870";
  std::string hits_format = "framed";
  std::string out;
  std::string telemetry;
  std::string pace = "realtime";
  std::uint64_t seed = 0;
  std::string metadata_out;
  std::string calibration_out;
  std::string firetimes_out;
  std::string physics = "default";
  std::string surface = "brdf";
  std::string detection = "threshold";
  std::vector<std::string> physics_stages;  // the whole chain by name; empty: the preset above
  // Empty: strongest, or, on a model without it (Hesai QT64), the first its row lists.
  std::string return_mode;
  double rain_mm_per_h = 0;
  double visibility_m = 23000;
  double sun_irradiance_w_per_m2 = 0;
  int rpm = 0;
  std::string mode;
  std::string scan_pattern;  // Livox: a scan-table CSV or "test-pattern"
  std::string engine = "ros";
  std::string clock = "wall";
  int sensor_id = 0;
  int idle_timeout_ms = 200;
  int pacing_margin_ms = -1;  // unset: one frame period
  int rays_per_beam = 1;
  int segments_per_path = 1;
  std::string profile = "legacy";
  std::string azimuth_window;  // "START,END" millidegrees; empty: the whole turn
  std::string timestamp_mode = "internal-osc";
  std::string sensor_ip;           // empty: 127.0.0.(2 + sensor_id) when the output is on loopback
  int api_port = -1;               // -1: the family's (80; Hesai 9347; RoboSense none; Livox 56100)
  std::vector<std::string> allow;  // sender allow-list (IPv4 addresses); empty: anyone
  // physics_params keys given (config file only), in the order read.
  std::vector<std::pair<PhysicsParamField, double>> physics_params;
};
// The address an emulated sensor gets by default: its own loopback address, 127.0.0.2 onwards.
std::string default_sensor_ip(std::uint16_t sensor_id);

SensorSettings sensor_from_flags(const SensorFlags& flags);
// Reads the [daemon] table and every [[sensor]] of a TOML file.
DaemonSettings load_config_file(const std::filesystem::path& file);
DaemonSettings load_config_text(const std::string& text, const std::string& source_name);

}  // namespace lidaremu::daemon
