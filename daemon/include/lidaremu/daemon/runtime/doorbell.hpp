#pragma once
// A wake-up for one waiting thread that any thread rings without a lock (a Linux futex on one
// word). The paced sender (SCHED_RR where it may) slept on a mutex and condition variable that
// every processing thread took to wake it: a processing thread preempted while holding that
// mutex, under an overload where a normal thread waits tens of milliseconds for a CPU, held the
// real-time sender off until it ran again (a mutex without priority inheritance: the classic
// inversion). Ringing never blocks; a ring before the wait is kept, so none is lost.
#include <atomic>
#include <cstdint>
#include <optional>

namespace lidaremu::daemon {

class Doorbell {
 public:
  // Any thread: wakes the waiter, or the next wait returns at once. A system call only when the
  // bell was not rung already.
  void ring();
  // The waiting thread: until rung (true) or until the steady clock (CLOCK_MONOTONIC) reaches
  // deadline_s, when given (false). Takes the ring off.
  bool wait(std::optional<double> deadline_s = std::nullopt);
  // The waiting thread: takes a ring off without waiting; whether there was one.
  bool take() { return rung_.exchange(0, std::memory_order_acq_rel) != 0; }

 private:
  std::atomic<std::uint32_t> rung_{0};
};

// A thread's request to be woken, for a producer that wakes it only when asked: the common
// case (nobody asleep) costs the producer a fence and a load, no read-modify-write and no system
// call. The waiter asks, then looks at its work again before it sleeps; the producer makes its
// work visible, then takes the request. Both sequentially consistent: either the waiter sees the
// work or the producer sees the request.
class WakeRequest {
 public:
  // The waiter, before its last look.
  void ask() {
    asked_.store(true, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  // The waiter, when its last look found work after all.
  void withdraw() { asked_.store(false, std::memory_order_relaxed); }
  // The producer, after making its work visible: whether it must wake the waiter (the request
  // is then gone).
  bool take() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return asked_.load(std::memory_order_seq_cst) &&
           asked_.exchange(false, std::memory_order_seq_cst);
  }

 private:
  std::atomic<bool> asked_{false};
};

}  // namespace lidaremu::daemon
