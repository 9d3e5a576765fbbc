#pragma once
// What the parts of SensorRuntime share: sensor_runtime.cpp (its life), sensor_ingest.cpp (what
// the engine sends, on the input thread), sensor_processing.cpp (physics and encoding, on the
// processing thread), sensor_emission.cpp (packets out at the sensor's pace, on the sending
// thread).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/ops/log_marks.hpp"

namespace lidaremu::daemon::runtime_detail {

// A steady-clock reading in seconds, the unit the admission's predictions use.
inline double steady_s(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

inline double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using daemon::passes_log_mark;  // ops/log_marks.hpp
using daemon::worth_logging;

// An address from the settings (host names were resolved to addresses when they loaded) as an
// endpoint; throws std::runtime_error naming `what` otherwise.
boost::asio::ip::udp::endpoint resolve(const Endpoint& e, const std::string& what);

// The context of the sockets that only their own threads use, synchronously: the hit sockets
// (the input thread polls them) and the sender sockets. No handler of theirs ever runs, so it is
// never run, and no thread waits on its epoll: asio registers every socket it opens with its
// context's epoll (edge-triggered), and a hit socket on the io thread's context woke that thread
// for every datagram the engine sent, to do nothing. One for the process: a context per sensor
// would cost its epoll, eventfd and timerfd on every (re)initialisation.
boost::asio::io_context& handlerless_io();

}  // namespace lidaremu::daemon::runtime_detail
