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

// A Prometheus histogram: counts per bucket of upper bounds (seconds), the last bucket +Inf.
template <std::size_t N>
struct Histogram {
  explicit Histogram(const std::array<double, N>& upper_bounds) : bounds(upper_bounds) {}
  void observe(double seconds) {
    std::size_t b = 0;
    while (b < N && seconds > bounds[b]) ++b;
    buckets[b].fetch_add(1, std::memory_order_relaxed);
    sum_ns.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
  }
  std::array<double, N> bounds;
  std::array<Counter, N + 1> buckets{};
  Counter sum_ns{0};
};

// Bounds of the frame-path histograms (seconds).
inline constexpr std::array<double, 11> kFrameSpanBounds{
    10e-3, 20e-3, 50e-3, 100e-3, 200e-3, 300e-3, 500e-3, 1.0, 2.0, 5.0, 10.0};

struct SensorCounters {
  Counter datagrams_in{0};
  Counter datagrams_refused_sender{0};  // not on the input's allow-list
  Counter bytes_in{0};
  Counter rows_stored{0};
  Counter rows_no_hit{0};
  Counter rows_non_finite{0};
  Counter rows_unknown_material{0};
  Counter rows_out_of_range{0};
  Counter rows_late{0};
  std::array<Counter, static_cast<std::size_t>(protocol::BatchError::kCount)> rejected{};
  Counter batches_stale{0};
  Counter batches_repeated{0};
  Counter frames_resequenced{0};
  Counter batches_while_paused{0};
  Counter control_messages{0};
  Counter frames_complete{0};
  Counter frames_incomplete{0};
  Counter frames_dropped{0};
  Counter frames_dropped_late{0};   // of those: real time, could not leave fresh (FrameAdmission)
  Counter frames_dropped_stale{0};  // of the late: judged again after their physics (work lost)
  // The share of the sensor's frames that leave, lately (FairShare), in thousandths.
  Counter frame_share_permille{1000};
  Counter frames_processed{0};
  Counter processing_ns_max{0};  // exposed in seconds
  Counter encoding_cpu_ns{0};    // the processing thread's CPU in the encoder; exposed in seconds
  Counter packets_out{0};
  Counter bytes_out{0};
  Counter telemetry_packets_out{0};
  Counter send_errors{0};
  Counter packets_too_large{0};  // larger than a packet slot: an encoder fault, dropped
  Counter pacing_resyncs{0};
  Counter pacing_catch_ups{0};     // late packets that began a catch-up (pacing_schedule.hpp)
  Counter pacing_error_ns_max{0};  // exposed in seconds
  // Physics time per frame, and how late each packet left in real-time pacing (seconds).
  Histogram<9> processing{{1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3, 200e-3, 500e-3}};
  Histogram<9> pacing_error{{10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 5e-3, 20e-3}};
  // From a frame's input being complete to its last packet leaving (seconds): how old what a
  // driver receives is. Real-time pacing alone adds the margin and the frame's own period.
  Histogram<11> frame_age{kFrameSpanBounds};
  // The stages of that path, each a frame's (seconds), so that a late frame shows where it lost
  // its time: its input (first datagram to complete: the engine's pace and the socket's buffer),
  // its physics' wait for the cores behind other frames (every sensor's: PhysicsGate), from its
  // input being complete to its last packet being queued for the sender (the wait, the physics
  // left after the last datagram, the encoding), and from there to that packet leaving (the
  // pacing margin and the frame's own span, or a sender behind).
  Histogram<11> frame_input{kFrameSpanBounds};
  Histogram<11> frame_gate_wait{kFrameSpanBounds};
  Histogram<11> frame_queued{kFrameSpanBounds};
  Histogram<11> frame_sending{kFrameSpanBounds};

  void reject(protocol::BatchError e) { ++rejected[static_cast<std::size_t>(e)]; }
  void add_rows(const protocol::RowCounts& r);
};

void store_max(Counter& c, std::uint64_t value);

}  // namespace lidaremu::daemon
