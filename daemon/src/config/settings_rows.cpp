// The settings schema's rows: every setting the daemon takes, as data (settings_schema.hpp says
// what each column means). A new setting is a row here (the [daemon] table's in
// settings_rows_daemon.cpp, the physics parameters' in settings_rows_physics.cpp) and the code
// that uses its value.
#include <iterator>
#include <vector>

#include "lidaremu/daemon/config/settings_schema.hpp"

namespace lidaremu::daemon {
namespace {

using F = SensorFlags;
// Which families a setting applies to, by what the family is.
constexpr FamilySet kRotationRateScan{
    [](const core::Family& f) { return f.scan_kind() == core::ScanKind::kRotationRate; }};
constexpr FamilySet kLidarModeScan{
    [](const core::Family& f) { return f.scan_kind() == core::ScanKind::kLidarMode; }};
constexpr FamilySet kScanTableScan{
    [](const core::Family& f) { return f.scan_kind() == core::ScanKind::kScanTable; }};
// The unit's metadata file (Ouster's JSON) and the output options it states.
constexpr FamilySet kMetadataFile{[](const core::Family& f) { return f.stream_needs_metadata(); }};
constexpr FamilySet kCalibrationFile{
    [](const core::Family& f) { return f.writes_calibration_file(); }};
constexpr FamilySet kFiretimesFile{[](const core::Family& f) { return f.writes_firetimes_file(); }};

const SettingRow kRows[] = {
    // [[sensor]]: one emulated unit each.
    {.key = "name",
     .target = &F::name,
     .default_text = "MODEL-ID",
     .help = "label in logs, metrics, export file names and live-view topics: 1-64 letters, "
             "digits, '-', '_' or '.', not starting with '.'",
     .example = "roof"},
    {.key = "model",
     .flag = "--model",
     .metavar = "NAME",
     .target = &F::model,
     .listed = core::sensor_model_names,
     .help = "the sensor to be (docs/models.md)",
     .example = "os1-64"},
    {.key = "sensor_id",
     .flag = "--sensor-id",
     .metavar = "N",
     .target = &F::sensor_id,
     .range = SettingRange{0, 65535},
     .help = "the id framed batches must carry",
     .example = "3"},
    {.key = "hits",
     .flag = "--hits",
     .metavar = "udp://HOST:PORT",
     .target = &F::hits,
     .help = "where hit batches arrive (port 0: any free port, printed at start)",
     .example = "udp://127.0.0.1:0"},
    {.key = "hits_format",
     .flag = "--hits-format",
     .target = &F::hits_format,
     .choices = "framed|raw7|raw8",
     .help = "`HitBatch` FlatBuffers, or headerless 7/8-float rows",
     .doc = "`HitBatch` FlatBuffers, or headerless 7/8-float rows (not for Livox: a raw row "
            "carries no beam, and a table scan's beam cannot be found from where it hit)",
     .example = "raw7"},
    {.key = "out",
     .flag = "--out",
     .metavar = "udp://HOST:PORT",
     .target = &F::out,
     .change = kOnReload | kBySensorApi,
     .default_text = "127.0.0.1, the port its drivers listen on:",
     .family_default = [](const core::Family& f) { return std::to_string(f.default_ports().data); },
     .help = "data packets to udp://HOST:PORT",
     .doc = "data packets; HOST may be a name (resolved at start and on reload, e.g. a compose "
            "service). A Livox unit's points leave from its port 56300, the only source Livox "
            "SDK2 takes points from (its IMU packets from 56400)",
     .example = "udp://127.0.0.1:2370"},
    {.key = "telemetry",
     .flag = "--telemetry",
     .metavar = "udp://HOST:PORT",
     .target = &F::telemetry,
     .change = kOnReload | kBySensorApi,
     .default_text = "the `--out` host, the port its drivers listen on:",
     .family_default =
         [](const core::Family& f) {
           const auto ports = f.default_ports();
           return std::to_string(ports.telemetry) + " (" + std::string(ports.telemetry_name) + ")";
         },
     .help = "the side channel (Velodyne position, Ouster IMU, Hesai GPS, RoboSense DIFOP, "
             "Livox IMU packets), udp://HOST:PORT",
     .doc = "the side channel: Velodyne position packets; Ouster IMU packets; Hesai GPS packets "
            "(nebula's `gnss_port`: XT32, XT16, XT32M2X, 40P, 64; none from the QT heads); "
            "RoboSense DIFOP, before the first MSOP packet and once a second; Livox IMU, 200 a "
            "second",
     .example = "udp://127.0.0.1:8310"},
    {.key = "pace",
     .flag = "--pace",
     .target = &F::pace,
     .choices = "realtime|afap",
     .help = "the real sensor's packet period, or each packet as soon as it is complete",
     .example = "afap"},
    {.key = "clock",
     .flag = "--clock",
     .target = &F::clock,
     .choices = "wall|sim",
     .help = "packet timestamps from the wall clock or the batches' simulation time",
     .doc = "packet timestamps from the wall clock (Velodyne: UNIX time past the hour, wrapping "
            "at the hour; Ouster: per `--timestamp-mode`) or from the batches' simulation time "
            "(reproducible bytes). On the wall clock a frame sent after frames that were not "
            "(dropped under overload, never sent by the engine) starts as many periods after the "
            "last one as its input began after that one's: the sensor spins on",
     .example = "sim"},
    {.key = "engine",
     .flag = "--engine",
     .target = &F::engine,
     .choices = "ros|unreal|unity|godot",
     .help = "row conventions: ros (m, x fwd z up) | unreal (cm, left-handed) | unity (m, "
             "left-handed, y up) | godot (m, y up, -z fwd)",
     .doc = "row conventions, converted once at ingest: `ros` metres, x forward, y left, z up; "
            "`unreal` centimetres, left-handed, z up; `unity` metres, left-handed, y up, z "
            "forward; `godot` metres, right-handed, y up, -z forward; the beam table "
            "(`GET /api/v1/sensors/NAME/beams`) is in the same frame",
     .example = "unreal"},
    {.key = "seed",
     .flag = "--seed",
     .metavar = "N",
     .target = &F::seed,
     .help = "seed of every random draw",
     .example = "7"},
    {.key = "rpm",
     .flag = "--rpm",
     .metavar = "N",
     .target = &F::rpm,
     .unset = 0,
     .families = kRotationRateScan,
     .change = kOnReload | kBySensorApi,
     .default_text = "600",
     .help = "rotation rate of a spinning head",
     .doc = "rotation rate: Velodyne 300..1200, Hesai XT32, XT16, 40P and 64 600 or 1200, "
            "XT32M2X, QT128 and QT64 600, RoboSense RS-Helios 600 or 1200",
     .example = "600"},
    {.key = "mode",
     .flag = "--mode",
     .metavar = "CxF",
     .target = &F::mode,
     .families = kLidarModeScan,
     .change = kOnReload | kBySensorApi,
     .default_text = "1024x10",
     .help = "Ouster lidar mode: 512x10|1024x10|2048x10|512x20|1024x20",
     .example = "512x10"},
    {.key = "scan_pattern",
     .flag = "--scan-pattern",
     .metavar = "FILE|test-pattern",
     .target = &F::scan_pattern,
     .families = kScanTableScan,
     .default_text = "— (required for Livox)",
     .help = "the scan table: a CSV in livox_laser_simulation's form (time, azimuth, zenith) or "
             "test-pattern (a built-in pattern that is not the unit's)",
     .doc = "the scan table, a CSV in livox_laser_simulation's form (`Time/s,Azimuth/deg,"
            "Zenith/deg`, the 4 lasers of a firing on consecutive lines; 256 MiB at most; every "
            "bad line refused with its number), or `test-pattern`: a built-in pattern that is "
            "**not** the unit's, for demos and CI (docs/models.md). The engine must cast the "
            "same table's rays",
     .example = "test-pattern"},
    {.key = "return_mode",
     .flag = "--return-mode",
     .alias = "--echoes",
     .metavar = "M",
     .target = &F::return_mode,
     .change = kOnReload | kBySensorApi,
     .default_text = "`strongest` (QT64: `last`; Mid-360: `first`)",
     .help = "return mode: strongest | last | dual (Velodyne, Hesai), first, first-last, "
             "first-strongest (Hesai); each model's in docs/models.md (Ouster: see --profile)",
     .doc = "Velodyne: `strongest` (0x37), `last` (0x38) or `dual` (0x39: blocks in pairs, last "
            "then strongest or second strongest; the packet period halves; VLS-128: one column "
            "per packet; HDL-64E has no dual layout). Ouster: `strongest` (the profile decides, "
            "see `--profile`). Hesai: `first` (0x33, not on the 40P and 64), `strongest` (0x37, "
            "not on the QT64), `last` (0x38), `dual` (0x39: blocks in pairs, the last return "
            "first, then the strongest or second strongest; not on the QT64), `first-last` "
            "(0x3B, the QT64's dual: the first, then the last) or `first-strongest` (0x3C, XT32, "
            "XT16, XT32M2X: the first, then the strongest); RoboSense: the model's "
            "(docs/models.md). Livox: `first` only (the datasheet's points are first returns)",
     .example = "strongest"},
    {.key = "profile",
     .flag = "--profile",
     .metavar = "P",
     .target = &F::profile,
     .choices = "legacy|rng19|rng19-dual|rng15",
     .families = kMetadataFile,
     .change = kOnReload | kBySensorApi,
     .help = "Ouster lidar profile: legacy | rng19 (RNG19_RFL8_SIG16_NIR16) | rng19-dual (two "
             "strongest returns) | rng15 (RNG15_RFL8_NIR8, low data rate)",
     .doc = "Ouster lidar profile: `legacy`, `rng19` (RNG19_RFL8_SIG16_NIR16), `rng19-dual` (the "
            "two strongest returns), `rng15` (RNG15_RFL8_NIR8, 8 mm range unit, low data rate)",
     .example = "rng19"},
    {.key = "azimuth_window",
     .flag = "--azimuth-window",
     .metavar = "START,END",
     .target = &F::azimuth_window,
     .pair = true,
     .families = kMetadataFile,
     .change = kOnReload | kBySensorApi,
     .default_text = "0,360000",
     .help = "Ouster azimuth window START,END in millidegrees",
     .doc = "Ouster: millidegrees of encoder angle whose columns are sent (START > END wraps "
            "through 0); packets outside are not sent, columns outside in a sent packet are "
            "marked invalid",
     .example = "0,180000"},
    {.key = "timestamp_mode",
     .flag = "--timestamp-mode",
     .metavar = "M",
     .target = &F::timestamp_mode,
     .choices = "internal-osc|ptp|TIME_FROM_INTERNAL_OSC|TIME_FROM_PTP_1588",
     .families = kMetadataFile,
     .change = kOnReload | kBySensorApi,
     .help = "Ouster timestamps: internal-osc (since power-on) | ptp (PTP/TAI time)",
     .doc = "Ouster: `internal-osc` (nanoseconds since the emulated power-on) or `ptp` (PTP "
            "time: TAI, UTC + 37 s); the SDK's names `TIME_FROM_INTERNAL_OSC` and "
            "`TIME_FROM_PTP_1588` are taken too",
     .example = "ptp"},
    {.key = "metadata_out",
     .flag = "--metadata-out",
     .metavar = "FILE",
     .target = &F::metadata_out,
     .families = kMetadataFile,
     .help = "write the Ouster sensor metadata JSON here",
     .doc = "write the sensor metadata JSON a real unit serves",
     .example = "/tmp/lidaremu-schema-test.json"},
    {.key = "calibration_out",
     .flag = "--calibration-out",
     .metavar = "FILE",
     .target = &F::calibration_out,
     .families = kCalibrationFile,
     .help = "write the angle calibration here: Hesai's CSV (nebula, the SDK), RoboSense's "
             "angle.csv (rs_driver)",
     .doc = "Hesai: write the angle calibration CSV (`Channel,Elevation,Azimuth`) nebula "
            "(`calibration_file`, with `udp_only`) and the SDK (`correction_file_path`) read; the "
            "same the unit answers to PTC 0x05. RoboSense: rs_driver's `angle.csv` "
            "(`vertical,horizontal` in degrees, a line per channel; `config_from_file: true`), "
            "the angles its DIFOP carries",
     .example = "/tmp/lidaremu-schema-test.csv"},
    {.key = "firetimes_out",
     .flag = "--firetimes-out",
     .metavar = "FILE",
     .target = &F::firetimes_out,
     .families = kFiretimesFile,
     .help = "write the Hesai SDK's firetime file here (firetimes_path): with it the SDK puts "
             "each point at its channel's firing time, as the beams were cast",
     .doc = "Hesai: write the firing-time file the Hesai SDK reads (`firetimes_path`): "
            "`Channel,fire time(us)` and a line per channel, or the QT128's `EEFF` form with its "
            "two firing loops (the same the unit answers to PTC 0xA9). With it the SDK adds each "
            "channel's turn during its firing time, as the emulated beams were cast; nebula "
            "applies none and misses by that turn, as on a real unit. Refused for the AT128 and "
            "OT128, with the reason (docs/drivers.md)",
     .example = "/tmp/lidaremu-schema-test-firetimes.csv"},
    {.key = "sensor_ip",
     .flag = "--sensor-ip",
     .metavar = "ADDR",
     .target = &F::sensor_ip,
     .default_text = "`127.0.0.2` + sensor id",
     .help = "the emulated unit's address: packets leave from it, its API listens on it (a "
             "default only when --out is on loopback)",
     .doc = "the emulated unit's own address: packets leave from it, its web API listens on it "
            "(one loopback address per sensor lets several run on one host). Default only when "
            "`--out` is on loopback; otherwise packets leave from any address and no API runs",
     .example = "127.0.0.9"},
    {.key = "api_port",
     .flag = "--api-port",
     .metavar = "N",
     .target = &F::api_port,
     .range = SettingRange{0, 65535},
     .unset = -1,
     .default_text = "the unit's own:",
     .family_default =
         [](const core::Family& f) {
           const int port = f.default_api_port();
           return port == 0 ? std::string("none") : std::to_string(port);
         },
     .help = "port of the unit's API on --sensor-ip (0: none)",
     .doc = "port of the unit's web API (Hesai: PTC; Livox: the SDK2 command port, with "
            "discovery on UDP 56000) (drivers expect 80: run as root or `setcap "
            "cap_net_bind_service=+ep build/daemon/lidaremud`); 0: none. When the default port "
            "cannot be bound the daemon warns and runs without the API; an explicit port that "
            "cannot be bound is fatal",
     .example = "0"},
    {.key = "allow",
     .flag = "--allow",
     .metavar = "ADDR[,ADDR...]",
     .target = &F::allow,
     .default_text = "anyone",
     .help = "accept hit datagrams only from these IPv4 addresses",
     .doc = "accept hit datagrams only from these IPv4 senders; others are dropped and counted "
            "(`lidaremu_datagrams_refused_sender_total`)",
     .example = "127.0.0.1"},
    {.key = "idle_timeout_ms",
     .flag = "--idle-timeout-ms",
     .metavar = "N",
     .target = &F::idle_timeout_ms,
     .unit = "ms",
     .range = SettingRange{10, 60000},
     .help = "a frame that gets no input for this long is complete (raw rows end frames this "
             "way too)",
     .example = "300"},
    {.key = "pacing_margin_ms",
     .flag = "--pacing-margin-ms",
     .metavar = "N",
     .target = &F::pacing_margin_ms,
     .unit = "ms",
     .range = SettingRange{0, 1000},
     .unset = -1,
     .default_text = "one frame period (of the current mode: an API mode change moves it)",
     .help = "real-time pacing: packets leave this long after the first one could",
     .doc = "real-time pacing: the packet schedule starts this long after the first packet could "
            "leave, so a frame whose physics takes longer than the first one's (CPU contention, "
            "more returns) still leaves on time, and so does the end of a Velodyne frame, which "
            "shares a packet with the next frame's start; the price is this much more latency",
     .example = "100"},
    {.key = "rays_per_beam",
     .flag = "--rays-per-beam",
     .metavar = "N",
     .target = &F::rays_per_beam,
     .range = SettingRange{1, 12},
     .help = "rays the engine casts per beam, centre first (beam divergence)",
     .example = "5"},
    {.key = "segments_per_path",
     .flag = "--segments-per-path",
     .metavar = "N",
     .target = &F::segments_per_path,
     .range = SettingRange{1, 16},
     .help = "segments of a multi-bounce path (8-float rows)",
     .example = "2"},
    {.key = "physics",
     .flag = "--physics",
     .target = &F::physics,
     .choices = "ideal|default",
     .help = "default (the realistic chain) | ideal (no noise, no loss)",
     .doc = "`ideal`: no noise, no loss, no random effect (what the engine sent comes back, "
            "quantised); `default`: the realistic chain ([physics.md](physics.md))",
     .example = "ideal"},
    {.key = "surface",
     .flag = "--surface",
     .target = &F::surface,
     .choices = "brdf|ipsp",
     .help = "surface model: brdf (range equation, datasheet-calibrated) | ipsp (seed 000)",
     .doc = "surface model: range equation with a BRDF, calibrated from the datasheet; or seed "
            "000's mixture",
     .example = "ipsp"},
    {.key = "detection",
     .flag = "--detection",
     .target = &F::detection,
     .choices = "threshold|capability",
     .help = "threshold (noise + threshold) | capability (seed 002 reflectance limit)",
     .doc = "noise plus a threshold from the false-alarm rate; or seed 002's reflectance-limit "
            "model",
     .example = "capability"},
    {.key = "physics_stages",
     .flag = "--physics-stages",
     .metavar = "A,B,...",
     .target = &F::physics_stages,
     .default_text = "the preset's",
     .help = "the physics chain, stage by stage (instead of --physics, --surface and "
             "--detection); names in docs/physics.md",
     .example = "geometry,surface.brdf,detection.ideal,echoes,report"},
    {.key = "weather.rain_mm_per_h",
     .flag = "--rain",
     .metavar = "MM_PER_H",
     .target = &F::rain_mm_per_h,
     .unit = "mm/h",
     .range = SettingRange{0, 500},
     .change = kOnReload | kByControlApi,
     .help = "rain rate at start (the control API changes it)",
     .example = "10"},
    {.key = "weather.visibility_m",
     .flag = "--visibility",
     .metavar = "M",
     .target = &F::visibility_m,
     .unit = "m",
     .range = SettingRange{10, 1e6},
     .change = kOnReload | kByControlApi,
     .help = "meteorological visibility at start; fog is a small one",
     .example = "2000"},
    {.key = "weather.sun_irradiance_w_per_m2",
     .flag = "--sun",
     .metavar = "W_PER_M2",
     .target = &F::sun_irradiance_w_per_m2,
     .unit = "W/m^2",
     .range = SettingRange{0, 2000},
     .change = kOnReload | kByControlApi,
     .help = "sunlight at start, broadband (1000: full sun, about 100 klx): ambient light "
             "through the receiver model",
     .example = "1000"},
};

}  // namespace

std::span<const SettingRow> settings_schema() {
  // The daemon's and sensors' rows, then the physics parameters: the order of --help and the docs.
  static const std::vector<SettingRow> rows = [] {
    const auto daemon = daemon_rows();
    std::vector<SettingRow> all(daemon.begin(), daemon.end());
    all.insert(all.end(), std::begin(kRows), std::end(kRows));
    const auto params = physics_param_rows();
    all.insert(all.end(), params.begin(), params.end());
    return all;
  }();
  return rows;
}

}  // namespace lidaremu::daemon
