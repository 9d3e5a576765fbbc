// lidaremu-bench --cores: the zero-loss throughput per count of the daemon's cores, as a table
// and a plot against the ideal line (bench.hpp).
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "lidaremu/clients/bench.hpp"

namespace lidaremu::clients {

namespace {
// The CPUs this process may run on, in order.
std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Beams per second at the first count's, per core, times `cores`.
double ideal_beams_per_s(const std::vector<ScalingPoint>& points, int cores) {
  if (points.empty() || points.front().cores == 0) return 0;
  return points.front().result.beams_per_s / points.front().cores * cores;
}
}  // namespace

std::vector<ScalingPoint> measure_scaling(const BenchOptions& o,
                                          const std::vector<int>& core_counts, double start_rate,
                                          double max_rate, double precision,
                                          std::ostream* progress) {
  const std::vector<int> cpus = usable_cpus();
  std::vector<ScalingPoint> points;
  for (const int n : core_counts) {
    if (n < 1 || static_cast<std::size_t>(n) > cpus.size()) {
      throw std::runtime_error("bench: --cores " + std::to_string(n) + ": this machine lets the " +
                               "bench use " + std::to_string(cpus.size()) + " CPU(s)");
    }
    BenchOptions step = o;
    step.daemon_cpus.assign(cpus.begin(), cpus.begin() + n);
    step.load_cpus.assign(cpus.begin() + n, cpus.end());
    if (step.load_cpus.empty()) step.load_cpus = cpus;  // nothing left: the load shares them
    if (progress) {
      *progress << "lidaremu-bench: the daemon on " << n << " core(s), the load on "
                << step.load_cpus.size() << "\n";
    }
    points.push_back({n, find_zero_loss(step, start_rate, max_rate, precision, progress)});
  }
  return points;
}

void print_scaling(std::ostream& out, const std::vector<ScalingPoint>& points) {
  out << std::fixed << std::setprecision(2)
      << "scaling: zero-loss throughput by the daemon's cores (efficiency: against the first "
         "count's per-core figure times the cores)\n"
      << "  cores  M beams/s  per core  ideal  efficiency\n";
  for (const auto& p : points) {
    const double ideal = ideal_beams_per_s(points, p.cores);
    out << std::setw(7) << p.cores << std::setw(11) << p.result.beams_per_s / 1e6 << std::setw(10)
        << p.result.beams_per_s / 1e6 / p.cores << std::setw(7) << ideal / 1e6 << std::setw(11)
        << (ideal > 0 ? 100.0 * p.result.beams_per_s / ideal : 0.0) << " %\n";
  }
}

std::string scaling_svg(const std::vector<ScalingPoint>& points, const std::string& title) {
  constexpr double kWidth = 480, kHeight = 320, kLeft = 60, kRight = 20, kTop = 40, kBottom = 50;
  int max_cores = 1;
  double max_beams = 1;
  for (const auto& p : points) {
    max_cores = std::max(max_cores, p.cores);
    max_beams = std::max({max_beams, p.result.beams_per_s, ideal_beams_per_s(points, p.cores)});
  }
  const double top_m = std::ceil(max_beams / 1e6 / 5) * 5;  // the y axis to a multiple of 5 M
  const auto x = [&](double cores) {
    return kLeft + (kWidth - kLeft - kRight) * cores / max_cores;
  };
  const auto y = [&](double beams) {
    return kHeight - kBottom - (kHeight - kTop - kBottom) * beams / 1e6 / top_m;
  };
  std::ostringstream svg;
  svg << std::fixed << std::setprecision(1) << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << kWidth << "\" height=\"" << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"20\" text-anchor=\"middle\">" << title << "</text>\n"
      << "<line x1=\"" << x(0) << "\" y1=\"" << y(0) << "\" x2=\"" << x(max_cores) << "\" y2=\""
      << y(0) << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << x(0) << "\" y1=\"" << y(0) << "\" x2=\"" << x(0) << "\" y2=\""
      << y(top_m * 1e6) << "\" stroke=\"black\"/>\n";
  for (int c = 1; c <= max_cores; ++c) {
    svg << "<text x=\"" << x(c) << "\" y=\"" << y(0) + 16 << "\" text-anchor=\"middle\">" << c
        << "</text>\n";
  }
  for (int m = 0; m <= static_cast<int>(top_m); m += 5) {
    svg << "<text x=\"" << x(0) - 6 << "\" y=\"" << y(m * 1e6) + 4 << "\" text-anchor=\"end\">" << m
        << "</text>\n";
  }
  svg << "<text x=\"" << x(max_cores / 2.0) << "\" y=\"" << kHeight - 12
      << "\" text-anchor=\"middle\">the daemon's cores</text>\n"
      << "<text transform=\"translate(16," << y(top_m * 5e5) << ") rotate(-90)\" "
      << "text-anchor=\"middle\">zero-loss M beams/s</text>\n";
  const auto polyline = [&](const char* style, auto beams_at) {
    svg << "<polyline fill=\"none\" " << style << " points=\"" << x(0) << "," << y(0);
    for (const auto& p : points) svg << " " << x(p.cores) << "," << y(beams_at(p));
    svg << "\"/>\n";
  };
  polyline("stroke=\"gray\" stroke-dasharray=\"4,4\"",
           [&](const ScalingPoint& p) { return ideal_beams_per_s(points, p.cores); });
  polyline("stroke=\"blue\" stroke-width=\"2\"",
           [](const ScalingPoint& p) { return p.result.beams_per_s; });
  for (const auto& p : points) {
    svg << "<circle cx=\"" << x(p.cores) << "\" cy=\"" << y(p.result.beams_per_s)
        << "\" r=\"4\" fill=\"blue\"/>\n";
  }
  svg << "<text x=\"" << x(0) + 10 << "\" y=\"" << kTop + 10
      << "\" fill=\"blue\">measured</text>\n<text x=\"" << x(0) + 10 << "\" y=\"" << kTop + 26
      << "\" fill=\"gray\">ideal (the first count's per core)</text>\n</svg>\n";
  return svg.str();
}

}  // namespace lidaremu::clients
