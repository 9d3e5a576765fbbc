#pragma once
// The paced emitter must wake on time even when physics keeps every core busy: the default
// timer slack (50 us) is half the pacing budget, and the fair scheduler lets a waking thread
// wait for its turn (milliseconds on a loaded 2-core machine). (Lowering the physics threads'
// priority instead was measured and refused: preempted TBB workers stall each parallel_for's
// join, and physics took 3-5x longer.)

#include <tbb/task_scheduler_observer.h>

namespace lidaremu::daemon {

// What each of the daemon's threads is, in its name (at most 15 characters, the kernel's limit):
// lidaremu-bench reads the CPU each kind spends per beam from /proc (the serial part of a sensor
// is its input, encoding and sending thread). The physics workers are TBB's; the io thread and
// anything else keeps the process's name.
inline constexpr const char* kInputThreadName = "lre-input";
inline constexpr const char* kProcessingThreadName = "lre-process";
inline constexpr const char* kSendingThreadName = "lre-send";
inline constexpr const char* kPhysicsThreadName = "lre-physics";
void name_this_thread(const char* name);

// Names the TBB workers that join the calling thread's arena (each processing thread has its
// own), while alive.
class PhysicsWorkerNames final : public tbb::task_scheduler_observer {
 public:
  PhysicsWorkerNames() { observe(true); }
  ~PhysicsWorkerNames() override { observe(false); }
  PhysicsWorkerNames(const PhysicsWorkerNames&) = delete;
  PhysicsWorkerNames& operator=(const PhysicsWorkerNames&) = delete;
  PhysicsWorkerNames(PhysicsWorkerNames&&) = delete;
  PhysicsWorkerNames& operator=(PhysicsWorkerNames&&) = delete;
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) name_this_thread(kPhysicsThreadName);
  }
};

// Exact wake-ups for the calling thread (timer slack 1 ns) and, where the process may (root,
// CAP_SYS_NICE or an RLIMIT_RTPRIO), the real-time round-robin class at a low priority, so a
// wake-up preempts physics. Returns whether the real-time class was granted.
bool make_thread_punctual();

// Blocks SIGHUP, SIGINT and SIGTERM in the calling worker thread, so that the kernel hands them
// to the thread that waits for them (the io_context's) instead of one sleeping in a queue, where
// a sanitizer's deferred delivery could hold them for as long as it sleeps.
void leave_signals_to_the_main_thread();

}  // namespace lidaremu::daemon
