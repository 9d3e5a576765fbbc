#pragma once
// What the parts of SensorRuntime (sensor_runtime.cpp: its life; sensor_input.cpp: what the
// engine sends; sensor_output.cpp: processing and sending) share.
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "lidaremu/daemon/settings.hpp"

namespace lidaremu::daemon::runtime_detail {

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

// An address from the settings (host names were resolved to addresses when they loaded) as an
// endpoint; throws std::runtime_error naming `what` otherwise.
boost::asio::ip::udp::endpoint resolve(const Endpoint& e, const std::string& what);

}  // namespace lidaremu::daemon::runtime_detail
