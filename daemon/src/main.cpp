// lidaremud: the LiDAR sensor emulator daemon.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/simd.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/config/settings_cli.hpp"
#include "lidaremu/daemon/ops/control_api.hpp"
#include "lidaremu/daemon/ops/metrics.hpp"
#include "lidaremu/daemon/ops/reaper.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/emulated_sensor.hpp"
#include "lidaremu/daemon/runtime/memory_budget.hpp"
#include "lidaremu/daemon/runtime/sensor_set.hpp"
#include "lidaremu/daemon/view/live_view.hpp"

#ifndef LIDAREMU_DEFAULT_MATERIALS
#define LIDAREMU_DEFAULT_MATERIALS "config/materials.toml"
#endif

namespace {
namespace asio = boost::asio;
using namespace lidaremu;

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
  if (!settings.pcap.empty()) capture.emplace(settings.pcap, "pcap");
  if (!settings.record.empty()) record.emplace(settings.record, "record");
  const daemon::BrowserPolicy browsers{settings.http_allowed_hosts, settings.http_allowed_origins};
  // Declared after the io_context: destroyed first, waiting for the sensors it still retires.
  daemon::Reaper reaper(io);
  std::vector<daemon::Ipv4Range> destinations;  // checked when the settings loaded
  for (const auto& range : settings.allow_destinations) {
    if (const auto r = daemon::parse_ipv4_range(range)) destinations.push_back(*r);
  }
  const daemon::SensorServices services{
      materials, io,     {capture ? &*capture : nullptr, record ? &*record : nullptr, &view},
      browsers,  reaper, daemon::DestinationPolicy(std::move(destinations))};
  const auto budget =
      daemon::plan_memory(settings.sensors, services.recorders, settings.memory_limit_mib);
  daemon::check_memory(budget);
  std::cout << "lidaremud: memory: " << daemon::describe(budget) << std::endl;
  Sensors sensors;
  daemon::start_sensors(settings.sensors, services, sensors);
  // Declared after the sensors: a reload still warming up is joined before they go.
  daemon::Reloader reloader(config, services, sensors);
  if (view.foxglove_port() != 0) {
    std::cout << "lidaremud: live view ws://" << view.foxglove_host() << ":" << view.foxglove_port()
              << " (Foxglove WebSocket; topics /lidaremu/SENSOR/points)" << std::endl;
  }

  std::vector<const daemon::CaptureFile*> captures;
  for (const auto* c : {capture ? &*capture : nullptr, record ? &*record : nullptr}) {
    if (c != nullptr) captures.push_back(c);
  }
  daemon::ControlApi control(sensors, settings.http_token, &view, browsers, captures);
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
  daemon::write_exposition(std::cout, summary, nullptr, false, captures);
  std::cout.flush();
  http.reset();
  sensors.clear();  // their taps leave the live view before it goes
  daemon::set_stop_request({});
  return daemon::a_thread_failed() ? daemon::kExitThreadFailed : 0;
}

}  // namespace

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  daemon::Reaper::fix_heap_thresholds();  // before any thread has an arena
  spdlog::set_default_logger(spdlog::stderr_color_mt("lidaremud"));
  // A capture past the file size limit (ulimit -f) must end that capture (EFBIG, counted), not
  // the daemon: SIGXFSZ's default action kills the process.
  std::signal(SIGXFSZ, SIG_IGN);
  daemon::CommandLine command_line;
  if (const auto exit_code = daemon::read_command_line(argc, argv, default_materials(),
                                                       command_line, std::cout, std::cerr)) {
    return *exit_code;
  }
  const daemon::DaemonSettings& settings = command_line.settings;
  for (const auto& note : command_line.notes) std::cout << "lidaremud: " << note << std::endl;
  try {
    core::simd::use_target(settings.simd_target);
  } catch (const std::invalid_argument& e) {
    std::cerr << "lidaremud: --simd-target: " << e.what() << '\n';
    return daemon::kExitUsage;
  }
  if (command_line.check_only) {
    std::cout << "lidaremud: settings checked: " << settings.sensors.size() << " sensor(s)";
    for (const auto& s : settings.sensors)
      std::cout << ", " << s.name << " (" << s.model->name << ")";
    std::cout << std::endl;
    return 0;
  }
  try {
    return run(settings, command_line.config);
  } catch (const std::exception& e) {
    std::cerr << "lidaremud: " << e.what() << '\n';
    return kExitStartup;
  }
}
