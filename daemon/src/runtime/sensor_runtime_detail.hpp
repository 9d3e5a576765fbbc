#pragma once
// What the parts of SensorRuntime share: sensor_runtime.cpp (its life), sensor_ingest.cpp (what
// the engine sends, on the input thread), sensor_processing.cpp (physics and encoding, on the
// processing thread), sensor_emission.cpp (packets out at the sensor's pace, on the sending
// thread).
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon::runtime_detail {

// A steady-clock reading in seconds, the unit the admission's predictions use.
inline double steady_s(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

inline double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Per-datagram problems are logged at 1, 2, 3, 10, 100, 1000, ... occurrences, so a flood of
// bad input never floods the log but every kind is seen.
inline bool worth_logging(std::uint64_t count) {
  if (count <= 3) return true;
  while (count % 10 == 0) count /= 10;
  return count == 1;
}

// Whether a count that moved from `before` to `now` (by more than one at a time) passed one of
// the counts worth_logging names.
inline bool passes_log_mark(std::uint64_t before, std::uint64_t now) {
  if (now <= before) return false;
  if (before < 3) return true;  // 1, 2 or 3 is among (before, now]
  for (std::uint64_t mark = 10; mark <= now; mark *= 10) {
    if (mark > before) return true;
    if (mark > now / 10) break;  // the next mark is past now (and would not overflow)
  }
  return false;
}

// An address from the settings (host names were resolved to addresses when they loaded) as an
// endpoint; throws std::runtime_error naming `what` otherwise.
boost::asio::ip::udp::endpoint resolve(const Endpoint& e, const std::string& what);

}  // namespace lidaremu::daemon::runtime_detail
