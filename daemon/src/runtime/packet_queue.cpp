#include "lidaremu/daemon/runtime/packet_queue.hpp"

#include <algorithm>
#include <chrono>

#include "lidaremu/daemon/runtime/paced_sender.hpp"

namespace lidaremu::daemon {

PacketQueue::PacketQueue(int slots, std::size_t slot_bytes) : slot_bytes_(slot_bytes) {
  free_.set_capacity(slots);
  ready_.set_capacity(slots + 1);  // + the end marker
  pool_.reserve(static_cast<std::size_t>(slots));
  for (int i = 0; i < slots; ++i) {
    pool_.push_back(std::make_unique<PacketSlot>());
    pool_.back()->bytes.resize(slot_bytes);
    free_.push(pool_.back().get());
  }
}

bool PacketQueue::put(std::span<const std::uint8_t> bytes, const PacketTag& tag) {
  if (bytes.size() > slot_bytes_) return false;
  PacketSlot* slot = nullptr;
  if (!free_.try_pop(slot)) {
    wake_sender();    // the packets a batch holds unwoken are what the sender must free
    free_.pop(slot);  // blocks while the sender is behind: back-pressure
  }
  std::copy(bytes.begin(), bytes.end(), slot->bytes.begin());
  slot->size = bytes.size();
  slot->sensor_time_s = tag.sensor_time_s;
  slot->frame_sequence = tag.frame_sequence;
  slot->frame_input_done_ns = tag.frame_input_done_ns;
  slot->channel = tag.channel;
  slot->queued_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
  ready_.push(slot);
  if (batching_ && ++unwoken_ < kWakeBatchPackets) return true;
  wake_sender();
  return true;
}

void PacketQueue::end() {
  ready_.push(nullptr);
  wake_sender();
}

void PacketQueue::wake_sender() {
  unwoken_ = 0;
  // Ordered after the push, as the sender's request is before its second look: either it sees
  // the packet or this sees its request (both sequentially consistent).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sender_ != nullptr && sender_waiting_.load(std::memory_order_seq_cst) &&
      sender_waiting_.exchange(false, std::memory_order_seq_cst)) {
    sender_->poke();
  }
}

PacketSlot* PacketQueue::take() {
  PacketSlot* slot = nullptr;
  ready_.pop(slot);
  return slot;
}

bool PacketQueue::try_take(PacketSlot*& slot) { return ready_.try_pop(slot); }

void PacketQueue::give_back(PacketSlot* slot) { free_.push(slot); }

std::size_t PacketQueue::queued() const {
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, ready_.size()));
}

}  // namespace lidaremu::daemon
