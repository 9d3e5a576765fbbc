#pragma once
// What lidaremu-bench reads off the daemon it measures (bench_daemon.cpp), for bench.cpp: its
// threads' CPU per beam, its histograms' quantiles and its counters.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lidaremu/clients/bench.hpp"
#include "lidaremu/clients/daemon_process.hpp"

namespace lidaremu::clients {

// The daemon's CPU per beam by its threads' names (daemon/.../punctual_thread.hpp), the
// encoding taken out of the processing threads by the daemon's own count of it. (The encoding
// before the warm-up ended is counted too: a small overstatement of a serial part.)
// The input is per beam received (it reads every frame, dropped or not), the rest per beam out.
BenchReport::CpuPerBeam cpu_per_beam(const std::map<std::string, double>& cpu_by_thread,
                                     const std::vector<BenchSensorReport>& sensors,
                                     std::uint64_t beams_in, std::uint64_t beams);

// The upper bound of the histogram bucket that holds quantile q of the daemon's
// lidaremu_NAME_bucket lines for this sensor (infinity when it lies in +Inf; 0 when empty).
double histogram_quantile(const std::string& output, const std::string& name,
                          const std::string& sensor, double q);

// The daemon's counter lidaremu_NAME{sensor="SENSOR"}; 0 when it has none.
std::uint64_t daemon_counter(const DaemonProcess& d, const std::string& name,
                             const std::string& sensor);

}  // namespace lidaremu::clients
