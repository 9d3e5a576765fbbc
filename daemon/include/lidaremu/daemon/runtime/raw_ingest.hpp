#pragma once
// Raw rows with their beam search off the input thread. The input thread copies each checked raw
// datagram into one of two sets of slots; a full set (or a receive's end) is handed to the
// sensor's locating thread, which converts its rows and finds their beams (with TBB's workers:
// the datagrams of a set and their beams' chunks in parallel) while the input thread receives
// and copies the next set. Storing into frames stays on the input thread, in the order the
// datagrams came (the turn's wrap and the sealed columns depend on every beam before): a set is
// stored once located, before the next set is handed over.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lidaremu/protocol/raw_rows.hpp"

namespace lidaremu::daemon {

class RawIngest {
 public:
  // datagrams_at_once: a set's slots. sensor: the name a failure is reported under.
  RawIngest(const core::BeamGeometry& geometry, int floats_per_row, core::HitLayout layout,
            std::size_t datagrams_at_once, const protocol::EngineConventions& engine,
            const core::MaterialTable& materials, std::string sensor);
  RawIngest(const RawIngest&) = delete;
  RawIngest& operator=(const RawIngest&) = delete;
  ~RawIngest();  // ends the locating thread (after a set in flight)

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
    if (sets_[filling_].count > 0) start_locating();
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
  // Hands the filling set to the locating thread and fills the other from now on.
  void start_locating();
  // Blocks until the set in flight is located; false when the locating thread failed (the
  // daemon is stopping: the set is not stored).
  bool wait_located();
  template <typename Store>
  void store_in_flight(Store& store) {
    Set& set = sets_[1 - filling_];
    if (set.count == 0) return;
    if (wait_located()) {
      for (std::size_t i = 0; i < set.count; ++i) store(set.first_slot + i, set.arrival_ns[i]);
    }
    set.count = 0;
  }
  void locate_loop();

  protocol::RawRowAssembler assembler_;
  const protocol::EngineConventions& engine_;
  const core::MaterialTable& materials_;
  std::string sensor_;
  std::size_t at_once_;
  Set sets_[2];
  std::size_t filling_ = 0;  // input thread's

  // Between the input thread and the locating thread.
  std::mutex mutex_;
  std::condition_variable work_;     // the locating thread waits: a set, or the end
  std::condition_variable located_;  // the input thread waits: the set located
  const Set* to_locate_ = nullptr;   // the set handed over and not yet located
  bool ending_ = false;
  bool failed_ = false;
  std::thread locator_;  // last: started once everything it reads exists
};

}  // namespace lidaremu::daemon
