#include "lidaremu/daemon/ops/metrics.hpp"

#include <array>
#include <functional>
#include <sstream>
#include <string_view>
#include <vector>

namespace lidaremu::daemon {
namespace {

struct Family {
  std::string_view name;
  std::string_view type;  // counter, gauge
  std::string_view help;
  std::function<std::uint64_t(const SensorSnapshot&)> value;
  double scale = 0;  // non-zero: the value times this, as a decimal (nanoseconds to seconds)
};

std::uint64_t of(const Counter& c) { return c.load(std::memory_order_relaxed); }

// Per-sensor families, in the order /metrics lists them.
const std::vector<Family>& sensor_families() {
  static const std::vector<Family> families{
      {"lidaremu_datagrams_in_total", "counter", "Datagrams received on the sensor's hit input.",
       [](const SensorSnapshot& s) { return of(s.counters->datagrams_in); }},
      {"lidaremu_bytes_in_total", "counter", "Bytes received on the sensor's hit input.",
       [](const SensorSnapshot& s) { return of(s.counters->bytes_in); }},
      {"lidaremu_input_kernel_drops_total", "counter",
       "Datagrams the kernel dropped on the hit input because its receive buffer was full.",
       [](const SensorSnapshot& s) { return s.kernel_drops; }},
      {"lidaremu_datagrams_refused_sender_total", "counter",
       "Datagrams from a sender not on the input's allow-list.",
       [](const SensorSnapshot& s) { return of(s.counters->datagrams_refused_sender); }},
      {"lidaremu_rows_stored_total", "counter", "Hit rows stored into a frame.",
       [](const SensorSnapshot& s) { return of(s.counters->rows_stored); }},
      {"lidaremu_rows_no_hit_total", "counter", "Rows that carried no hit (material id 0).",
       [](const SensorSnapshot& s) { return of(s.counters->rows_no_hit); }},
      {"lidaremu_rows_non_finite_total", "counter", "Rows refused for a NaN or infinite value.",
       [](const SensorSnapshot& s) { return of(s.counters->rows_non_finite); }},
      {"lidaremu_rows_unknown_material_total", "counter",
       "Rows whose material id is not in the material table (read as the default material).",
       [](const SensorSnapshot& s) { return of(s.counters->rows_unknown_material); }},
      {"lidaremu_rows_out_of_range_total", "counter",
       "Rows refused as absurd (a range beyond 100 km or under 1 mm, a normal of length 0).",
       [](const SensorSnapshot& s) { return of(s.counters->rows_out_of_range); }},
      {"lidaremu_rows_late_total", "counter",
       "Raw rows refused: their beam's column was more than two behind the furthest of the "
       "turn, so the physics may already have taken it.",
       [](const SensorSnapshot& s) { return of(s.counters->rows_late); }},
      {"lidaremu_batches_stale_total", "counter",
       "Batches for a frame already submitted (late or repeated).",
       [](const SensorSnapshot& s) { return of(s.counters->batches_stale); }},
      {"lidaremu_batches_repeated_total", "counter",
       "Batches for columns of the frame the physics already took (sent again).",
       [](const SensorSnapshot& s) { return of(s.counters->batches_repeated); }},
      {"lidaremu_frames_resequenced_total", "counter",
       "Frame numbers that jumped far ahead or back (an engine restart): numbering restarted.",
       [](const SensorSnapshot& s) { return of(s.counters->frames_resequenced); }},
      {"lidaremu_batches_while_paused_total", "counter",
       "Batches that arrived while a Control message had paused the sensor.",
       [](const SensorSnapshot& s) { return of(s.counters->batches_while_paused); }},
      {"lidaremu_control_messages_total", "counter", "Control messages applied.",
       [](const SensorSnapshot& s) { return of(s.counters->control_messages); }},
      {"lidaremu_reinitialisations_total", "counter",
       "Pipelines rebuilt for settings the unit's APIs took (settings asked within 100 ms of "
       "the last rebuild wait and share the next one).",
       [](const SensorSnapshot& s) { return s.reinitialisations; }},
      {"lidaremu_frames_complete_total", "counter", "Frames submitted with every column.",
       [](const SensorSnapshot& s) { return of(s.counters->frames_complete); }},
      {"lidaremu_frames_incomplete_total", "counter",
       "Frames submitted with columns missing (the next frame began, or the input went idle).",
       [](const SensorSnapshot& s) { return of(s.counters->frames_incomplete); }},
      {"lidaremu_frames_dropped_total", "counter",
       "Frames dropped whole because physics fell behind (no free buffer, or in real time a "
       "frame that could not leave within three frame periods of its input).",
       [](const SensorSnapshot& s) { return of(s.counters->frames_dropped); }},
      {"lidaremu_frames_dropped_late_total", "counter",
       "Of the frames dropped, those dropped before the physics in real time because their last "
       "packet could not have left within three frame periods of their input.",
       [](const SensorSnapshot& s) { return of(s.counters->frames_dropped_late); }},
      {"lidaremu_frames_dropped_stale_total", "counter",
       "Of the late, frames dropped after their physics: admitted while arriving, they could no "
       "longer leave in time once complete.",
       [](const SensorSnapshot& s) { return of(s.counters->frames_dropped_stale); }},
      {"lidaremu_frame_share", "gauge",
       "The share of the sensor's frames that left lately (about the last 32): under overload, "
       "frames of sensors with the lowest share go first, so that the shortfall is shared.",
       [](const SensorSnapshot& s) { return of(s.counters->frame_share_permille); }, 1e-3},
      {"lidaremu_frames_processed_total", "counter", "Frames through the physics chain.",
       [](const SensorSnapshot& s) { return of(s.counters->frames_processed); }},
      {"lidaremu_processing_max_seconds", "gauge", "Longest physics time of one frame, seconds.",
       [](const SensorSnapshot& s) { return of(s.counters->processing_ns_max); }, 1e-9},
      {"lidaremu_encoding_cpu_seconds_total", "counter",
       "CPU time the processing thread spent encoding packets, seconds.",
       [](const SensorSnapshot& s) { return of(s.counters->encoding_cpu_ns); }, 1e-9},
      {"lidaremu_packets_out_total", "counter", "Data packets sent.",
       [](const SensorSnapshot& s) { return of(s.counters->packets_out); }},
      {"lidaremu_bytes_out_total", "counter", "Data packet bytes sent.",
       [](const SensorSnapshot& s) { return of(s.counters->bytes_out); }},
      {"lidaremu_telemetry_packets_out_total", "counter",
       "Position (Velodyne) or IMU (Ouster) packets sent.",
       [](const SensorSnapshot& s) { return of(s.counters->telemetry_packets_out); }},
      {"lidaremu_send_errors_total", "counter", "Packets the kernel refused to send.",
       [](const SensorSnapshot& s) { return of(s.counters->send_errors); }},
      {"lidaremu_packets_too_large_total", "counter",
       "Packets dropped because they did not fit the sending queue's slots (an encoder fault).",
       [](const SensorSnapshot& s) { return of(s.counters->packets_too_large); }},
      {"lidaremu_pacing_resyncs_total", "counter",
       "Times real-time pacing started its schedule afresh: too late to catch up, or the sensor "
       "time jumped.",
       [](const SensorSnapshot& s) { return of(s.counters->pacing_resyncs); }},
      {"lidaremu_pacing_catch_ups_total", "counter",
       "Times a packet left late and the packets from it on caught up with the schedule at "
       "twice the sensor's pace.",
       [](const SensorSnapshot& s) { return of(s.counters->pacing_catch_ups); }},
      {"lidaremu_pacing_error_max_seconds", "gauge",
       "Latest a packet left after its scheduled time, seconds.",
       [](const SensorSnapshot& s) { return of(s.counters->pacing_error_ns_max); }, 1e-9},
      {"lidaremu_capture_dropped_total", "counter",
       "Packets left out of --pcap or --record because the file writer was behind.",
       [](const SensorSnapshot& s) { return s.capture_dropped; }},
      {"lidaremu_frames_queued", "gauge", "Frames waiting for physics.",
       [](const SensorSnapshot& s) { return s.frames_queued; }},
      {"lidaremu_packets_queued", "gauge", "Packets waiting to be sent.",
       [](const SensorSnapshot& s) { return s.packets_queued; }},
  };
  return families;
}

// The live view's, for sensors that have one.
const std::vector<Family>& view_families() {
  static const std::vector<Family> families{
      {"lidaremu_view_frames_published_total", "counter", "Frames decoded for live viewers.",
       [](const SensorSnapshot& s) { return of(s.view->frames_published); }},
      {"lidaremu_view_frames_skipped_total", "counter",
       "Frames the live view skipped while busy with earlier ones.",
       [](const SensorSnapshot& s) { return of(s.view->frames_skipped); }},
      {"lidaremu_view_frames_exported_total", "counter", "Frames written by --export.",
       [](const SensorSnapshot& s) { return of(s.view->frames_exported); }},
      {"lidaremu_view_export_errors_total", "counter", "Exports that could not be written.",
       [](const SensorSnapshot& s) { return of(s.view->export_errors); }},
      {"lidaremu_view_packets_undecodable_total", "counter",
       "Emitted packets the live view could not decode (would be a bug).",
       [](const SensorSnapshot& s) { return of(s.view->packets_undecodable); }},
  };
  return families;
}

struct DaemonFamily {
  std::string_view name;
  std::string_view help;
  std::function<std::uint64_t(const FoxgloveCounters&)> value;
};

const std::vector<DaemonFamily>& foxglove_families() {
  static const std::vector<DaemonFamily> families{
      {"lidaremu_foxglove_clients_accepted_total", "Live viewers connected.",
       [](const FoxgloveCounters& c) { return of(c.clients_accepted); }},
      {"lidaremu_foxglove_clients_refused_total",
       "Connections refused (over the limit, or not a Foxglove v1 client).",
       [](const FoxgloveCounters& c) { return of(c.clients_refused); }},
      {"lidaremu_foxglove_messages_sent_total", "Messages sent to viewers.",
       [](const FoxgloveCounters& c) { return of(c.messages_sent); }},
      {"lidaremu_foxglove_messages_dropped_total",
       "Clouds not sent to a viewer still busy with earlier ones.",
       [](const FoxgloveCounters& c) { return of(c.messages_dropped); }},
      {"lidaremu_foxglove_bad_requests_total", "Unparsable or unknown viewer operations.",
       [](const FoxgloveCounters& c) { return of(c.bad_requests); }},
      {"lidaremu_foxglove_subscriptions_refused_total",
       "Subscriptions refused beyond the per-viewer limit.",
       [](const FoxgloveCounters& c) { return of(c.subscriptions_refused); }},
  };
  return families;
}

class Writer {
 public:
  Writer(std::ostream& out, bool annotate) : out_(out), annotate_(annotate) {}
  void family(std::string_view name, std::string_view type, std::string_view help) {
    if (!annotate_) return;
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  void sample(std::string_view name, std::string_view labels, std::uint64_t value) {
    out_ << name << labels << ' ' << value << '\n';
  }
  void sample(std::string_view name, std::string_view labels, double value) {
    out_ << name << labels << ' ' << value << '\n';
  }

 private:
  std::ostream& out_;
  bool annotate_;
};

std::string sensor_label(const SensorSnapshot& s) { return "{sensor=\"" + s.name + "\"}"; }

// Cumulative buckets, sum and count, as Prometheus expects them.
template <std::size_t N>
void write_histogram(Writer& w, std::string_view name, std::string_view help,
                     std::span<const SensorSnapshot> sensors,
                     const Histogram<N> SensorCounters::*member) {
  const std::string base(name);
  w.family(base, "histogram", help);
  for (const auto& s : sensors) {
    const Histogram<N>& h = s.counters->*member;
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= N; ++b) {
      cumulative += of(h.buckets[b]);
      std::string le = "+Inf";
      if (b < N) {
        std::ostringstream bound;
        bound << h.bounds[b];
        le = bound.str();
      }
      w.sample(base + "_bucket", "{sensor=\"" + s.name + "\",le=\"" + le + "\"}", cumulative);
    }
    w.sample(base + "_sum", sensor_label(s), static_cast<double>(of(h.sum_ns)) * 1e-9);
    w.sample(base + "_count", sensor_label(s), cumulative);
  }
}

constexpr std::string_view kLivoxSdkFamily = "lidaremu_livox_sdk_datagrams_total";

// Only for the sensors that have the ports (Livox units).
void write_livox_sdk(Writer& w, std::span<const SensorSnapshot> sensors) {
  bool any = false;
  for (const auto& s : sensors) any |= s.livox_sdk.has_value();
  if (!any) return;
  w.family(kLivoxSdkFamily, "counter",
           "Datagrams on a Livox unit's discovery and command ports, by outcome: answered, "
           "malformed (dropped as Livox SDK2 drops them), not_request (acknowledgements, frames "
           "from a lidar), unknown (a command whose answer the unit does not give), "
           "trailing_bytes (bytes past the frame's length), oversized (over 1,400 bytes), "
           "kernel_dropped (the ports' socket buffers full).");
  for (const auto& s : sensors) {
    if (!s.livox_sdk) continue;
    const auto& c = *s.livox_sdk;
    for (const auto& [outcome, value] :
         {std::pair{"answered", c.answered}, std::pair{"malformed", c.malformed},
          std::pair{"not_request", c.not_requests}, std::pair{"unknown", c.unknown},
          std::pair{"trailing_bytes", c.trailing_bytes}, std::pair{"oversized", c.oversized},
          std::pair{"kernel_dropped", c.kernel_drops}}) {
      w.sample(kLivoxSdkFamily, "{sensor=\"" + s.name + "\",outcome=\"" + outcome + "\"}", value);
    }
  }
}

// Only for the sensors whose units have TCP request/reply ports (Hesai PTC, Ouster TCP 7501).
void write_api_ports(Writer& w, std::span<const SensorSnapshot> sensors) {
  bool any = false;
  for (const auto& s : sensors) any |= !s.api_ports.empty();
  if (!any) return;
  const auto labels = [](const SensorSnapshot& s, const ApiPortCounts& p) {
    return "{sensor=\"" + s.name + "\",api=\"" + p.api + "\"";
  };
  w.family("lidaremu_api_requests_total", "counter",
           "Requests answered on a unit's TCP request/reply port (Hesai PTC, Ouster TCP 7501).");
  for (const auto& s : sensors) {
    for (const auto& p : s.api_ports) {
      w.sample("lidaremu_api_requests_total", labels(s, p) + "}", p.counts.requests);
    }
  }
  w.family("lidaremu_api_connections_closed_total", "counter",
           "Connections a unit's TCP request/reply port closed or refused, by reason: refused "
           "(full, none could give way), evicted (gave way to a newcomer), request_timeout (a "
           "request begun, not whole in time), write_timeout (a reply the client did not take in "
           "time), malformed (not the protocol, or over its size limit).");
  for (const auto& s : sensors) {
    for (const auto& p : s.api_ports) {
      const ConnectionCounts& c = p.counts;
      for (const auto& [reason, value] :
           {std::pair{"refused", c.refused}, std::pair{"evicted", c.evicted},
            std::pair{"request_timeout", c.request_timeouts},
            std::pair{"write_timeout", c.write_timeouts}, std::pair{"malformed", c.malformed}}) {
        w.sample("lidaremu_api_connections_closed_total",
                 labels(s, p) + ",reason=\"" + reason + "\"}", value);
      }
    }
  }
}

constexpr std::string_view kCaptureErrorsFamily = "lidaremu_capture_write_errors_total";

// Only when the daemon writes a capture (--pcap, --record).
void write_capture_errors(Writer& w, std::span<const CaptureFile* const> captures) {
  if (captures.empty()) return;
  w.family(kCaptureErrorsFamily, "counter",
           "Writes of a capture file (--pcap, --record) that failed, by reason (ENOSPC: the disk "
           "is full, EIO, EFBIG: the file size limit, or another errno); the first ends the "
           "capture at its last whole record, the streams go on (/healthz says so).");
  for (const CaptureFile* c : captures) {
    const int failed = c->error();
    std::vector<std::string> reasons{"ENOSPC", "EIO", "EFBIG"};
    if (failed != 0 &&
        std::find(reasons.begin(), reasons.end(), errno_name(failed)) == reasons.end()) {
      reasons.push_back(errno_name(failed));
    }
    for (const auto& reason : reasons) {
      w.sample(kCaptureErrorsFamily, "{capture=\"" + c->kind() + "\",reason=\"" + reason + "\"}",
               std::uint64_t{failed != 0 && errno_name(failed) == reason ? 1U : 0U});
    }
  }
}

}  // namespace

void write_exposition(std::ostream& out, std::span<const SensorSnapshot> sensors,
                      const FoxgloveCounters* foxglove, bool annotate,
                      std::span<const CaptureFile* const> captures) {
  Writer w(out, annotate);
  const auto per_sensor = [&](const Family& f, bool view_only) {
    bool any = false;
    for (const auto& s : sensors) any |= !view_only || s.view != nullptr;
    if (!any) return;
    w.family(f.name, f.type, f.help);
    for (const auto& s : sensors) {
      if (view_only && !s.view) continue;
      if (f.scale != 0) {
        w.sample(f.name, sensor_label(s), static_cast<double>(f.value(s)) * f.scale);
      } else {
        w.sample(f.name, sensor_label(s), f.value(s));
      }
    }
  };
  for (const auto& f : sensor_families()) per_sensor(f, false);
  w.family("lidaremu_batches_rejected_total", "counter",
           "Datagrams refused whole, by reason (docs/hostile-input.md).");
  for (const auto& s : sensors) {
    for (std::size_t i = 1; i < s.counters->rejected.size(); ++i) {
      w.sample("lidaremu_batches_rejected_total",
               "{sensor=\"" + s.name + "\",reason=\"" +
                   std::string(protocol::to_string(static_cast<protocol::BatchError>(i))) + "\"}",
               of(s.counters->rejected[i]));
    }
  }
  write_histogram(w, "lidaremu_processing_seconds", "Physics time per frame, seconds.", sensors,
                  &SensorCounters::processing);
  write_histogram(w, "lidaremu_pacing_error_seconds",
                  "How late each packet left in real-time pacing, seconds.", sensors,
                  &SensorCounters::pacing_error);
  write_histogram(w, "lidaremu_frame_age_seconds",
                  "From a frame's input being complete to its last packet leaving, seconds.",
                  sensors, &SensorCounters::frame_age);
  write_histogram(w, "lidaremu_frame_input_seconds",
                  "From a frame's first datagram to its input being complete, seconds.", sensors,
                  &SensorCounters::frame_input);
  write_histogram(w, "lidaremu_frame_gate_wait_seconds",
                  "How long a frame's physics waited for the cores behind other frames, seconds.",
                  sensors, &SensorCounters::frame_gate_wait);
  write_histogram(w, "lidaremu_frame_queued_seconds",
                  "From a frame's input being complete to its last packet queued for sending, "
                  "seconds.",
                  sensors, &SensorCounters::frame_queued);
  write_histogram(w, "lidaremu_frame_sending_seconds",
                  "From a frame's last packet queued for sending to its leaving, seconds.", sensors,
                  &SensorCounters::frame_sending);
  for (const auto& f : view_families()) per_sensor(f, true);
  write_livox_sdk(w, sensors);
  write_api_ports(w, sensors);
  w.family("lidaremu_destination_changes_total", "counter",
           "Requests of a unit's API clients that moved where a stream goes, by outcome: "
           "accepted, or refused (not loopback, not the client asking, not on "
           "--allow-destinations).");
  for (const auto& s : sensors) {
    for (const auto& [outcome, value] : {std::pair{"accepted", s.destinations_accepted},
                                         std::pair{"refused", s.destinations_refused}}) {
      w.sample("lidaremu_destination_changes_total",
               "{sensor=\"" + s.name + "\",outcome=\"" + outcome + "\"}", value);
    }
  }
  write_capture_errors(w, captures);
  if (foxglove) {
    for (const auto& f : foxglove_families()) {
      w.family(f.name, "counter", f.help);
      w.sample(f.name, "", f.value(*foxglove));
    }
  }
}

SensorSnapshot snapshot_of(const SensorRuntime& r) {
  SensorSnapshot s;
  s.name = r.settings().name;
  s.counters = &r.counters();
  s.kernel_drops = r.input_kernel_drops();
  s.frames_queued = r.frames_queued();
  s.packets_queued = r.packets_queued();
  s.capture_dropped = r.capture_dropped();
  s.view = r.view_counters();
  return s;
}

std::span<const std::string_view> metric_family_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> all;
    for (const auto& f : sensor_families()) all.push_back(f.name);
    all.push_back("lidaremu_batches_rejected_total");
    all.push_back("lidaremu_processing_seconds");
    all.push_back("lidaremu_pacing_error_seconds");
    all.push_back("lidaremu_frame_age_seconds");
    all.push_back("lidaremu_frame_input_seconds");
    all.push_back("lidaremu_frame_gate_wait_seconds");
    all.push_back("lidaremu_frame_queued_seconds");
    all.push_back("lidaremu_frame_sending_seconds");
    for (const auto& f : view_families()) all.push_back(f.name);
    all.push_back(kLivoxSdkFamily);
    all.push_back("lidaremu_api_requests_total");
    all.push_back("lidaremu_api_connections_closed_total");
    all.push_back(kCaptureErrorsFamily);
    all.push_back("lidaremu_destination_changes_total");
    for (const auto& f : foxglove_families()) all.push_back(f.name);
    return all;
  }();
  return names;
}

}  // namespace lidaremu::daemon
