// The one sending thread every sensor shares (daemon/runtime/paced_sender.hpp), in process with
// real threads and queues: each lane's packets in order and never before their time less the
// send-ahead, each lane's end seen, a failing lane losing only its own packets, one thread; the
// packet queue's wait-free rings and its wake-ups both ways.
#include <dirent.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/doorbell.hpp"
#include "lidaremu/daemon/runtime/paced_sender.hpp"
#include "lidaremu/daemon/runtime/packet_queue.hpp"
#include "lidaremu/daemon/runtime/spsc_ring.hpp"

using namespace lidaremu;
using daemon::PacedSender;

namespace {
using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// A lane whose packets are due at start_s plus their sensor time; it records when each left.
class RecordingLane final : public daemon::SendLane {
 public:
  struct Sent {
    double sensor_time_s;
    double due_s;
    double at_s;
  };
  RecordingLane(daemon::PacketQueue& queue, double start_s, int fail_at = -1)
      : SendLane(queue, "a test lane: sending"), start_s_(start_s), fail_at_(fail_at) {}
  double due_s(const daemon::PacketSlot& slot, double /*now_s*/) override {
    return start_s_ + slot.sensor_time_s;
  }
  void send(const daemon::PacketSlot& slot, double due_s) override {
    const std::lock_guard lock(mutex_);
    if (static_cast<int>(sent_.size()) == fail_at_) throw std::runtime_error("socket gone");
    sent_.push_back({slot.sensor_time_s, due_s, now_s()});
  }
  void ended() override {
    const std::lock_guard lock(mutex_);
    ended_after_ = sent_.size();
    ++ends_;
  }
  std::vector<Sent> sent() {
    const std::lock_guard lock(mutex_);
    return sent_;
  }
  std::size_t ended_after() {
    const std::lock_guard lock(mutex_);
    return ended_after_;
  }
  int ends() {
    const std::lock_guard lock(mutex_);
    return ends_;
  }

 private:
  double start_s_;
  int fail_at_;
  std::mutex mutex_;
  std::vector<Sent> sent_;
  std::size_t ended_after_ = 0;
  int ends_ = 0;
};

// Queues `count` packets `gap_s` of sensor time apart, then the end, from a thread of its own
// (as a processing thread does); `refused` counts the packets the queue refused (Catch's
// assertions are for the test's own thread).
std::thread produce(daemon::PacketQueue& queue, int count, double gap_s,
                    std::atomic<int>& refused) {
  return std::thread([&queue, count, gap_s, &refused] {
    const std::vector<std::uint8_t> bytes(100, 0xab);
    for (int i = 0; i < count; ++i) {
      if (!queue.put(bytes, {.sensor_time_s = i * gap_s})) ++refused;
      // Some packets come while the sender sleeps on an empty lane, some in bursts.
      if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    queue.end();
  });
}

// This process's threads named `name`: their /proc/self/task/TID directories.
std::vector<std::string> tasks_named(const std::string& name) {
  std::vector<std::string> found;
  DIR* tasks = ::opendir("/proc/self/task");
  REQUIRE(tasks != nullptr);
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(task + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name == name) found.push_back(task);
  }
  ::closedir(tasks);
  return found;
}

}  // namespace

TEST_CASE(
    "The shared sender sends each lane's packets in order, none before its time less the "
    "send-ahead, and sees each lane's end",
    "[daemon][pacing]") {
  constexpr int kLanes = 3;
  constexpr int kPackets = 60;
  constexpr double kGapS = 1e-3;
  std::vector<std::unique_ptr<daemon::PacketQueue>> queues;
  std::vector<std::shared_ptr<RecordingLane>> lanes;
  const double start_s = now_s() + 0.02;
  for (int k = 0; k < kLanes; ++k) {
    queues.push_back(std::make_unique<daemon::PacketQueue>(kPackets + 1, 128));
    // Staggered, as sensors started at different moments are.
    lanes.push_back(std::make_shared<RecordingLane>(*queues.back(), start_s + k * 0.37e-3));
    PacedSender::shared().add(lanes.back());
  }
  std::vector<std::thread> producers;
  producers.reserve(kLanes);
  std::atomic<int> refused{0};
  for (int k = 0; k < kLanes; ++k) {
    producers.push_back(produce(*queues[k], kPackets, kGapS, refused));
  }
  for (auto& p : producers) p.join();
  REQUIRE(refused == 0);
  for (auto& lane : lanes) lane->wait_ended();
  for (auto& lane : lanes) {
    const auto sent = lane->sent();
    REQUIRE(sent.size() == kPackets);
    for (std::size_t i = 0; i < sent.size(); ++i) {
      CHECK(sent[i].sensor_time_s == Approx(static_cast<double>(i) * kGapS));
      CHECK(sent[i].at_s >= sent[i].due_s - PacedSender::kSendAheadS);
    }
    CHECK(lane->ends() == 1);
    CHECK(lane->ended_after() == kPackets);
  }
  // Every sensor's lane on the one thread.
  CHECK(tasks_named("lre-send").size() == 1);
}

TEST_CASE("A lane whose send fails loses its own packets only; its end is still seen",
          "[daemon][pacing]") {
  // A failure as any thread's: remembered, and the daemon asked to stop in order (which the
  // other lanes' packets still reach).
  daemon::reset_thread_failures();
  std::atomic<int> stop_requests{0};
  daemon::set_stop_request([&] { ++stop_requests; });
  daemon::PacketQueue failing_queue(41, 128);
  daemon::PacketQueue healthy_queue(41, 128);
  const double start_s = now_s();
  auto failing = std::make_shared<RecordingLane>(failing_queue, start_s, 5);
  auto healthy = std::make_shared<RecordingLane>(healthy_queue, start_s);
  PacedSender::shared().add(failing);
  PacedSender::shared().add(healthy);
  std::atomic<int> refused{0};
  std::thread a = produce(failing_queue, 40, 1e-4, refused);
  std::thread b = produce(healthy_queue, 40, 1e-4, refused);
  a.join();
  b.join();
  REQUIRE(refused == 0);
  failing->wait_ended();
  healthy->wait_ended();
  CHECK(daemon::a_thread_failed());
  CHECK(stop_requests == 1);
  daemon::set_stop_request({});
  daemon::reset_thread_failures();
  CHECK(failing->sent().size() == 5);
  CHECK(failing->ends() == 1);
  CHECK(healthy->sent().size() == 40);
  // Every slot of the failed lane came back: the queue holds nothing, and takes a full load again
  // without waiting.
  CHECK(failing_queue.queued() == 0);
}

namespace {
// How often this process's threads named `name` have woken (test::wake_ups).
std::uint64_t wake_ups_of(const std::string& name) {
  std::uint64_t total = 0;
  for (const std::string& task : tasks_named(name)) total += test::wake_ups(task).value_or(0);
  return total;
}

void busy_for(std::chrono::microseconds span) {
  const auto until = Clock::now() + span;
  while (Clock::now() < until) {
  }
}
}  // namespace

TEST_CASE("Packets queued in one wake batch wake the sender once, not once each",
          "[daemon][pacing]") {
  // An encoding step queues a few packets some tens of microseconds apart (the encoding between
  // them); the sender, woken by each, sent one and slept again.
  constexpr std::size_t kBatches = 40;
  constexpr std::size_t kPerBatch = 8;
  daemon::PacketQueue queue(static_cast<int>(kBatches * kPerBatch) + 1, 128);
  auto lane = std::make_shared<RecordingLane>(queue, 0.0);  // every packet due at once
  PacedSender::shared().add(lane);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t before = wake_ups_of("lre-send");
  const std::vector<std::uint8_t> bytes(100, 0xab);
  for (std::size_t batch = 0; batch < kBatches; ++batch) {
    {
      const daemon::PacketQueue::WakeBatch one_wake(queue);
      for (std::size_t i = 0; i < kPerBatch; ++i) {
        CHECK(queue.put(bytes, {.sensor_time_s = 0}));  // no REQUIRE: the lane must still end
        busy_for(std::chrono::microseconds(100));       // the encoding of the next packet
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the next step's physics
  }
  const std::uint64_t woken = wake_ups_of("lre-send") - before;
  queue.end();
  lane->wait_ended();
  CHECK(lane->sent().size() == kBatches * kPerBatch);
  INFO("the sender woke " << woken << " times for " << kBatches << " batches of " << kPerBatch);
  // One wake-up a batch, and room for a stray one; a wake-up a packet would be 320.
  CHECK(woken <= 2 * kBatches);
}

TEST_CASE("A wake batch longer than the queue's slots wakes the sender for the slots it needs",
          "[daemon][pacing]") {
  // Back-pressure inside a batch: the packets held unwoken are what the sender must send to free
  // a slot, so the producer wakes it before waiting (without that, both would wait for ever).
  auto queue = std::make_shared<daemon::PacketQueue>(4, 128);
  auto lane = std::make_shared<RecordingLane>(*queue, 0.0);
  PacedSender::shared().add(lane);
  // The sender has found the lane empty and sleeps: only the producer can wake it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  std::thread producer([queue, finished = std::move(finished)]() mutable {
    const std::vector<std::uint8_t> bytes(100, 0xcd);
    {
      const daemon::PacketQueue::WakeBatch one_wake(*queue);
      // Fewer than kWakeBatchPackets: no wake-up but the one before waiting for a slot.
      for (int i = 0; i < 12; ++i) (void)queue->put(bytes, {.sensor_time_s = 0});
    }
    queue->end();
    finished.set_value();
  });
  const bool in_time = done.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  if (!in_time) producer.detach();  // stuck for good: the queue it holds stays alive with it
  REQUIRE(in_time);
  producer.join();
  lane->wait_ended();
  CHECK(lane->sent().size() == 12);
}

TEST_CASE("The sender's doorbell: a ring before the wait is kept, a deadline ends a wait",
          "[daemon][pacing]") {
  daemon::Doorbell bell;
  bell.ring();
  bell.ring();  // rung twice before a wait: one wake-up
  CHECK(bell.wait(now_s() + 60));
  CHECK_FALSE(bell.take());
  const double deadline = now_s() + 0.02;
  CHECK_FALSE(bell.wait(deadline));
  CHECK(now_s() >= deadline);
  bell.ring();
  CHECK(bell.take());
  CHECK_FALSE(bell.take());
}

TEST_CASE("The sender's doorbell: rings from other threads wake the waiter, none is lost",
          "[daemon][pacing]") {
  // Producers put work, then ring (as the processing threads queue packets, then poke); the
  // waiter takes what is there, then waits. A lost ring would leave the waiter asleep with work
  // waiting: its wait then ends only at the deadline, and the check fails.
  daemon::Doorbell bell;
  std::atomic<int> put{0};
  constexpr int kProducers = 4;
  constexpr int kEach = 20000;
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        put.fetch_add(1, std::memory_order_release);
        bell.ring();
      }
    });
  }
  int taken = 0;
  int deadlines_hit = 0;
  while (taken < kProducers * kEach) {
    if (put.load(std::memory_order_acquire) > taken) {
      taken = put.load(std::memory_order_acquire);
      continue;
    }
    if (!bell.wait(now_s() + 10)) ++deadlines_hit;
    if (deadlines_hit > 0) break;
  }
  for (auto& t : producers) t.join();
  CHECK(deadlines_hit == 0);
  CHECK(taken == kProducers * kEach);
}

TEST_CASE("The packet queue's rings: in order, bounded, nothing lost between two threads",
          "[daemon][pacing]") {
  daemon::SpscRing<std::uint64_t> ring(8);
  for (std::uint64_t i = 0; i < 8; ++i) CHECK(ring.try_push(i));
  CHECK_FALSE(ring.try_push(8));  // full: refused, nothing overwritten
  CHECK(ring.size() == 8);
  std::uint64_t item = 0;
  for (std::uint64_t i = 0; i < 5; ++i) {
    REQUIRE(ring.try_pop(item));
    CHECK(item == i);
  }
  for (std::uint64_t i = 8; i < 13; ++i) CHECK(ring.try_push(i));  // across the wrap
  for (std::uint64_t i = 5; i < 13; ++i) {
    REQUIRE(ring.try_pop(item));
    CHECK(item == i);
  }
  CHECK_FALSE(ring.try_pop(item));

  // One producer, one consumer, each spinning on the other's progress through a small ring.
  constexpr std::uint64_t kItems = 300000;
  daemon::SpscRing<std::uint64_t> shared(4);
  std::thread producer([&] {
    for (std::uint64_t i = 1; i <= kItems; ++i) {
      while (!shared.try_push(i)) std::this_thread::yield();
    }
  });
  std::uint64_t expected = 1;
  std::uint64_t out_of_order = 0;
  while (expected <= kItems) {
    if (!shared.try_pop(item)) continue;
    if (item != expected) ++out_of_order;
    expected = item + 1;
  }
  producer.join();
  CHECK(out_of_order == 0);
  CHECK(shared.size() == 0);
}

TEST_CASE("A packet queue under constant back-pressure loses no wake-up, either way",
          "[daemon][pacing]") {
  // Three slots between a producer and a consumer at full speed: the producer keeps waiting for
  // a slot back (rung by give_back) and the consumer for a packet (rung by put). A lost ring
  // leaves one asleep for good; the timeout then fails the test instead of hanging it.
  constexpr std::uint32_t kPackets = 50000;
  auto queue = std::make_shared<daemon::PacketQueue>(3, 16);
  std::thread producer([queue] {
    for (std::uint32_t i = 0; i < kPackets; ++i) {
      std::array<std::uint8_t, 4> bytes{};
      std::memcpy(bytes.data(), &i, sizeof i);
      (void)queue->put(bytes, {.frame_sequence = i});
    }
    queue->end();
  });
  std::promise<std::pair<std::uint32_t, std::uint32_t>> result;  // packets, out of order
  std::future<std::pair<std::uint32_t, std::uint32_t>> done = result.get_future();
  std::thread consumer([queue, result = std::move(result)]() mutable {
    std::uint32_t taken = 0;
    std::uint32_t out_of_order = 0;
    while (daemon::PacketSlot* slot = queue->take()) {
      std::uint32_t value = 0;
      std::memcpy(&value, slot->bytes.data(), sizeof value);
      if (value != taken || slot->frame_sequence != taken || slot->size != 4) ++out_of_order;
      ++taken;
      queue->give_back(slot);
    }
    result.set_value({taken, out_of_order});
  });
  const bool in_time = done.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!in_time) {  // stuck for good: the queue they hold stays alive with them
    producer.detach();
    consumer.detach();
  }
  REQUIRE(in_time);
  producer.join();
  consumer.join();
  const auto [taken, out_of_order] = done.get();
  CHECK(taken == kPackets);
  CHECK(out_of_order == 0);
}
