#pragma once
// /metrics in the Prometheus text exposition format (0.0.4): every family once, introduced by
// its # HELP and # TYPE lines, its samples for every sensor together (promtool check metrics
// passes on it). Families and their meaning: docs/metrics.md.
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/daemon/ops/capture.hpp"
#include "lidaremu/daemon/ops/counters.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"
#include "lidaremu/daemon/vendor/unit_api.hpp"
#include "lidaremu/daemon/view/foxglove_server.hpp"
#include "lidaremu/daemon/view/live_view.hpp"

namespace lidaremu::daemon {

// One sensor as /metrics shows it.
struct SensorSnapshot {
  std::string name;
  const SensorCounters* counters = nullptr;
  std::uint64_t kernel_drops = 0;   // SensorRuntime::input_kernel_drops
  std::uint64_t frames_queued = 0;  // waiting for physics
  std::uint64_t packets_queued = 0;
  std::uint64_t capture_dropped = 0;        // SensorRuntime::capture_dropped
  const ViewCounters* view = nullptr;       // null without a live view
  std::optional<LivoxSdkCounts> livox_sdk;  // a Livox unit's discovery and command ports
  std::uint64_t reinitialisations = 0;      // pipelines rebuilt for settings its APIs took
  std::uint64_t destinations_accepted = 0;  // streams pointed elsewhere by its APIs' clients
  std::uint64_t destinations_refused = 0;   // ... refused by the destination policy
  std::vector<ApiPortCounts> api_ports;     // its TCP request/reply ports (PTC, TCP 7501)
};

// The exposition for these sensors, and the Foxglove server's families when there is one.
// `annotate`: # HELP and # TYPE lines (the exit summary on stdout leaves them out).
// `captures`: the daemon's --pcap and --record files, whose write errors it shows.
void write_exposition(std::ostream& out, std::span<const SensorSnapshot> sensors,
                      const FoxgloveCounters* foxglove = nullptr, bool annotate = true,
                      std::span<const CaptureFile* const> captures = {});

// What /metrics shows of a running sensor.
SensorSnapshot snapshot_of(const SensorRuntime& runtime);

// Every family name the daemon can expose (for the documentation's test).
std::span<const std::string_view> metric_family_names();

}  // namespace lidaremu::daemon
