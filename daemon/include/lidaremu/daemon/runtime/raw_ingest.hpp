#pragma once
// Raw rows with their beam search off the input thread. The input thread copies each checked raw
// datagram into one of two sets of slots; a full set (or a receive's end) is handed to a physics
// worker, which converts its rows and finds their beams while the input thread receives and
// copies the next set. Storing into frames stays on the input thread, in the order the
// datagrams came (the turn's wrap and the sealed columns depend on every beam before): a set is
// stored once located, before the next set is handed over. With no worker to hand to (one
// thread allowed), a set is located on the input thread.
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "lidaremu/protocol/raw_rows.hpp"

namespace lidaremu::daemon {

class RawIngest {
 public:
  // datagrams_at_once: a set's slots.
  RawIngest(const core::BeamGeometry& geometry, int floats_per_row, core::HitLayout layout,
            std::size_t datagrams_at_once, const protocol::EngineConventions& engine,
            const core::MaterialTable& materials);
  RawIngest(const RawIngest&) = delete;
  RawIngest& operator=(const RawIngest&) = delete;
  ~RawIngest();  // waits for a set in flight

  // What the constructor allocates (the daemon's memory estimate).
  static std::size_t bytes_for(int floats_per_row, core::HitLayout layout,
                               std::size_t datagrams_at_once);

  // The turn's wrap and sealed columns (reset, complete_columns, seal_below).
  [[nodiscard]] protocol::RawRowAssembler& assembler() { return assembler_; }
  [[nodiscard]] protocol::BatchError check(std::span<const std::uint8_t> datagram) const {
    return assembler_.check(datagram);
  }

  // Copies a checked datagram into the set being filled; true when that set is now full
  // (hand_over then).
  bool take(std::span<const std::uint8_t> datagram, std::int64_t arrival_ns);
  // Stores the set in flight, if any (store(slot, arrival_ns) per datagram, in order), and hands
  // the set being filled on to be located.
  template <typename Store>
  void hand_over(Store&& store) {
    store_in_flight(store);
    if (filling().count > 0) start_locating();
  }
  // Stores everything taken: the set in flight, then the set being filled.
  template <typename Store>
  void flush(Store&& store) {
    hand_over(store);
    store_in_flight(store);
  }
  // Whether a set is being located (stored at the next hand_over or flush).
  [[nodiscard]] bool in_flight() const { return sets_[1 - filling_].count > 0; }

 private:
  struct Set {
    std::size_t first_slot = 0;
    std::size_t count = 0;
    std::vector<std::int64_t> arrival_ns;  // per slot
  };
  Set& filling() { return sets_[filling_]; }
  // Hands the filling set on (to a worker, or located here) and fills the other from now on.
  void start_locating();
  // Blocks until the set in flight is located.
  void wait_located();
  template <typename Store>
  void store_in_flight(Store& store) {
    Set& set = sets_[1 - filling_];
    if (set.count == 0) return;
    wait_located();
    for (std::size_t i = 0; i < set.count; ++i) store(set.first_slot + i, set.arrival_ns[i]);
    set.count = 0;
  }

  protocol::RawRowAssembler assembler_;
  const protocol::EngineConventions& engine_;
  const core::MaterialTable& materials_;
  std::size_t at_once_;
  bool workers_;  // TBB may run a worker beside this thread
  Set sets_[2];
  std::size_t filling_ = 0;
  // The set in flight located (its worker's writes released with it).
  std::atomic<bool> located_{true};
};

}  // namespace lidaremu::daemon
