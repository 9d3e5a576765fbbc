#pragma once
// What the host gives a thread that must wake on time: a thread made punctual as the daemon's
// paced sender is (core::make_thread_punctual) sleeps to absolute deadlines every millisecond
// and records how late each wake-up came. The daemon's pacing error cannot be smaller than this
// floor (a virtual machine whose host deschedules it, a kernel without preemption, another
// real-time thread), so lidaremu-bench prints both side by side.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace lidaremu::clients {

class WakeupProbe {
 public:
  struct Summary {
    std::uint64_t wakeups = 0;
    double p99_us = 0;
    double max_us = 0;
    bool realtime = false;  // whether the real-time class was granted (as the daemon's sender)
  };
  static constexpr std::chrono::microseconds kPeriod{1000};

  // Starts probing at once.
  WakeupProbe();
  ~WakeupProbe();
  WakeupProbe(const WakeupProbe&) = delete;
  WakeupProbe& operator=(const WakeupProbe&) = delete;
  WakeupProbe(WakeupProbe&&) = delete;
  WakeupProbe& operator=(WakeupProbe&&) = delete;

  // Stops probing (once; later calls return the same) and summarises the wake-ups so far.
  Summary stop();

 private:
  void run();

  // Lateness in whole microseconds, one bucket each up to kBuckets - 1; later ones in the last.
  static constexpr std::size_t kBuckets = 100'000;
  std::vector<std::uint32_t> late_us_;
  std::uint64_t max_ns_ = 0;
  bool realtime_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  bool stopped_ = false;
  Summary summary_;
};

}  // namespace lidaremu::clients
