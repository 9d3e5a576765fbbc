#pragma once
// Per-sensor counters: written by the ingest, processing and emit threads, read by anyone.
#include <array>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "lidaremu/protocol/wire_decode.hpp"

namespace lidaremu::daemon {

using Counter = std::atomic<std::uint64_t>;

struct SensorCounters {
  Counter datagrams_in{0};
  Counter datagrams_refused_sender{0};  // not on the input's allow-list
  Counter bytes_in{0};
  Counter rows_stored{0};
  Counter rows_no_hit{0};
  Counter rows_non_finite{0};
  Counter rows_unknown_material{0};
  Counter rows_out_of_range{0};
  std::array<Counter, static_cast<std::size_t>(protocol::BatchError::kCount)> rejected{};
  Counter batches_stale{0};
  Counter batches_while_paused{0};
  Counter control_messages{0};
  Counter frames_complete{0};
  Counter frames_incomplete{0};
  Counter frames_dropped{0};
  Counter frames_processed{0};
  Counter processing_ns_total{0};
  Counter processing_ns_max{0};
  Counter packets_out{0};
  Counter bytes_out{0};
  Counter telemetry_packets_out{0};
  Counter send_errors{0};
  Counter pacing_resyncs{0};
  Counter pacing_error_ns_max{0};
  // Physics time per frame as a histogram: upper bounds in milliseconds, the last one +Inf.
  static constexpr std::array<double, 9> kProcessingBucketsMs{1, 2, 5, 10, 20, 50, 100, 200, 500};
  std::array<Counter, kProcessingBucketsMs.size() + 1> processing_buckets{};

  void reject(protocol::BatchError e) { ++rejected[static_cast<std::size_t>(e)]; }
  void observe_processing(std::uint64_t ns);
  void add_rows(const protocol::RowCounts& r);
};

void store_max(Counter& c, std::uint64_t value);
// Prometheus text exposition, one sample per line, labelled with the sensor name.
void write_counters(std::ostream& out, const std::string& sensor, const SensorCounters& c);

}  // namespace lidaremu::daemon
