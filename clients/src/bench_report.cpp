// lidaremu-bench's vocabulary and report: sensor specs, latency summaries, the printed table.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "lidaremu/clients/bench.hpp"

namespace lidaremu::clients {

BenchSensor BenchSensor::parse(const std::string& spec) {
  BenchSensor s;
  const auto first = spec.find(':');
  s.model = spec.substr(0, first);
  if (first != std::string::npos) {
    const auto second = spec.find(':', first + 1);
    s.mode = spec.substr(first + 1,
                         second == std::string::npos ? std::string::npos : second - first - 1);
    if (second != std::string::npos) s.variant = spec.substr(second + 1);
  }
  return s;
}

std::string BenchSensor::label() const {
  std::string l = model;
  // A scan table's file by its name alone: a sensor name holds no path.
  if (!mode.empty()) l += "-" + std::filesystem::path(mode).stem().string();
  if (!variant.empty()) l += "-" + variant;
  return l;
}

LatencySummary summarise_latencies(std::vector<double> seconds) {
  LatencySummary s;
  s.frames = seconds.size();
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  const auto rank = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(seconds.size())));
    return seconds[std::min(seconds.size() - 1, i > 0 ? i - 1 : 0)] * 1e3;
  };
  s.p50_ms = rank(0.50);
  s.p99_ms = rank(0.99);
  s.max_ms = seconds.back() * 1e3;
  return s;
}

namespace {
// Where each sensor's frames spent their time, stage by stage, and where its dropped frames
// went: the first thing to read when frames are lost.
void print_frame_paths(std::ostream& out, const BenchReport& r) {
  const auto stage = [](const BenchSensorReport::Stage& st) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << std::setw(6) << st.mean_ms << "/";
    if (std::isinf(st.p99_ms)) {
      s << std::setw(6) << ">10000";
    } else {
      s << std::setw(6) << std::setprecision(0) << st.p99_ms;
    }
    return s.str();
  };
  out << "  frame path, ms mean/p99 bucket: input (first datagram -> complete), gate wait (behind "
         "other frames' physics), physics, queued (complete -> last packet queued), sending "
         "(queued -> left), age (complete -> left); dropped: while arriving / before physics / "
         "after physics\n";
  for (const auto& s : r.sensors) {
    const std::uint64_t late = s.daemon_frames_dropped_late;
    const std::uint64_t arriving = s.daemon_frames_dropped - late;
    const std::uint64_t after = s.daemon_frames_dropped_stale;
    out << "  " << std::left << std::setw(22) << s.label << std::right << stage(s.input)
        << stage(s.gate_wait) << stage(s.physics) << stage(s.queued) << stage(s.sending)
        << stage(s.age) << "   " << arriving << " / " << (late - std::min(late, after)) << " / "
        << after << "\n";
  }
}
}  // namespace

void print_report(std::ostream& out, const BenchOptions& o, const BenchReport& r) {
  const auto pacing_p99 = [](double us) {
    return std::isinf(us) ? std::string(">20000") : std::to_string(std::lround(us));
  };
  const auto millions = [](double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << v / 1e6 << " M";
    return s.str();
  };
  out << std::fixed << std::setprecision(2);
  out << "lidaremu-bench: " << o.sensors.size() << " sensor(s), "
      << (o.rate > 0 ? std::to_string(o.rate) + "x real time"
                     : "as fast as taken (in flight " + std::to_string(o.in_flight) + ")")
      << ", " << (o.raw ? "raw7" : "framed") << ", " << o.scene << " scene, " << o.rays_per_beam
      << " ray(s)/beam, rain " << o.rain_mm_per_h << " mm/h, physics " << o.physics << ", "
      << o.seconds << " s measured after " << o.warmup_seconds << " s warm-up, "
      << std::thread::hardware_concurrency() << " cores\n";
  out << "  sensor                         frames in/out  datagrams  dropped (late)  rejected  "
         "latency p50/p99/max ms (periods)  physics ms/frame  pacing p99/max us  age p50/p99 "
         "ms\n";
  for (const auto& s : r.sensors) {
    out << "  " << std::left << std::setw(30) << s.label << std::right << std::setw(7)
        << s.frames_sent << "/" << std::left << std::setw(7) << s.frames_out << std::right
        << std::setw(9) << s.datagrams_sent << std::setw(9) << s.daemon_frames_dropped << " ("
        << std::setw(4) << s.daemon_frames_dropped_late << ")" << std::setw(10)
        << s.daemon_batches_rejected << "   " << std::setw(6) << s.latency.p50_ms << " /"
        << std::setw(6) << s.latency.p99_ms << " /" << std::setw(7) << s.latency.max_ms << " ("
        << (s.frames_identified ? std::to_string(s.latency_periods_max).substr(0, 4) : "  - ")
        << ")" << std::setw(12) << s.daemon_processing_ms_mean << std::setw(10)
        << pacing_p99(s.daemon_pacing_error_p99_us) << " /" << std::setw(9)
        << s.daemon_pacing_error_max_us << std::setw(9) << s.daemon_frame_age_p50_ms << " /"
        << std::setw(8) << s.daemon_frame_age_p99_ms << "\n";
  }
  print_frame_paths(out, r);
  out << "  rays in            " << millions(r.rays_per_s) << "rays/s (" << millions(r.beams_per_s)
      << "beams/s, " << r.input_bytes_per_s / 1e6 << " MB/s)\n";
  out << "  returns out        " << millions(r.returns_per_s) << "returns/s\n";
  out << "  packets out        " << r.packets_per_s << " packets/s\n";
  out << "  input lost         " << r.input_datagrams_lost
      << " datagram(s) (sent, not counted in by the daemon; its hit sockets' kernel drops: "
      << r.daemon_input_kernel_drops << ")\n";
  out << "  kernel UDP drops   " << r.kernel_udp_rcvbuf_errors << " receive-buffer errors, "
      << r.kernel_udp_in_errors << " input errors (host-wide, during the run)\n";
  if (r.host_wakeups.wakeups > 0) {
    out << "  host wake-ups      p99 " << r.host_wakeups.p99_us << " us, max "
        << r.host_wakeups.max_us << " us late over " << r.host_wakeups.wakeups
        << " wake-ups of a thread punctual as the daemon's sender"
        << (r.host_wakeups.realtime
                ? ""
                : " (real-time class refused: it takes root, CAP_SYS_NICE or an RLIMIT_RTPRIO, "
                  "as the daemon's sender does)")
        << ": the host's floor under the pacing error\n";
  }
  const bool identified = !r.sensors.empty() && r.sensors.front().frames_identified;
  std::uint64_t never_out = 0;
  for (const auto& s : r.sensors) never_out += s.frames_never_out;
  out << "  frame latency      p50 " << r.latency.p50_ms << " ms, p99 " << r.latency.p99_ms
      << " ms, max " << r.latency.max_ms << " ms over " << r.latency.frames
      << " frames (last input datagram -> last packet of that frame)";
  if (identified) {
    out << "; " << never_out << " frame(s) sent while measuring never came out\n";
  } else {
    out << "; raw rows: output frame k paired with input frame k, so meaningless once the "
           "daemon dropped frames: see age p99\n";
  }
  out << "  CPU per ray        " << r.daemon_cpu_ns_per_ray << " ns (daemon); bench used "
      << r.bench_cpu_s << " CPU s\n";
  const auto& c = r.cpu_per_beam;
  out << "  CPU per beam       input " << c.input_ns << ", physics " << c.physics_ns
      << ", encoding " << c.encoding_ns << ", sending " << c.sending_ns;
  if (c.locating_ns > 0) out << ", locating raw rows " << c.locating_ns;
  out << ", other " << c.other_ns << " ns; serial (a sensor's input, encoding and sending threads) "
      << c.serial_ns() << " ns per beam";
  if (c.serial_ns() > 0) {
    out << ": one sensor tops out near " << millions(1e9 / c.serial_ns())
        << "beams/s however many cores";
  }
  out << "\n";
  if (r.ceiling_rays_per_s > 0) {
    out << "  ceiling            " << millions(r.ceiling_rays_per_s)
        << "rays/s through a plain UDP sink (" << r.ceiling_bytes_per_s / 1e6 << " MB/s, "
        << r.ceiling_datagrams_per_s << " datagrams/s); lidaremud reached "
        << 100.0 * r.rays_per_s / r.ceiling_rays_per_s << " % of it\n";
  }
  out << "  daemon exit        " << r.daemon_exit_code << "\n";
}

}  // namespace lidaremu::clients
