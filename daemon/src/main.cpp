// lidaremud: the LiDAR sensor emulator daemon.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/daemon/control_api.hpp"
#include "lidaremu/daemon/emulated_sensor.hpp"
#include "lidaremu/daemon/live_view.hpp"
#include "lidaremu/daemon/metrics.hpp"
#include "lidaremu/daemon/sensor_set.hpp"
#include "lidaremu/daemon/settings.hpp"
#include "lidaremu/daemon/thread_guard.hpp"

#ifndef LIDAREMU_DEFAULT_MATERIALS
#define LIDAREMU_DEFAULT_MATERIALS "config/materials.toml"
#endif

namespace {
namespace asio = boost::asio;
using namespace lidaremu;

constexpr int kExitUsage = 2;
constexpr int kExitConfig = 3;
constexpr int kExitStartup = 4;

using daemon::Sensors;

// The material table an installed daemon ships (PREFIX/share/lidaremu, found from the
// executable, so a package or a DESTDIR install is relocatable); in the build tree, the source's.
std::filesystem::path default_materials() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path() / ".." / "share" / "lidaremu" / "materials.toml";
    if (std::filesystem::is_regular_file(installed, ec)) return installed.lexically_normal();
  }
  return LIDAREMU_DEFAULT_MATERIALS;
}

int run(const daemon::DaemonSettings& settings, const std::filesystem::path& config) {
  spdlog::set_level(spdlog::level::from_str(settings.log_level));
  std::optional<tbb::global_control> threads;
  if (settings.threads > 0) {
    threads.emplace(tbb::global_control::max_allowed_parallelism, settings.threads);
  }
  const auto materials = core::MaterialTable::load(settings.materials);
  std::cout << "lidaremud: material table " << settings.materials.string() << std::endl;
  std::cout << "lidaremud: physics kernel on " << core::simd::current_target() << " (of "
            << core::simd::available_targets().size() << " instruction sets this CPU runs)"
            << std::endl;
  // Sensors attach to the live view; it outlives them, including the ones retired sensors leave
  // queued on the io_context (destroyed with it).
  daemon::LiveView view(settings);
  asio::io_context io;
  // Signals are caught before anything is started or printed: a supervisor (or a test) that
  // sends SIGHUP or SIGTERM as soon as it sees output must never meet the default action.
  asio::signal_set hangup(io, SIGHUP);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::optional<daemon::CaptureFile> capture, record;
  if (!settings.pcap.empty()) capture.emplace(settings.pcap);
  if (!settings.record.empty()) record.emplace(settings.record);
  const daemon::BrowserPolicy browsers{settings.http_allowed_hosts, settings.http_allowed_origins};
  // Declared after the io_context: destroyed first, waiting for the sensors it still retires.
  daemon::Reaper reaper(io);
  const daemon::SensorServices services{
      materials,
      io,
      {capture ? &*capture : nullptr, record ? &*record : nullptr, &view},
      browsers,
      reaper};
  Sensors sensors;
  daemon::start_sensors(settings.sensors, services, sensors);
  // Declared after the sensors: a reload still warming up is joined before they go.
  daemon::Reloader reloader(config, services, sensors);
  if (view.foxglove_port() != 0) {
    std::cout << "lidaremud: live view ws://" << view.foxglove_host() << ":" << view.foxglove_port()
              << " (Foxglove WebSocket; topics /lidaremu/SENSOR/points)" << std::endl;
  }

  daemon::ControlApi control(sensors, settings.http_token, &view, browsers);
  std::unique_ptr<daemon::HttpServer> http;
  if (const auto address = daemon::parse_http_address(settings.http)) {
    try {
      http = std::make_unique<daemon::HttpServer>(
          io, address->first, address->second,
          [&control](const daemon::HttpRequest& r) { return control.handle(r); });
      std::cout << "lidaremud: control http://" << address->first << ":" << http->port()
                << " (/healthz, /metrics, /api/v1/sensors) and the live view page /view/"
                << std::endl;
    } catch (const std::exception& e) {
      if (settings.http_explicit) throw;
      spdlog::warn("no control endpoint: {} (choose one with --http HOST:PORT, or --http off)",
                   e.what());
    }
  }

  std::function<void()> arm_hangup = [&] {
    hangup.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      if (config.empty()) {
        spdlog::warn("SIGHUP: nothing to reload (started without --config)");
      } else {
        reloader.request();
      }
      arm_hangup();
    });
  };
  arm_hangup();

  // A worker thread that fails stops the daemon the way SIGTERM does (thread_guard.hpp).
  daemon::set_stop_request([&io] { asio::post(io, [&io] { io.stop(); }); });
  signals.async_wait([&](const boost::system::error_code&, int signal) {
    spdlog::info("signal {}: draining and stopping", signal);
    io.stop();
  });
  asio::steady_timer stop_timer(io);
  if (settings.duration_s > 0) {
    stop_timer.expires_after(
        std::chrono::milliseconds(static_cast<long>(settings.duration_s * 1000)));
    stop_timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) io.stop();
    });
  }
  asio::steady_timer stats_timer(io);
  std::function<void()> arm_stats = [&] {
    if (settings.stats_interval_s <= 0) return;
    stats_timer.expires_after(
        std::chrono::milliseconds(static_cast<long>(settings.stats_interval_s * 1000)));
    stats_timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      for (const auto& s : sensors) {
        const auto& c = s->runtime().counters();
        spdlog::info("sensor {}: {} datagrams in, {} frames processed, {} dropped, {} packets out",
                     s->runtime().settings().name, c.datagrams_in.load(), c.frames_processed.load(),
                     c.frames_dropped.load(), c.packets_out.load());
      }
      arm_stats();
    });
  };
  arm_stats();
  try {
    io.run();
  } catch (...) {
    // A handler on the io thread failed: logged and remembered (the rethrow inside the guard),
    // then drained and stopped as below, and said in the exit code.
    daemon::run_guarded("the io thread", [] { throw; });
  }
  for (auto& s : sensors) s->drain_and_stop();
  reaper.finish();
  if (capture) capture->flush();
  if (record) record->flush();
  std::vector<daemon::SensorSnapshot> summary;
  for (const auto& s : sensors) summary.push_back(s->snapshot());
  daemon::write_exposition(std::cout, summary, nullptr, false);
  std::cout.flush();
  http.reset();
  sensors.clear();  // their taps leave the live view before it goes
  daemon::set_stop_request({});
  return daemon::a_thread_failed() ? daemon::kExitThreadFailed : 0;
}

}  // namespace

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("lidaremud"));
  CLI::App app{
      "lidaremud: a LiDAR sensor emulator. Takes ray hits from a simulator over UDP and "
      "emits the packets of a real Velodyne or Ouster sensor."};
  daemon::SensorFlags f;
  std::string config;
  std::string materials = default_materials().string();
  int threads = 0;
  std::string log_level = "info";
  double duration_s = 0;
  double stats_interval_s = 0;
  std::string pcap;
  std::string record;
  std::string http;
  std::string http_token;
  std::vector<std::string> http_allowed_hosts;
  std::vector<std::string> http_allowed_origins;
  std::string foxglove;
  std::string export_dir;
  std::string export_formats;
  int export_every = 1;
  int export_frames = 1;
  app.add_option("--config", config, "TOML file describing the daemon and any number of sensors");
  app.add_option("--model", f.model, "sensor model: " + core::sensor_model_names())
      ->capture_default_str();
  app.add_option("--hits", f.hits,
                 "where hit batches arrive, udp://HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--hits-format", f.hits_format, "framed (HitBatch FlatBuffers) | raw7 | raw8")
      ->capture_default_str();
  app.add_option(
      "--out", f.out,
      "data packets to udp://HOST:PORT (default port 2368 Velodyne and Hesai, 7502 Ouster, 6699 "
      "RoboSense MSOP)");
  app.add_option("--telemetry", f.telemetry,
                 "position packets (Velodyne, default 8308), IMU packets (Ouster, default 7503) or "
                 "GPS packets (Hesai, default 10110) or DIFOP packets (RoboSense, default 7788), "
                 "udp://HOST:PORT, default on the --out host");
  app.add_option("--pace", f.pace, "realtime (the real packet period) | afap (as fast as possible)")
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of every random draw")->capture_default_str();
  app.add_option("--metadata-out", f.metadata_out, "write the Ouster sensor metadata JSON here");
  app.add_option("--calibration-out", f.calibration_out,
                 "write the angle calibration here: Hesai's CSV (what nebula and the SDK read), "
                 "RoboSense's angle.csv (rs_driver's config_from_file)");
  app.add_option("--physics", f.physics,
                 "default (the realistic chain of PHYSICS.md) | ideal (no noise, no loss)")
      ->capture_default_str();
  app.add_option("--surface", f.surface,
                 "surface model: brdf (range equation, datasheet-calibrated) | ipsp (seed 000)")
      ->capture_default_str();
  app.add_option("--detection", f.detection,
                 "threshold (noise + 3 sigma) | capability (seed 002 reflectance limit)")
      ->capture_default_str();
  app.add_option("--physics-stages", f.physics_stages,
                 "the physics chain, stage by stage, comma-separated (instead of --physics, "
                 "--surface and --detection); names in docs/physics.md")
      ->delimiter(',');
  app.add_option("--echoes,--return-mode", f.echoes,
                 "return mode: strongest (default) | last | dual (Velodyne, Hesai), first "
                 "(Hesai), first-last (Hesai QT64, its dual), first-strongest (Hesai XT); each "
                 "model's in docs/models.md (Ouster: see --profile)");
  app.add_option("--profile", f.profile,
                 "Ouster lidar profile: legacy | rng19 (RNG19_RFL8_SIG16_NIR16) | rng19-dual (two "
                 "strongest returns) | rng15 (RNG15_RFL8_NIR8, low data rate)")
      ->capture_default_str();
  app.add_option("--azimuth-window", f.azimuth_window,
                 "Ouster azimuth window START,END in millidegrees (default 0,360000)");
  app.add_option("--timestamp-mode", f.timestamp_mode,
                 "Ouster timestamps: internal-osc (since power-on) | ptp (PTP/TAI time)")
      ->capture_default_str();
  app.add_option("--sensor-ip", f.sensor_ip,
                 "the emulated unit's address: packets leave from it, the web API listens on it "
                 "(default 127.0.0.2 + sensor id when --out is on loopback)");
  app.add_option("--allow", f.allow,
                 "accept hit datagrams only from these IPv4 addresses (repeat or comma-separate; "
                 "default: anyone)")
      ->delimiter(',');
  app.add_option("--api-port", f.api_port,
                 "port of the sensor's web API on --sensor-ip (default 80, as drivers expect; 0: "
                 "none)");
  app.add_option("--rain", f.rain_mm_per_h, "rain rate at start, mm/h (Control changes it)")
      ->capture_default_str();
  app.add_option("--visibility", f.visibility_m, "meteorological visibility at start, m (fog)")
      ->capture_default_str();
  app.add_option("--sun", f.sun_irradiance_w_per_m2,
                 "sunlight at start, broadband W/m^2 (1000: full sun, ~100 klx; ambient light)")
      ->capture_default_str();
  app.add_option("--rays-per-beam", f.rays_per_beam,
                 "rays the engine casts per beam, centre first (beam divergence), 1..12")
      ->capture_default_str();
  app.add_option("--segments-per-path", f.segments_per_path,
                 "segments per multi-bounce path (8-float rows), 1..16")
      ->capture_default_str();
  app.add_option("--rpm", f.rpm, "Velodyne rotation rate, 300..1200 (default 600)");
  app.add_option("--mode", f.mode,
                 "Ouster lidar mode: 512x10|1024x10|2048x10|512x20|1024x20 (default 1024x10)");
  app.add_option("--scan-pattern", f.scan_pattern,
                 "Livox: the scan table, a CSV in livox_laser_simulation's form (time, azimuth, "
                 "zenith) or test-pattern (a built-in pattern that is not the unit's)");
  app.add_option("--engine", f.engine,
                 "row conventions: ros (m, x fwd z up) | unreal (cm, left-handed) | unity (m, "
                 "left-handed, y up)")
      ->capture_default_str();
  app.add_option("--clock", f.clock,
                 "packet timestamps from the wall clock or the batches' simulation time: wall|sim")
      ->capture_default_str();
  app.add_option("--sensor-id", f.sensor_id, "sensor id framed batches must carry")
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", f.idle_timeout_ms,
                 "a frame with no new input for this long is complete")
      ->capture_default_str();
  app.add_option("--pacing-margin-ms", f.pacing_margin_ms,
                 "real-time pacing: packets leave this long after the first one could (0..1000)")
      ->capture_default_str();
  app.add_option("--materials", materials, "material table (TOML)")->capture_default_str();
  app.add_option("--threads", threads, "physics worker threads (0: all cores)")
      ->capture_default_str();
  std::string simd_target = "best";
  app.add_option("--simd-target", simd_target,
                 "instruction set of the physics kernel: best, or one this CPU runs (AVX3, AVX2, "
                 "SSE4, SSSE3, SCALAR); the output bytes are the same on each")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();
  app.add_option("--duration", duration_s,
                 "stop by itself after this many seconds (0: run until SIGTERM)");
  app.add_option("--stats-interval", stats_interval_s, "log counters every this many seconds");
  app.add_option("--record", record,
                 "record every datagram received, with its arrival time, to this pcap file "
                 "(replay it with lidaremu-send --replay)");
  app.add_option("--http", http,
                 "the daemon's HTTP endpoint (/healthz, /metrics, JSON API), HOST:PORT or off "
                 "(default 127.0.0.1:9880; port 0: any free port, printed at start)");
  app.add_option("--http-token", http_token,
                 "token that requests changing state must send (Authorization: Bearer TOKEN)");
  app.add_option(
         "--http-allowed-hosts", http_allowed_hosts,
         "host names (besides addresses, localhost and this machine's name) under which "
         "clients may change state, on --http and the emulated sensor APIs; comma-separated")
      ->delimiter(',');
  app.add_option("--http-allowed-origins", http_allowed_origins,
                 "web pages (http://HOST:PORT) allowed to change state from a browser; "
                 "comma-separated (default: none)")
      ->delimiter(',');
  app.add_option("--pcap", pcap,
                 "also write every emitted packet to this pcap file (IPv4 fragments as on a real "
                 "network), for tcpdump, Wireshark, VeloView, the Ouster SDK");
  app.add_option("--foxglove", foxglove,
                 "live view: decoded clouds as foxglove.PointCloud on a Foxglove WebSocket, "
                 "HOST:PORT or off (default 127.0.0.1:8765; port 0: any free port, printed)");
  app.add_option("--export", export_dir,
                 "write decoded frames (with ground-truth object ids) to this directory");
  app.add_option("--export-formats", export_formats,
                 "comma-separated: pcd (default), ply, bin (KITTI)");
  app.add_option("--export-every", export_every, "export every N-th frame (default 1)");
  app.add_option("--export-frames", export_frames,
                 "frames to export per sensor, then stop (default 1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int shown = app.exit(e);  // prints help, or the error and a hint
    return shown == 0 ? 0 : kExitUsage;
  }

  daemon::DaemonSettings settings;
  try {
    if (!config.empty()) {
      for (const char* flag :
           {"--model",   "--hits",           "--hits-format",    "--out",       "--telemetry",
            "--pace",    "--seed",           "--metadata-out",   "--physics",   "--rpm",
            "--mode",    "--engine",         "--clock",          "--sensor-id", "--idle-timeout-ms",
            "--profile", "--azimuth-window", "--timestamp-mode", "--sensor-ip", "--api-port",
            "--allow",   "--physics-stages", "--surface",        "--detection", "--scan-pattern"}) {
        if (app.count(flag)) {
          std::cerr << "lidaremud: " << flag
                    << " and --config cannot be combined: put the sensor in " << config
                    << " instead\n";
          return kExitUsage;
        }
      }
      settings = daemon::load_config_file(config);
    } else {
      settings.sensors.push_back(daemon::sensor_from_flags(f));
    }
  } catch (const daemon::SettingsError& e) {
    std::cerr << "lidaremud: " << e.what() << '\n';
    return kExitConfig;
  }
  if (settings.materials.empty() || app.count("--materials")) settings.materials = materials;
  if (app.count("--threads") || settings.threads == 0) settings.threads = threads;
  try {
    core::simd::use_target(simd_target);
  } catch (const std::invalid_argument& e) {
    std::cerr << "lidaremud: --simd-target: " << e.what() << '\n';
    return kExitUsage;
  }
  if (app.count("--log-level")) settings.log_level = log_level;
  if (app.count("--duration")) settings.duration_s = duration_s;
  if (app.count("--stats-interval")) settings.stats_interval_s = stats_interval_s;
  if (app.count("--pcap")) settings.pcap = pcap;
  if (app.count("--record")) settings.record = record;
  if (app.count("--http")) {
    if (http != "off" && !daemon::parse_http_address(http)) {
      std::cerr << "lidaremud: --http '" << http
                << "': expected HOST:PORT (an IPv4 address or a host name that resolves) or off\n";
      return kExitUsage;
    }
    settings.http = http;
    settings.http_explicit = true;
  }
  if (app.count("--http-token")) settings.http_token = http_token;
  if (app.count("--http-allowed-hosts")) settings.http_allowed_hosts = http_allowed_hosts;
  if (app.count("--http-allowed-origins")) settings.http_allowed_origins = http_allowed_origins;
  if (app.count("--foxglove")) {
    settings.foxglove = foxglove;
    settings.foxglove_explicit = true;
  }
  if (app.count("--export")) settings.export_dir = export_dir;
  if (app.count("--export-formats")) settings.export_formats = export_formats;
  if (app.count("--export-every")) settings.export_every = export_every;
  if (app.count("--export-frames")) settings.export_frames = export_frames;
  if (const auto problems = daemon::check_daemon_settings(settings, "--"); !problems.empty()) {
    for (auto p : problems) {
      // Keys read as their flags: --export_every -> --export-every.
      std::replace(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(p.find(' ')), '_', '-');
      std::cerr << "lidaremud: " << p << '\n';
    }
    return kExitUsage;
  }
  try {
    return run(settings, config);
  } catch (const std::exception& e) {
    std::cerr << "lidaremud: " << e.what() << '\n';
    return kExitStartup;
  }
}
