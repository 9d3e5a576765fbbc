#include "lidaremu/daemon/ops/counters.hpp"

namespace lidaremu::daemon {

void SensorCounters::add_rows(const protocol::RowCounts& r) {
  rows_stored += r.stored;
  rows_no_hit += r.no_hit;
  rows_non_finite += r.non_finite;
  rows_unknown_material += r.unknown_material;
  rows_out_of_range += r.out_of_range;
  rows_late += r.late;
}

void store_max(Counter& c, std::uint64_t value) {
  std::uint64_t seen = c.load(std::memory_order_relaxed);
  while (value > seen && !c.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace lidaremu::daemon
