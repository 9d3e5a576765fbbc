#pragma once
// One sending thread for every sensor's packets: it sleeps until the earliest packet any sensor
// has due, and sends each packet due within kSendAheadS of then with it. A thread per sensor
// (before) woke once per packet, and a wake-up costs tens of microseconds of CPU on a virtual
// machine (the timer's and the switch's exits): 16 VLP-16s woke 12,000 times a second, 59 ns of
// CPU per beam sent, an eighth of two cores, besides the interrupts it put on the physics
// (issue 32: "emitters that do not compete with each other or with TBB workers").
//
// Each sensor is a SendLane: its packet queue, when each packet is due (its own pacing rule,
// pacing_schedule.hpp) and how it leaves (its sockets, its counters). The sender takes a lane's
// packets in order; a lane whose queue was found empty is woken by the queue's next packet.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lidaremu/daemon/runtime/doorbell.hpp"

namespace lidaremu::daemon {

class PacketQueue;
struct PacketSlot;

class SendLane {
 public:
  // `what`: the lane in a failure's message ("sensor NAME: sending").
  SendLane(PacketQueue& queue, std::string what) : queue_(queue), what_(std::move(what)) {}
  SendLane(const SendLane&) = delete;
  SendLane& operator=(const SendLane&) = delete;
  virtual ~SendLane() = default;

  // Sender thread, once per packet, in queue order, when it is taken up: when it is due
  // (steady-clock seconds); now_s or earlier to send it at once.
  virtual double due_s(const PacketSlot& slot, double now_s) = 0;
  // Sender thread: the packet leaves (or is discarded); its slot goes back to the queue after.
  virtual void send(const PacketSlot& slot, double due_s) = 0;
  // Sender thread: the queue's end arrived; nothing of the lane is used after this.
  virtual void ended() {}

  // Any thread: waits until the sender has seen the end of the lane's queue.
  void wait_ended();

 private:
  friend class PacedSender;
  void mark_ended();

  PacketQueue& queue_;
  std::string what_;
  PacketSlot* head_ = nullptr;  // taken up, not yet due
  double head_due_s_ = 0;
  // Its pacing or a send threw: a failure as any thread's (thread_guard.hpp: the daemon stops
  // in order); the rest of its packets are discarded, its end still awaited.
  bool failed_ = false;
  std::mutex ended_mutex_;
  std::condition_variable ended_cv_;
  bool ended_ = false;
};

class PacedSender {
 public:
  // A packet due this soon after the one that woke the sender leaves with it: one wake-up for
  // several (drivers read a packet's time from its timestamp, not its arrival; a real unit's
  // own jitter is of this order).
  static constexpr double kSendAheadS = 200e-6;
  // Packets a lane sends before the others get a turn, when it has a backlog.
  static constexpr int kPacketsPerTurn = 64;

  // The process's sender, its thread started on first use and never stopped (a daemon's life).
  static PacedSender& shared();

  // Starts sending the lane's packets (its queue pokes the sender when a packet arrives while
  // the lane was found empty). The sender keeps the lane until its queue's end.
  void add(std::shared_ptr<SendLane> lane);
  // Any thread: a lane found empty has a packet.
  void poke();
  // Whether the sending thread runs in the real-time class (core::make_thread_punctual).
  [[nodiscard]] bool punctual();

 private:
  PacedSender();
  void run();
  // Sends what the lane has due; returns whether its queue ended. `earliest` comes down to when
  // its next packet is due.
  bool serve(SendLane& lane, double& earliest_s);

  // Lanes added and not yet taken up by the sending thread: add() never waits for its sends (a
  // lock held while sending, taken again at once by a sender with a backlog, kept a
  // reinitialisation on the io thread waiting for seconds under ThreadSanitizer).
  // The sender takes the lock only when lanes_added_ says there are some: a thread preempted
  // while adding would otherwise hold the real-time sender off on every turn.
  std::mutex added_mutex_;
  std::vector<std::shared_ptr<SendLane>> added_;
  std::atomic<bool> lanes_added_{false};
  std::vector<std::shared_ptr<SendLane>> lanes_;  // the sending thread's own
  // Pokes wake the sender through this, without a lock a preempted poker could hold.
  Doorbell doorbell_;
  std::mutex started_mutex_;
  std::condition_variable started_cv_;
  bool started_ = false;  // the thread has set its class
  bool punctual_ = false;
};

}  // namespace lidaremu::daemon
