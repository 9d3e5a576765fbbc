#pragma once
// The packets between a sensor's processing thread and its sending thread: a fixed pool of
// slots, each as large as the largest packet the encoder sends, allocated once. The processing
// thread waits for a free slot when the sender is behind (back-pressure, never growth); a packet
// larger than a slot is refused as a value, for the caller to count, never written past the end.
// Both ways (packets to the sender, slots back) are wait-free rings (spsc_ring.hpp): the sender,
// real-time where it may be, never waits on a processing thread's progress.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/daemon/runtime/doorbell.hpp"
#include "lidaremu/daemon/runtime/spsc_ring.hpp"

namespace lidaremu::daemon {

class PacedSender;

struct PacketSlot {
  std::vector<std::uint8_t> bytes;  // capacity; the packet is the first `size`
  std::size_t size = 0;
  double sensor_time_s = 0;
  // Which frame the packet is of (counting processed frames), and that frame's
  // FrameHits::input_done_ns once known (0 in packets encoded before its input was complete).
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
  std::int64_t queued_ns = 0;  // when put() queued it (steady clock)
  core::PacketChannel channel = core::PacketChannel::kData;
  [[nodiscard]] std::span<const std::uint8_t> packet() const { return {bytes.data(), size}; }
};

// What a packet was of, besides its bytes.
struct PacketTag {
  core::PacketChannel channel = core::PacketChannel::kData;
  double sensor_time_s = 0;
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
};

// One processing thread puts and ends; one sending thread takes and gives back.
class PacketQueue {
 public:
  PacketQueue(int slots, std::size_t slot_bytes);
  PacketQueue(const PacketQueue&) = delete;
  PacketQueue& operator=(const PacketQueue&) = delete;

  // Processing thread: copies the packet into a free slot (waiting for one) and queues it.
  // False, with nothing queued, when it is larger than a slot.
  bool put(std::span<const std::uint8_t> bytes, const PacketTag& tag);
  // Processing thread: the packets put while a WakeBatch lives wake the sender once, when it
  // ends (or as every kWakeBatchPackets-th is queued, or before waiting for a free slot). An
  // encoding step queues several packets in tens of microseconds; woken by each, the sender
  // sent one and slept again, a wake-up per packet (2,490 a second for one OS1-128 2048x10 at
  // twice real time), each costing both cores tens of microseconds on a virtual machine.
  static constexpr int kWakeBatchPackets = 16;
  class WakeBatch {
   public:
    explicit WakeBatch(PacketQueue& queue) : queue_(queue) { queue_.batching_ = true; }
    WakeBatch(const WakeBatch&) = delete;
    WakeBatch& operator=(const WakeBatch&) = delete;
    ~WakeBatch() {
      queue_.batching_ = false;
      if (queue_.unwoken_ > 0) queue_.wake_sender();
    }

   private:
    PacketQueue& queue_;
  };
  // Processing thread: the end of the stream; take() returns null after the packets before it.
  void end();
  // Sending thread: the next packet (waits for one), or null at the end; give it back once sent.
  // For a queue no PacedSender takes from (wake_on_put), which it would poke instead.
  PacketSlot* take();
  // Sending thread: the next packet or null at the end, if there is one; never waits.
  bool try_take(PacketSlot*& slot);
  void give_back(PacketSlot* slot);
  // The sender that takes from this queue without waiting: it asks (sender_waits) to be poked
  // by the next packet or end queued.
  void wake_on_put(PacedSender* sender) { sender_ = sender; }
  void sender_waits() { sender_wants_waking_.ask(); }  // before the sender's second look

  [[nodiscard]] std::size_t slot_bytes() const { return slot_bytes_; }
  [[nodiscard]] int slots() const { return static_cast<int>(pool_.size()); }
  // Packets waiting to be sent (approximate, for metrics).
  [[nodiscard]] std::size_t queued() const;

 private:
  SpscRing<PacketSlot*> free_;   // sender -> processing thread
  SpscRing<PacketSlot*> ready_;  // processing thread -> sender; null: the end
  std::size_t slot_bytes_;
  std::vector<std::unique_ptr<PacketSlot>> pool_;
  PacedSender* sender_ = nullptr;
  WakeRequest sender_wants_waking_;
  Doorbell taker_bell_;  // take()'s wake-up, when no PacedSender takes
  // The processing thread waits for a free slot: the sender rings once it gives one back.
  WakeRequest putter_wants_waking_;
  Doorbell slot_freed_;
  // The processing thread's own: a WakeBatch is open, and how many packets it queued unwoken.
  bool batching_ = false;
  int unwoken_ = 0;
  void wake_sender();
  PacketSlot* free_slot();
};

}  // namespace lidaremu::daemon
