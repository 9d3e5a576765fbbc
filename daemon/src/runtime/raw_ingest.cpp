#include "lidaremu/daemon/runtime/raw_ingest.hpp"

#include <algorithm>

#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {

RawIngest::RawIngest(const core::BeamGeometry& geometry, int floats_per_row, core::HitLayout layout,
                     std::size_t datagrams_at_once, const protocol::EngineConventions& engine,
                     const core::MaterialTable& materials, std::string sensor)
    : assembler_(geometry, floats_per_row, layout, 2 * std::max<std::size_t>(1, datagrams_at_once)),
      engine_(engine),
      materials_(materials),
      sensor_(std::move(sensor)),
      at_once_(std::max<std::size_t>(1, datagrams_at_once)) {
  for (std::size_t s = 0; s < 2; ++s) {
    sets_[s].first_slot = s * at_once_;
    sets_[s].arrival_ns.resize(at_once_);
  }
  locator_ = std::thread([this] {
    leave_signals_to_the_main_thread();
    name_this_thread(kLocatingThreadName);
    run_guarded(
        "sensor " + sensor_ + ": locating raw rows", [this] { locate_loop(); },
        [this] {
          // The input thread must not wait for a set that will never be located.
          const std::lock_guard lock(mutex_);
          failed_ = true;
          to_locate_ = nullptr;
          located_.notify_all();
        });
  });
}

RawIngest::~RawIngest() {
  {
    const std::lock_guard lock(mutex_);
    ending_ = true;
  }
  work_.notify_all();
  locator_.join();
}

std::size_t RawIngest::bytes_for(int floats_per_row, core::HitLayout layout,
                                 std::size_t datagrams_at_once) {
  const std::size_t slots = 2 * std::max<std::size_t>(1, datagrams_at_once);
  return protocol::RawRowAssembler::bytes_for(floats_per_row, layout, slots) +
         slots * sizeof(std::int64_t);
}

bool RawIngest::take(std::span<const std::uint8_t> datagram, std::int64_t arrival_ns) {
  Set& set = sets_[filling_];
  assembler_.take(set.first_slot + set.count, datagram);
  set.arrival_ns[set.count++] = arrival_ns;
  return set.count == at_once_;
}

void RawIngest::start_locating() {
  {
    const std::lock_guard lock(mutex_);
    to_locate_ = &sets_[filling_];
  }
  work_.notify_one();
  filling_ = 1 - filling_;
}

bool RawIngest::wait_located() {
  std::unique_lock lock(mutex_);
  // A failed locating thread answers no more sets: none is waited for after it.
  located_.wait(lock, [this] { return to_locate_ == nullptr || failed_; });
  return !failed_;
}

void RawIngest::locate_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // A set handed over is located before the end is taken: the input thread may wait for it.
    work_.wait(lock, [this] { return to_locate_ != nullptr || ending_; });
    if (to_locate_ == nullptr) return;
    const std::size_t first = to_locate_->first_slot;
    const std::size_t count = to_locate_->count;
    lock.unlock();
    assembler_.convert_and_locate_taken(first, count, engine_, materials_);
    lock.lock();
    to_locate_ = nullptr;
    located_.notify_all();
  }
}

}  // namespace lidaremu::daemon
