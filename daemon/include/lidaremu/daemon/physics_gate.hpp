#pragma once
// The physics' cores are one resource for every sensor of the process (one TBB arena): frames of
// several sensors processed at once share it, and each then takes as long as all of them
// together. Under overload that makes every frame late. The gate lets one frame at a time into
// the physics, first come first served, so each frame has all the cores and takes its own time;
// a frame's admission by deadline (FrameAdmission) is decided once it holds the gate, when its
// wait is known, so that frames queued behind others are dropped if they became stale there.
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace lidaremu::daemon {

class PhysicsGate {
 public:
  // Holds the gate while alive.
  class Pass {
   public:
    explicit Pass(PhysicsGate& gate) : gate_(&gate) { gate_->enter(); }
    ~Pass() { release(); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    void release() {
      if (gate_) gate_->leave();
      gate_ = nullptr;
    }

   private:
    PhysicsGate* gate_;
  };

  // The process's gate: every sensor's processing thread passes through it.
  static PhysicsGate& shared() {
    static PhysicsGate gate;
    return gate;
  }

 private:
  // A ticket lock: the order of arrival is the order of entry, so no sensor starves.
  void enter() {
    std::unique_lock lock(mutex_);
    const std::uint64_t ticket = next_ticket_++;
    turn_.wait(lock, [&] { return serving_ == ticket; });
  }
  void leave() {
    {
      const std::lock_guard lock(mutex_);
      ++serving_;
    }
    turn_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
};

}  // namespace lidaremu::daemon
