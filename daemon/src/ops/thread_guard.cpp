#include "lidaremu/daemon/ops/thread_guard.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <exception>
#include <mutex>

namespace lidaremu::daemon {
namespace {

std::mutex stop_mutex;
std::function<void()> stop_request;  // guarded by stop_mutex
std::atomic<bool> failed{false};

std::string reason_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

void set_stop_request(std::function<void()> request_stop) {
  const std::lock_guard lock(stop_mutex);
  stop_request = std::move(request_stop);
}

void report_failure(const std::string& what, const std::exception_ptr& error) {
  spdlog::critical("{} failed: {}; the daemon stops", what, reason_of(error));
  failed = true;
  const std::lock_guard lock(stop_mutex);
  if (stop_request) stop_request();
}

void run_guarded(const std::string& what, const std::function<void()>& body,
                 const std::function<void()>& after_failure) {
  try {
    body();
    return;
  } catch (...) {
    report_failure(what, std::current_exception());
  }
  if (!after_failure) return;
  try {
    after_failure();
  } catch (...) {
    spdlog::critical("{}: handing on after the failure failed too: {}", what,
                     reason_of(std::current_exception()));
  }
}

bool a_thread_failed() { return failed; }
void reset_thread_failures() { failed = false; }

}  // namespace lidaremu::daemon
