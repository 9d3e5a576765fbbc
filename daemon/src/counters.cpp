#include "lidaremu/daemon/counters.hpp"

namespace lidaremu::daemon {

void SensorCounters::add_rows(const protocol::RowCounts& r) {
  rows_stored += r.stored;
  rows_no_hit += r.no_hit;
  rows_non_finite += r.non_finite;
  rows_unknown_material += r.unknown_material;
  rows_out_of_range += r.out_of_range;
}

void store_max(Counter& c, std::uint64_t value) {
  std::uint64_t seen = c.load(std::memory_order_relaxed);
  while (value > seen && !c.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

namespace {

// Cumulative buckets, sum and count, as Prometheus expects them.
template <std::size_t N>
void write_histogram(std::ostream& out, const char* name, const std::string& sensor,
                     const Histogram<N>& h) {
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b <= N; ++b) {
    cumulative += h.buckets[b].load();
    out << "lidaremu_" << name << "_bucket{sensor=\"" << sensor << "\",le=\"";
    if (b < N) {
      out << h.bounds[b];
    } else {
      out << "+Inf";
    }
    out << "\"} " << cumulative << '\n';
  }
  out << "lidaremu_" << name << "_sum{sensor=\"" << sensor << "\"} " << h.sum_ns.load() * 1e-9
      << '\n';
  out << "lidaremu_" << name << "_count{sensor=\"" << sensor << "\"} " << cumulative << '\n';
}

}  // namespace

void write_counters(std::ostream& out, const std::string& sensor, const SensorCounters& c,
                    std::uint64_t kernel_drops) {
  const std::string label = "{sensor=\"" + sensor + "\"}";
  auto line = [&](const char* name, const Counter& v) {
    out << "lidaremu_" << name << label << ' ' << v.load() << '\n';
  };
  line("datagrams_in_total", c.datagrams_in);
  line("bytes_in_total", c.bytes_in);
  out << "lidaremu_input_kernel_drops_total" << label << ' ' << kernel_drops << '\n';
  line("datagrams_refused_sender_total", c.datagrams_refused_sender);
  line("rows_stored_total", c.rows_stored);
  line("rows_no_hit_total", c.rows_no_hit);
  line("rows_non_finite_total", c.rows_non_finite);
  line("rows_unknown_material_total", c.rows_unknown_material);
  line("rows_out_of_range_total", c.rows_out_of_range);
  for (std::size_t i = 1; i < c.rejected.size(); ++i) {
    out << "lidaremu_batches_rejected_total{sensor=\"" << sensor << "\",reason=\""
        << protocol::to_string(static_cast<protocol::BatchError>(i)) << "\"} "
        << c.rejected[i].load() << '\n';
  }
  line("batches_stale_total", c.batches_stale);
  line("frames_resequenced_total", c.frames_resequenced);
  line("batches_while_paused_total", c.batches_while_paused);
  line("control_messages_total", c.control_messages);
  line("frames_complete_total", c.frames_complete);
  line("frames_incomplete_total", c.frames_incomplete);
  line("frames_dropped_total", c.frames_dropped);
  line("frames_processed_total", c.frames_processed);
  line("processing_ns_total", c.processing_ns_total);
  line("processing_ns_max", c.processing_ns_max);
  line("packets_out_total", c.packets_out);
  line("bytes_out_total", c.bytes_out);
  line("telemetry_packets_out_total", c.telemetry_packets_out);
  line("send_errors_total", c.send_errors);
  line("pacing_resyncs_total", c.pacing_resyncs);
  line("pacing_error_ns_max", c.pacing_error_ns_max);
  write_histogram(out, "processing_seconds", sensor, c.processing);
  write_histogram(out, "pacing_error_seconds", sensor, c.pacing_error);
}

}  // namespace lidaremu::daemon
