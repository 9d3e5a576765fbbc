#pragma once
// A frame the input thread fills while the processing thread follows it: the input thread hands
// the frame on when its first batch is stored, then publishes how many leading columns are in
// (they no longer change) and, last, that the frame is complete. The processing thread runs
// the physics on the published columns as they come (core::Pipeline::advance).
#include <atomic>
#include <cstdint>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/daemon/runtime/pending_batches.hpp"

namespace lidaremu::daemon {

class StreamedFrame {
 public:
  core::FrameHits hits;
  // Framed input: batches whose columns are marked in `hits` but whose rows the processing
  // thread converts (pending_batches.hpp); a column is published once its batch is appended.
  PendingBatches pending;

  // What the processing thread reads: columns [0, ready) are in for good; complete: the whole
  // frame is (the columns never received stay empty: no return).
  struct Progress {
    std::uint32_t ready = 0;
    bool complete = false;
  };

  // Input thread, before the frame is handed on: nothing published yet.
  void restart() {
    progress_.store(0, std::memory_order_relaxed);
    woken_at_ = 0;
  }
  // Input thread: columns [0, ready) are stored and will not change. Wakes the processing
  // thread only every `wake_every` columns, so that a frame of many small datagrams does not
  // wake it for each.
  void publish(std::uint32_t ready, std::uint32_t wake_every) {
    progress_.store(ready, std::memory_order_release);
    if (ready >= woken_at_ + wake_every) {
      woken_at_ = ready;
      progress_.notify_one();
    }
  }
  // Input thread: the frame is complete; everything stored before is visible to the reader.
  void complete() {
    progress_.fetch_or(kComplete, std::memory_order_release);
    progress_.notify_one();
  }
  // Processing thread.
  [[nodiscard]] Progress progress() const {
    const std::uint64_t word = progress_.load(std::memory_order_acquire);
    return {static_cast<std::uint32_t>(word), (word & kComplete) != 0};
  }
  // Processing thread: sleeps until the progress differs from `seen` (returns at once if it
  // already does).
  void wait_past(Progress seen) const {
    progress_.wait(std::uint64_t{seen.ready} | (seen.complete ? kComplete : 0),
                   std::memory_order_acquire);
  }

 private:
  static constexpr std::uint64_t kComplete = std::uint64_t{1} << 32;
  std::atomic<std::uint64_t> progress_{0};
  std::uint32_t woken_at_ = 0;  // input thread: the columns published at the last wake
};

}  // namespace lidaremu::daemon
