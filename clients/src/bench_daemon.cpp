#include "bench_daemon.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>

namespace lidaremu::clients {

BenchReport::CpuPerBeam cpu_per_beam(const std::map<std::string, double>& cpu_by_thread,
                                     const std::vector<BenchSensorReport>& sensors,
                                     std::uint64_t beams_in, std::uint64_t beams) {
  BenchReport::CpuPerBeam c;
  if (beams == 0 || beams_in == 0) return c;
  double encoding_s = 0;
  for (const auto& s : sensors) encoding_s += s.daemon_encoding_cpu_s;
  const auto ns_per_beam = [&](double seconds) {
    return seconds * 1e9 / static_cast<double>(beams);
  };
  for (const auto& [name, seconds] : cpu_by_thread) {
    if (name == "lre-input") {
      c.input_ns += seconds * 1e9 / static_cast<double>(beams_in);
    } else if (name == "lre-send") {
      c.sending_ns += ns_per_beam(seconds);
    } else if (name == "lre-process" || name == "lre-physics") {
      c.physics_ns += ns_per_beam(seconds);
    } else if (name == "lre-locate") {
      c.locating_ns += ns_per_beam(seconds);
    } else {
      c.other_ns += ns_per_beam(seconds);
    }
  }
  c.encoding_ns = std::min(ns_per_beam(encoding_s), c.physics_ns);
  c.physics_ns -= c.encoding_ns;
  return c;
}

double histogram_quantile(const std::string& output, const std::string& name,
                          const std::string& sensor, double q) {
  const std::string prefix = "lidaremu_" + name + "_bucket{sensor=\"" + sensor + "\",le=\"";
  std::vector<std::pair<double, double>> buckets;  // (upper bound, cumulative count)
  for (auto at = output.find(prefix); at != std::string::npos; at = output.find(prefix, at + 1)) {
    const auto le_end = output.find('"', at + prefix.size());
    const auto line_end = output.find('\n', le_end);
    const std::string le = output.substr(at + prefix.size(), le_end - at - prefix.size());
    const double bound = le == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(le);
    buckets.emplace_back(bound, std::stod(output.substr(le_end + 3, line_end - le_end - 3)));
  }
  if (buckets.empty() || buckets.back().second == 0) return 0;
  const double wanted = q * buckets.back().second;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= wanted) return bound;
  }
  return buckets.back().first;
}

std::uint64_t daemon_counter(const DaemonProcess& d, const std::string& name,
                             const std::string& sensor) {
  try {
    return d.counter("lidaremu_" + name + "{sensor=\"" + sensor + "\"}");
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace lidaremu::clients
