#include "lidaremu/daemon/runtime/packet_queue.hpp"

#include <algorithm>
#include <chrono>

#include "lidaremu/daemon/runtime/paced_sender.hpp"

namespace lidaremu::daemon {

PacketQueue::PacketQueue(int slots, std::size_t slot_bytes)
    : free_(static_cast<std::size_t>(std::max(slots, 1))),
      ready_(static_cast<std::size_t>(std::max(slots, 1)) + 1),  // + the end marker
      slot_bytes_(slot_bytes) {
  pool_.reserve(static_cast<std::size_t>(slots));
  for (int i = 0; i < slots; ++i) {
    pool_.push_back(std::make_unique<PacketSlot>());
    pool_.back()->bytes.resize(slot_bytes);
    free_.try_push(pool_.back().get());
  }
}

PacketSlot* PacketQueue::free_slot() {
  PacketSlot* slot = nullptr;
  if (free_.try_pop(slot)) return slot;
  wake_sender();  // the packets a batch holds unwoken are what the sender must free
  // Back-pressure while the sender is behind. Asked to be rung, then looked again: a slot given
  // back in between is seen either here or by the ring its return sends.
  for (;;) {
    putter_wants_waking_.ask();
    if (free_.try_pop(slot)) {
      putter_wants_waking_.withdraw();
      return slot;
    }
    slot_freed_.wait();
  }
}

bool PacketQueue::put(std::span<const std::uint8_t> bytes, const PacketTag& tag) {
  if (bytes.size() > slot_bytes_) return false;
  PacketSlot* slot = free_slot();
  std::copy(bytes.begin(), bytes.end(), slot->bytes.begin());
  slot->size = bytes.size();
  slot->sensor_time_s = tag.sensor_time_s;
  slot->frame_sequence = tag.frame_sequence;
  slot->frame_input_done_ns = tag.frame_input_done_ns;
  slot->channel = tag.channel;
  slot->queued_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
  ready_.try_push(slot);  // never full: it holds every slot and the end
  if (batching_ && ++unwoken_ < kWakeBatchPackets) return true;
  wake_sender();
  return true;
}

void PacketQueue::end() {
  ready_.try_push(nullptr);
  wake_sender();
}

void PacketQueue::wake_sender() {
  unwoken_ = 0;
  if (sender_wants_waking_.take()) {
    if (sender_ != nullptr) {
      sender_->poke();
    } else {
      taker_bell_.ring();
    }
  }
}

PacketSlot* PacketQueue::take() {
  PacketSlot* slot = nullptr;
  while (!try_take(slot)) {
    sender_waits();
    if (try_take(slot)) break;
    taker_bell_.wait();
  }
  return slot;
}

bool PacketQueue::try_take(PacketSlot*& slot) { return ready_.try_pop(slot); }

void PacketQueue::give_back(PacketSlot* slot) {
  free_.try_push(slot);  // never full: it holds every slot
  if (putter_wants_waking_.take()) slot_freed_.ring();
}

std::size_t PacketQueue::queued() const { return ready_.size(); }

}  // namespace lidaremu::daemon
