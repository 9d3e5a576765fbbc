#include "lidaremu/daemon/ops/reaper.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {

Reaper::Reaper(boost::asio::io_context& io)
    : io_(io), thread_([this] { run_guarded("the reaper", [this] { run(); }); }) {}

Reaper::~Reaper() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Reaper::retire(std::function<void()> wait, std::function<void()> done) {
  {
    const std::lock_guard lock(mutex_);
    jobs_.emplace_back(std::move(wait), std::move(done));
  }
  wake_.notify_one();
}

void Reaper::return_freed_memory() {
  {
    const std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (!trim_due_) trim_asked_first_ = now;
    trim_due_ = std::min(now + kQuietBeforeTrim,
                         trim_asked_first_ + std::chrono::steady_clock::duration(kTrimWaitsAtMost));
  }
  wake_.notify_one();
}

void Reaper::fix_heap_thresholds() {
  ::mallopt(M_MMAP_THRESHOLD, kHeapMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, kHeapTrimThreshold);
}

std::size_t Reaper::pending() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size() + running_;
}

void Reaper::finish() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return jobs_.empty() && running_ == 0; });
}

void Reaper::run() {
  leave_signals_to_the_main_thread();
  for (;;) {
    std::pair<std::function<void()>, std::function<void()>> job;
    {
      std::unique_lock lock(mutex_);
      const auto ready = [&] {
        return stopping_ || !jobs_.empty() ||
               (trim_due_ && std::chrono::steady_clock::now() >= *trim_due_);
      };
      while (!ready()) {
        if (trim_due_) {
          wake_.wait_until(lock, *trim_due_);
        } else {
          wake_.wait(lock);
        }
      }
      if (jobs_.empty() && !stopping_) {  // freed memory, and quiet since
        trim_due_.reset();
        lock.unlock();
        ::malloc_trim(0);
        continue;
      }
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    try {
      job.first();
    } catch (const std::exception& e) {
      spdlog::error("retiring a sensor: {}", e.what());
    }
    job.first = nullptr;  // what it held goes with `done`, on the io thread
    boost::asio::post(io_, std::move(job.second));
    const std::lock_guard lock(mutex_);
    --running_;
    idle_.notify_all();
  }
}

}  // namespace lidaremu::daemon
