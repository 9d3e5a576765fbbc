#pragma once
// The physics' cores are one resource for every sensor of the process (one TBB arena): frames of
// several sensors processed at once share it, and each then takes as long as all of them
// together. Under overload that makes every frame late. The gate lets one piece of work at a
// time into the physics.
//
// Frames not yet admitted wait in line by deadline (earliest deadline first: a frame's deadline
// is when its last packet must have left, so a 20 Hz sensor's frame goes before a 10 Hz one's
// that arrived with it, and, sensors alike, the frame that arrived first goes first; a sensor
// short of frames moves its frames ahead, FairShare). A frame's admission by deadline
// (FrameAdmission) is decided once it holds the gate, when its wait is known, so that frames
// queued behind others are dropped if they became stale there.
//
// An admitted frame goes before every frame not yet admitted, admitted frames in the order they
// were admitted. Its admission predicted when it leaves from the physics admitted before it; a
// frame admitted later and run first would make that prediction wrong. Ordered by deadline less
// the FairShare lead alone, a frame of a sensor whose share had fallen a little more (a lead of
// 20 periods per e-fold) overtook frames already admitted: under 8x overload, 30 % of the frames
// that left were over three periods old, the oldest six. So an admitted frame's physics still to
// come (its commitment) is a wait for every frame not yet admitted, and their admission counts
// all of it.
//
// A frame keeps its ticket for every step of its physics, so a frame streamed in steps (the
// processing thread waits for its columns between them) gets the cores back before any frame
// behind it whenever it has columns to take, and the frames behind use them while it waits.
// Without the kept ticket, eight streamed frames interleaved their steps first come first
// served, each frame's physics spread over the others', and every frame left older. And its
// thread keeps the gate itself from the admission through the steps that follow at once, until
// it leaves the physics (to encode, to wait for columns): handed back in between, the gate went
// to a frame admitted after it whenever its thread was off the CPU for a moment, and that
// frame's whole step (50-80 ms under overload) came first.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <tuple>

namespace lidaremu::daemon {

class PhysicsGate {
 public:
  // A frame's place in line: admitted frames first, in the order they were admitted; then its
  // deadline (steady-clock seconds, less its sensor's FairShare lead), then the order tickets
  // were drawn in (tickets are unique).
  struct Ticket {
    static constexpr std::uint64_t kNotAdmitted = std::numeric_limits<std::uint64_t>::max();
    double deadline_s = 0;
    std::uint64_t sequence = 0;
    std::uint64_t admission = kNotAdmitted;
    friend bool operator<(const Ticket& a, const Ticket& b) {
      return std::tie(a.admission, a.deadline_s, a.sequence) <
             std::tie(b.admission, b.deadline_s, b.sequence);
    }
    friend bool operator==(const Ticket& a, const Ticket& b) = default;
  };

 private:
  // The waiters and the commitments, each a node on its thread's stack: no allocation, and at
  // most one of each per sensor.
  struct Waiter {
    Ticket ticket;
    Waiter* next;
  };
  struct Committed {
    Ticket ticket;
    double remaining_s;
    Committed* next;
  };

 public:
  // Holds the gate while alive.
  class Pass {
   public:
    Pass(PhysicsGate& gate, Ticket ticket) : gate_(&gate) { gate_->enter(ticket); }
    ~Pass() { release(); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    Pass(Pass&&) = delete;
    Pass& operator=(Pass&&) = delete;
    void release() {
      if (gate_) gate_->leave();
      gate_ = nullptr;
    }

   private:
    PhysicsGate* gate_;
  };

  // A frame's place in line and, once admitted, its physics still to come, known to the
  // admission of every frame behind it. It lives, on its processing thread's stack, from the
  // frame's first request for the gate to its last step.
  class Commitment {
   public:
    Commitment(PhysicsGate& gate, Ticket ticket) : gate_(gate), node_{ticket, 0.0, nullptr} {
      const std::lock_guard lock(gate_.mutex_);
      node_.next = gate_.committed_;
      gate_.committed_ = &node_;
    }
    ~Commitment() {
      const std::lock_guard lock(gate_.mutex_);
      for (Committed** link = &gate_.committed_; *link != nullptr; link = &(*link)->next) {
        if (*link == &node_) {
          *link = node_.next;
          break;
        }
      }
    }
    Commitment(const Commitment&) = delete;
    Commitment& operator=(const Commitment&) = delete;
    Commitment(Commitment&&) = delete;
    Commitment& operator=(Commitment&&) = delete;

    // Changes once, when the frame is admitted (the processing thread's own).
    [[nodiscard]] Ticket ticket() const { return node_.ticket; }
    // The frame is admitted, its physics expected to take this long (its sensor's running
    // estimate): from now on it goes before every frame not yet admitted.
    void admit(double expected_s) {
      const std::lock_guard lock(gate_.mutex_);
      node_.ticket.admission = gate_.next_admission_++;
      node_.remaining_s = expected_s;
    }
    // A step of it took this long.
    void spend(double seconds) {
      const std::lock_guard lock(gate_.mutex_);
      node_.remaining_s = std::max(0.0, node_.remaining_s - seconds);
    }

   private:
    PhysicsGate& gate_;
    Committed node_;
  };

  // The process's gate: every sensor's processing thread passes through it.
  static PhysicsGate& shared() {
    static PhysicsGate gate;
    return gate;
  }

  // A frame's place in line, drawn once when it first asks for the gate: of the frames not yet
  // admitted, the earliest deadline goes first, and of equal deadlines the ticket drawn first.
  Ticket draw_ticket(double deadline_s) {
    const std::lock_guard lock(mutex_);
    return {deadline_s, next_sequence_++};
  }

  // The physics still to come of the admitted frames that go before the one holding this ticket:
  // for a frame not yet admitted, every admitted frame's.
  [[nodiscard]] double work_ahead_s(Ticket ticket) {
    const std::lock_guard lock(mutex_);
    double seconds = 0;
    for (const Committed* c = committed_; c != nullptr; c = c->next) {
      if (c->ticket < ticket) seconds += c->remaining_s;
    }
    return seconds;
  }

  // How many wait for the gate now (for tests and diagnostics).
  [[nodiscard]] int waiting() {
    const std::lock_guard lock(mutex_);
    int n = 0;
    for (const Waiter* w = waiting_; w != nullptr; w = w->next) ++n;
    return n;
  }

 private:
  void enter(Ticket ticket) {
    std::unique_lock lock(mutex_);
    Waiter self{ticket, waiting_};
    waiting_ = &self;
    turn_.wait(lock, [&] { return !busy_ && first_in_line() == &self; });
    unlink(&self);
    busy_ = true;
  }
  void leave() {
    {
      const std::lock_guard lock(mutex_);
      busy_ = false;
    }
    turn_.notify_all();
  }
  // The waiter due first (ties cannot happen: tickets are unique per frame, and a frame has one
  // step waiting at a time).
  [[nodiscard]] Waiter* first_in_line() const {
    Waiter* first = waiting_;
    for (Waiter* w = waiting_; w != nullptr; w = w->next) {
      if (w->ticket < first->ticket) first = w;
    }
    return first;
  }
  void unlink(const Waiter* self) {
    for (Waiter** link = &waiting_; *link != nullptr; link = &(*link)->next) {
      if (*link == self) {
        *link = self->next;
        return;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t next_admission_ = 0;
  bool busy_ = false;
  Waiter* waiting_ = nullptr;
  Committed* committed_ = nullptr;
};

}  // namespace lidaremu::daemon
