#include "lidaremu/daemon/runtime/raw_ingest.hpp"

#include <tbb/global_control.h>

#include <algorithm>

#include "lidaremu/core/parallel_blocks.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {

RawIngest::RawIngest(const core::BeamGeometry& geometry, int floats_per_row, core::HitLayout layout,
                     std::size_t datagrams_at_once, const protocol::EngineConventions& engine,
                     const core::MaterialTable& materials)
    : assembler_(geometry, floats_per_row, layout, 2 * std::max<std::size_t>(1, datagrams_at_once)),
      engine_(engine),
      materials_(materials),
      at_once_(std::max<std::size_t>(1, datagrams_at_once)),
      // Enqueued work needs a worker: with one thread allowed (--threads 1, one CPU) there is
      // none to count on, and the input thread locates its own sets.
      workers_(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) >
               1) {
  for (std::size_t s = 0; s < 2; ++s) {
    sets_[s].first_slot = s * at_once_;
    sets_[s].arrival_ns.resize(at_once_);
  }
}

RawIngest::~RawIngest() {
  // A worker may still be converting into the slots.
  if (in_flight()) wait_located();
}

std::size_t RawIngest::bytes_for(int floats_per_row, core::HitLayout layout,
                                 std::size_t datagrams_at_once) {
  const std::size_t slots = 2 * std::max<std::size_t>(1, datagrams_at_once);
  return protocol::RawRowAssembler::bytes_for(floats_per_row, layout, slots) +
         slots * sizeof(std::int64_t);
}

bool RawIngest::take(std::span<const std::uint8_t> datagram, std::int64_t arrival_ns) {
  Set& set = filling();
  assembler_.take(set.first_slot + set.count, datagram);
  set.arrival_ns[set.count++] = arrival_ns;
  return set.count == at_once_;
}

void RawIngest::start_locating() {
  const Set& set = filling();
  filling_ = 1 - filling_;
  if (!workers_) {
    assembler_.convert_and_locate_taken(set.first_slot, set.count, engine_, materials_);
    return;
  }
  located_.store(false, std::memory_order_relaxed);
  // The worker reads the slots this thread copied in (ordered by the fork), and this thread
  // reads what it wrote once located_ is set (released).
  core::parallel_detail::before_fork(this);
  physics_arena().enqueue([this, first = set.first_slot, count = set.count] {
    core::parallel_detail::task_begin(this);
    assembler_.convert_and_locate_taken(first, count, engine_, materials_);
    core::parallel_detail::task_end(this);
    located_.store(true, std::memory_order_release);
    located_.notify_one();
  });
}

void RawIngest::wait_located() { located_.wait(false, std::memory_order_acquire); }

}  // namespace lidaremu::daemon
