#pragma once
// No thread of the daemon ends in std::terminate. An exception escaping a worker thread's body
// (processing, sending, the live view, the Foxglove server, the reaper) is logged with the
// thread's name, the thread hands on whatever others wait for from it (so nothing hangs), and
// the daemon stops as after SIGTERM, draining what it can, then exits with kExitThreadFailed.
#include <exception>
#include <functional>
#include <string>

namespace lidaremu::daemon {

inline constexpr int kExitThreadFailed = 5;

// What asks the daemon to stop (main sets it: a post to the io thread). Before it is set, a
// failure is only logged and remembered.
void set_stop_request(std::function<void()> request_stop);

// Runs `body`; if it throws, logs "<what> failed: <reason>", remembers the failure, asks the
// daemon to stop, and runs `after_failure` (which must keep the thread's partners going: drain
// its queues, send its end markers).
void run_guarded(const std::string& what, const std::function<void()>& body,
                 const std::function<void()>& after_failure = {});

// What run_guarded does with a failure, for a thread that serves many parts and carries on
// with the others (the shared sender): logs "<what> failed: <reason>", remembers it and asks the
// daemon to stop.
void report_failure(const std::string& what, const std::exception_ptr& error);

// Whether any guarded thread failed since start (or since the last reset, in tests).
bool a_thread_failed();
void reset_thread_failures();

}  // namespace lidaremu::daemon
