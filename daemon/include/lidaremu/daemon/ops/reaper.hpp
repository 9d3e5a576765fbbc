#pragma once
// Waiting belongs on a thread of its own. Retiring a sensor (a reinitialisation, a reload) means
// waiting until its threads have processed and sent what it accepted: up to a few frame periods.
// On the io thread, which receives every sensor's input and answers every HTTP request, that wait
// starved the rest (291 reinitialisations in 15 s cut a neighbour from 753 to 81 packets/s).
// The reaper does the waiting, then hands what is left back to the io thread, where the handlers
// the retired sensor left queued run before it is destroyed.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace lidaremu::daemon {

class Reaper {
 public:
  explicit Reaper(boost::asio::io_context& io);
  // Waits for every job still pending (at shutdown).
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Runs `wait` on the reaper's thread, then posts `done` to the io_context (it may own what
  // `wait` waited for: it is destroyed there).
  void retire(std::function<void()> wait, std::function<void()> done);
  // Once retired objects are freed (on the io thread): gives the heap's free memory back to the
  // system, on the reaper's thread, once no more was freed for kQuietBeforeTrim. glibc keeps what
  // its arenas freed: a storm of 100 reloads of four sensors took the daemon from 136 MB to
  // 850 MB, which malloc_trim brings back to 148 MB. A trim holds each arena's lock while it
  // returns its pages (up to 115 ms): trimmed after every retired pipeline, a client
  // reinitialising in a loop stalled the io thread's allocations (/healthz p99 115 ms); while a
  // storm lasts, the arenas mostly reuse what it frees, and a trim comes at the latest
  // kTrimWaitsAtMost after the first free it covers (a client reinitialising for hours).
  static constexpr std::chrono::milliseconds kQuietBeforeTrim{1000};
  // malloc_trim returns the free pages inside every arena but not the free top of a thread's
  // arena, which glibc keeps up to its trim threshold; and glibc raises that threshold (to twice
  // the largest mmapped block freed, up to 64 MiB an arena) as blocks are freed. After a storm of
  // reloads 3-55 MB more than before stayed resident, depending on which threads' arenas the
  // pipelines had landed in. Fixed thresholds, set before any thread starts: blocks from
  // kHeapMmapThreshold up are mapped and unmapped on their own, and an arena's free top is given
  // back past kHeapTrimThreshold (after the storm: 1-3 MB more than before, in ten runs).
  static constexpr int kHeapMmapThreshold = 1 << 20;
  static constexpr int kHeapTrimThreshold = 1 << 20;
  static void fix_heap_thresholds();
  static constexpr std::chrono::seconds kTrimWaitsAtMost{20};
  void return_freed_memory();
  // Jobs not finished yet (waiting or running).
  [[nodiscard]] std::size_t pending() const;
  // Blocks until every job retired so far has finished waiting (at shutdown, before the
  // recordings are flushed).
  void finish();

 private:
  void run();

  boost::asio::io_context& io_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::pair<std::function<void()>, std::function<void()>>> jobs_;
  std::size_t running_ = 0;
  std::optional<std::chrono::steady_clock::time_point> trim_due_;
  std::chrono::steady_clock::time_point trim_asked_first_;  // the oldest free trim_due_ covers
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace lidaremu::daemon
