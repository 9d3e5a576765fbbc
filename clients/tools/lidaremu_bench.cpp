// lidaremu-bench: starts lidaremud with the chosen sensors, loads it over loopback and reports
// throughput, drops, latency, CPU per ray and the machine's UDP ceiling (clients/src/bench.cpp).
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "lidaremu/clients/bench.hpp"

#ifndef LIDAREMU_BENCH_DAEMON
#define LIDAREMU_BENCH_DAEMON "lidaremud"
#endif

namespace {

int run(int argc, char** argv) {
  using namespace lidaremu::clients;
  CLI::App app{"Load generator and reporter for lidaremud"};
  BenchOptions o;
  o.daemon = LIDAREMU_BENCH_DAEMON;
  std::vector<std::string> sensors;
  std::string rate = "afap";
  app.add_option("--sensor", sensors,
                 "MODEL[:MODE][:VARIANT], repeatable: os1-128:2048x10, vls128::dual, "
                 "os1-64::rng19, pandar-qt64::first-last (VARIANT: Velodyne or Hesai return mode, "
                 "Ouster profile)")
      ->required();
  app.add_option("--rate", rate, "afap: as fast as the daemon takes frames; N: N times real time")
      ->capture_default_str();
  app.add_option("--pace", o.pace,
                 "auto: real-time pacing at --rate 1, as fast as possible otherwise (the "
                 "zero-loss search: as fast as possible at every rate); realtime: real-time "
                 "pacing at any rate (--rate 2: a sensor offered twice what it sends); afap: as "
                 "fast as possible at any rate")
      ->check(CLI::IsMember({"auto", "realtime", "afap"}))
      ->capture_default_str();
  app.add_option("--in-flight", o.in_flight, "afap: frames a sensor may have outstanding")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--seconds", o.seconds, "measured load")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup_seconds, "load before measuring")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_flag("--raw", o.raw, "headerless raw7 rows instead of HitBatch datagrams");
  app.add_option("--rays-per-beam", o.rays_per_beam)
      ->check(CLI::Range(1, 12))
      ->capture_default_str();
  app.add_option("--rain", o.rain_mm_per_h, "mm/h")
      ->check(CLI::Range(0.0, 500.0))
      ->capture_default_str();
  app.add_option("--physics", o.physics, "default|ideal")
      ->check(CLI::IsMember({"default", "ideal"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "the daemon's worker threads (0: all cores)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--ceiling-seconds", o.ceiling_seconds, "plain UDP sink run (0: skip)")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  app.add_option("--scene", o.scene,
                 "demo: the built-in street; all-returning: every beam returns at 20 m")
      ->check(CLI::IsMember({"demo", "all-returning"}))
      ->capture_default_str();
  bool zero_loss = false;
  double start_rate = 1, max_rate = 64, precision = 0.1;
  app.add_flag("--zero-loss", zero_loss,
               "search the highest offered rate that loses nothing (runs of --seconds each, "
               "from --start-rate, growing by half, then bisected to --precision)");
  app.add_option("--start-rate", start_rate, "zero-loss search: first rate (x real time)")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option("--max-rate", max_rate, "zero-loss search: highest rate tried")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option("--precision", precision, "zero-loss search: relative width of the result")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  std::vector<int> cores;
  std::string plot;
  app.add_option("--cores", cores,
                 "N,N,...: the zero-loss search with the daemon on N cores (the bench's load on "
                 "the others), for each N; prints beams/s and the efficiency per count")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("--plot", plot, "--cores: also write the scaling plot to this SVG file");
  app.add_option("--daemon", o.daemon, "lidaremud to start")->capture_default_str();
  app.add_option("--seed", o.seed)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (rate != "afap") {
    try {
      o.rate = std::stod(rate);
    } catch (const std::exception&) {
      o.rate = -1;
    }
    if (!(o.rate > 0 && o.rate <= 100)) {
      std::cerr << "lidaremu-bench: --rate '" << rate
                << "': expected afap or a factor in (0, 100]\n";
      return 2;
    }
  }
  for (const auto& s : sensors) o.sensors.push_back(BenchSensor::parse(s));
  if (!cores.empty()) {
    const auto points = measure_scaling(o, cores, start_rate, max_rate, precision, &std::cout);
    print_scaling(std::cout, points);
    if (!plot.empty()) {
      std::ofstream svg(plot);
      svg << scaling_svg(points, "lidaremud, " + std::to_string(o.sensors.size()) + " sensor(s), " +
                                     o.scene + " scene, physics " + o.physics);
      if (!svg) throw std::runtime_error("cannot write the plot to " + plot);
      std::cout << "plot: " << plot << "\n";
    }
    return 0;
  }
  if (zero_loss) {
    std::cout << "lidaremu-bench: zero-loss search over " << o.sensors.size() << " sensor(s)\n";
    const auto result = find_zero_loss(o, start_rate, max_rate, precision, &std::cout);
    print_zero_loss(std::cout, o, result);
    return 0;
  }
  const auto report = run_bench(o);
  print_report(std::cout, o, report);
  return report.daemon_exit_code == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "lidaremu-bench: " << e.what() << "\n";
    return 1;
  }
}
