#pragma once
// How much memory a configuration needs, before anything starts: each sensor's pipeline
// (SensorRuntime::estimated_bytes: its buffers, which start-up faults in) and the daemon's own.
// A configuration (or a reload) over the limit is refused with every sensor's estimate, so that
// a config too large for the host never reaches the kernel's OOM killer.
#include <cstddef>
#include <string>
#include <vector>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/ops/capture.hpp"

namespace lidaremu::daemon {

// Sensors per daemon: more is refused (each has three threads and a socket; a vehicle has 4-8).
inline constexpr std::size_t kMaxSensors = 256;
// The daemon's own resident memory with its first sensor's aside: code, libraries, TBB's
// workers, the io thread, the control endpoint and live view (measured: 10-11 MiB).
inline constexpr std::size_t kDaemonBaseBytes = std::size_t{12} << 20;

struct MemoryBudget {
  struct Sensor {
    std::string name;
    std::size_t bytes = 0;
  };
  std::vector<Sensor> sensors;
  std::size_t total_bytes = 0;  // the daemon's and every sensor's
  std::size_t limit_bytes = 0;
  std::string limit_source;  // "--memory-limit", "the cgroup's memory.max", "half the RAM"
};

// `limit_mib`: the setting (0: the cgroup's limit, else half the RAM).
MemoryBudget plan_memory(const std::vector<SensorSettings>& sensors, const Recorders& recorders,
                         double limit_mib);
// Throws std::runtime_error, naming each sensor's estimate, when the plan is over its limit or
// has more than kMaxSensors sensors.
void check_memory(const MemoryBudget& budget);
// "4 sensors need about 151 MiB of the 12,000 MiB allowed (half the RAM)".
std::string describe(const MemoryBudget& budget);

}  // namespace lidaremu::daemon
