#include "lidaremu/daemon/runtime/paced_sender.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <thread>

#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/packet_queue.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {
namespace {
using Clock = std::chrono::steady_clock;

double steady_now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}
}  // namespace

void SendLane::wait_ended() {
  std::unique_lock lock(ended_mutex_);
  ended_cv_.wait(lock, [this] { return ended_; });
}

void SendLane::mark_ended() {
  // Notified under the lock: the waiter may drop its share of the lane as soon as it returns,
  // and the sender still holds its own share until this returns.
  const std::lock_guard lock(ended_mutex_);
  ended_ = true;
  ended_cv_.notify_all();
}

PacedSender& PacedSender::shared() {
  // Never destroyed: a lane may still be sending while static destructors run at exit.
  static PacedSender* const sender = new PacedSender;
  return *sender;
}

PacedSender::PacedSender() {
  std::thread([this] {
    leave_signals_to_the_main_thread();
    name_this_thread(kSendingThreadName);
    const bool punctual = core::make_thread_punctual();
    {
      const std::lock_guard lock(started_mutex_);
      punctual_ = punctual;
      started_ = true;
    }
    started_cv_.notify_all();
    run();
  }).detach();
}

bool PacedSender::punctual() {
  std::unique_lock lock(started_mutex_);
  started_cv_.wait(lock, [this] { return started_; });
  return punctual_;
}

void PacedSender::add(std::shared_ptr<SendLane> lane) {
  lane->queue_.wake_on_put(this);
  {
    const std::lock_guard lock(added_mutex_);
    added_.push_back(std::move(lane));
  }
  lanes_added_.store(true, std::memory_order_release);
  poke();
}

void PacedSender::poke() { doorbell_.ring(); }

bool PacedSender::serve(SendLane& lane, double& earliest_s) {
  for (int sent = 0; sent < kPacketsPerTurn; ++sent) {
    const double now_s = steady_now_s();
    if (lane.head_ == nullptr) {
      PacketSlot* slot = nullptr;
      if (!lane.queue_.try_take(slot)) {
        // Asked to be woken, then looked again: a packet queued in between is seen either here
        // or by the poke its queue sends.
        lane.queue_.sender_waits();
        if (!lane.queue_.try_take(slot)) return false;
      }
      if (slot == nullptr) return true;  // the end
      lane.head_ = slot;
      lane.head_due_s_ = now_s;
      if (!lane.failed_) {
        try {
          lane.head_due_s_ = lane.due_s(*slot, now_s);
        } catch (...) {
          report_failure(lane.what_, std::current_exception());
          lane.failed_ = true;
        }
      }
    }
    if (lane.head_due_s_ > now_s + kSendAheadS) {
      earliest_s = std::min(earliest_s, lane.head_due_s_);
      return false;
    }
    if (!lane.failed_) {
      try {
        lane.send(*lane.head_, lane.head_due_s_);
      } catch (...) {
        report_failure(lane.what_, std::current_exception());
        lane.failed_ = true;
      }
    }
    lane.queue_.give_back(lane.head_);
    lane.head_ = nullptr;
  }
  earliest_s = -std::numeric_limits<double>::infinity();  // a backlog: come back at once
  return false;
}

void PacedSender::run() {
  std::vector<std::shared_ptr<SendLane>> ended;
  for (;;) {
    double earliest_s = std::numeric_limits<double>::infinity();
    if (lanes_added_.exchange(false, std::memory_order_acquire)) {
      const std::lock_guard lock(added_mutex_);
      for (auto& lane : added_) lanes_.push_back(std::move(lane));
      added_.clear();
    }
    for (std::size_t i = 0; i < lanes_.size();) {
      if (serve(*lanes_[i], earliest_s)) {
        ended.push_back(std::move(lanes_[i]));
        lanes_[i] = std::move(lanes_.back());
        lanes_.pop_back();
        continue;
      }
      ++i;
    }
    for (auto& lane : ended) {
      lane->ended();
      lane->mark_ended();
    }
    ended.clear();
    if (earliest_s == std::numeric_limits<double>::infinity()) {
      doorbell_.wait();
    } else if (earliest_s > steady_now_s()) {
      doorbell_.wait(earliest_s);
    } else {
      doorbell_.take();  // a backlog: a poke meanwhile is for what it serves now
    }
  }
}

}  // namespace lidaremu::daemon
