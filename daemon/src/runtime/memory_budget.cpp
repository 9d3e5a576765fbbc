#include "lidaremu/daemon/runtime/memory_budget.hpp"

#include <fstream>
#include <stdexcept>

#include "lidaremu/daemon/runtime/sensor_runtime.hpp"

namespace lidaremu::daemon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mib(std::size_t bytes) { return std::to_string(std::lround(bytes / kMiB)) + " MiB"; }

// The cgroup's memory limit (v2 memory.max, or v1 memory.limit_in_bytes); 0 when there is none.
std::size_t cgroup_limit_bytes() {
  for (const char* file :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    std::string value;
    if (!(in >> value) || value == "max") continue;
    try {
      const auto bytes = std::stoull(value);
      if (bytes < (std::size_t{1} << 50)) return bytes;  // v1 says "no limit" with a huge number
    } catch (const std::exception&) {
    }
  }
  return 0;
}

std::size_t ram_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    std::size_t kib = 0;
    in >> kib;
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

}  // namespace

MemoryBudget plan_memory(const std::vector<SensorSettings>& sensors, const Recorders& recorders,
                         double limit_mib) {
  MemoryBudget b;
  b.total_bytes = kDaemonBaseBytes;
  for (const auto& s : sensors) {
    b.sensors.push_back({s.name, SensorRuntime::estimated_bytes(s, recorders)});
    b.total_bytes += b.sensors.back().bytes;
  }
  if (limit_mib > 0) {
    b.limit_bytes = static_cast<std::size_t>(limit_mib * kMiB);
    b.limit_source = "--memory-limit";
  } else if (const std::size_t cgroup = cgroup_limit_bytes(); cgroup > 0) {
    b.limit_bytes = cgroup;
    b.limit_source = "the cgroup's memory limit";
  } else {
    b.limit_bytes = ram_bytes() / 2;
    b.limit_source = "half the RAM";
  }
  return b;
}

void check_memory(const MemoryBudget& b) {
  if (b.sensors.size() > kMaxSensors) {
    throw std::runtime_error(std::to_string(b.sensors.size()) + " sensors: a daemon runs at most " +
                             std::to_string(kMaxSensors) + "; run several daemons");
  }
  if (b.limit_bytes == 0 || b.total_bytes <= b.limit_bytes) return;
  std::string each;
  for (std::size_t i = 0; i < b.sensors.size() && i < 8; ++i) {
    each += (i ? ", " : "") + b.sensors[i].name + " " + mib(b.sensors[i].bytes);
  }
  if (b.sensors.size() > 8) each += ", ...";
  throw std::runtime_error(describe(b) + ": too much for this host (" + each + ", the daemon " +
                           mib(kDaemonBaseBytes) +
                           "); run fewer sensors per daemon, or raise --memory-limit");
}

std::string describe(const MemoryBudget& b) {
  return std::to_string(b.sensors.size()) + " sensor(s) need about " + mib(b.total_bytes) +
         " of the " + mib(b.limit_bytes) + " allowed (" + b.limit_source + ")";
}

}  // namespace lidaremu::daemon
