#pragma once
// A bounded queue between exactly one producing thread and one consuming thread, wait-free on
// both sides: a push is one store of the item and one release of the tail; a pop sees an item
// whole or not at all. The paced sender (SCHED_RR) took packets from tbb::concurrent_bounded_queue,
// whose try_pop, once it has claimed the ticket of a push still in progress, spins until that push
// ends: a processing thread preempted mid-push, under an overload where a normal thread waits
// tens of milliseconds for a CPU, held the real-time sender spinning on one of the two cores for
// up to 117 ms (traced, 2026-12-08) while every other thread shared the other.
#include <atomic>
#include <cstddef>
#include <vector>

namespace lidaremu::daemon {

template <typename T>
class SpscRing {
 public:
  explicit SpscRing(std::size_t capacity) : items_(capacity) {}
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // The producer: false, with nothing queued, when the ring is full.
  bool try_push(const T& item) {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == items_.size()) return false;
    items_[tail % items_.size()] = item;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  // The consumer: false when the ring is empty.
  bool try_pop(T& item) {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    item = items_[head % items_.size()];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  // The consumer: the item try_pop would take, left in place; false when the ring is empty.
  bool try_front(T& item) const {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    item = items_[head % items_.size()];
    return true;
  }
  // Either side: how many items are queued (exact only on a side that is not racing the other).
  [[nodiscard]] std::size_t size() const {
    const std::size_t head = head_.load(std::memory_order_acquire);
    return tail_.load(std::memory_order_acquire) - head;
  }
  [[nodiscard]] std::size_t capacity() const { return items_.size(); }

 private:
  // Apart, so that the producer's stores of the tail and the consumer's of the head do not
  // take each other's cache line.
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
  std::vector<T> items_;
};

}  // namespace lidaremu::daemon
