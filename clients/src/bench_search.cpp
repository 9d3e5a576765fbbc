// The zero-loss search of lidaremu-bench (bench.hpp): runs of the real daemon at growing
// offered rates until one loses something, then bisection between the last clean rate and the
// first lossy one.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>

#include "lidaremu/clients/bench.hpp"
#include "lidaremu/clients/streaming.hpp"

namespace lidaremu::clients {

bool lost_anything(const BenchReport& r) {
  if (r.input_datagrams_lost > 0 || r.daemon_input_kernel_drops > 0) return true;
  return std::any_of(r.sensors.begin(), r.sensors.end(), [](const BenchSensorReport& s) {
    return s.frames_out < s.frames_sent || s.daemon_frames_dropped > 0 ||
           s.daemon_batches_rejected > 0;
  });
}

double offered_beams_per_s(const BenchOptions& o, double rate) {
  double beams = 0;
  for (const auto& spec : o.sensors) {
    const auto pattern = scan_for(spec.model, 0, spec.mode);
    beams += static_cast<double>(pattern.columns_per_frame) * pattern.model->channels /
             pattern.frame_period_s;
  }
  return beams * rate;
}

namespace {

ZeroLossStep run_step(const BenchOptions& o, double rate, std::ostream* progress) {
  BenchOptions step = o;
  step.rate = rate;
  step.ceiling_seconds = 0;
  // One pacing for every step: under "auto" the step at 1x alone ran in real time, under the
  // admission's three-period bound, and on one core lost frames that the steps above it, sent
  // as fast as taken, did not (the search ended at 0.95x where 2.25x was clean).
  if (step.pace == "auto") step.pace = "afap";
  ZeroLossStep s;
  s.rate = rate;
  s.offered_beams_per_s = offered_beams_per_s(o, rate);
  s.report = run_bench(step);
  s.lossless = !lost_anything(s.report) && s.report.daemon_exit_code == 0;
  if (progress) {
    std::uint64_t sent = 0, out = 0, dropped = 0;
    for (const auto& r : s.report.sensors) {
      sent += r.frames_sent;
      out += r.frames_out;
      dropped += r.daemon_frames_dropped;
    }
    *progress << std::fixed << std::setprecision(2) << "  rate " << std::setw(6) << rate
              << "x  offered " << std::setw(7) << s.offered_beams_per_s / 1e6 << " M beams/s  "
              << "frames " << out << "/" << sent << " out, " << dropped << " dropped, "
              << s.report.input_datagrams_lost << " datagrams lost, latency p99 "
              << s.report.latency.p99_ms << " ms: " << (s.lossless ? "clean" : "LOSS") << "\n"
              << std::flush;
  }
  return s;
}

}  // namespace

ZeroLossResult find_zero_loss(const BenchOptions& o, double start_rate, double max_rate,
                              double precision, std::ostream* progress) {
  ZeroLossResult result;
  double clean = 0, lossy = 0;
  // Grow (or, when the start already loses, shrink) by half until the two are bracketed.
  for (double rate = start_rate; rate <= max_rate && rate >= start_rate / 64;) {
    result.steps.push_back(run_step(o, rate, progress));
    if (result.steps.back().lossless) {
      clean = rate;
      if (lossy > 0) break;
      rate *= 1.5;
    } else {
      lossy = rate;
      if (clean > 0) break;
      rate /= 1.5;
    }
  }
  // Bisect (geometrically) until the bracket is narrower than the precision asked.
  while (clean > 0 && lossy > 0 && lossy / clean > 1 + precision) {
    const double rate = std::sqrt(clean * lossy);
    result.steps.push_back(run_step(o, rate, progress));
    (result.steps.back().lossless ? clean : lossy) = rate;
  }
  result.rate = clean;
  result.beams_per_s = offered_beams_per_s(o, clean);
  result.first_lossy_rate = lossy;
  return result;
}

void print_zero_loss(std::ostream& out, const BenchOptions& o, const ZeroLossResult& r) {
  out << std::fixed << std::setprecision(2) << "zero-loss throughput: ";
  if (r.rate == 0) {
    out << "none (every rate tried lost frames)\n";
    return;
  }
  out << r.beams_per_s / 1e6 << " M beams/s (" << r.rate << "x real time, " << o.scene << " scene, "
      << (o.raw ? "raw7" : "framed") << ", physics " << o.physics << ", rain " << o.rain_mm_per_h
      << " mm/h, " << o.rays_per_beam << " ray(s)/beam); ";
  if (r.first_lossy_rate > 0) {
    out << "first loss at " << r.first_lossy_rate << "x ("
        << offered_beams_per_s(o, r.first_lossy_rate) / 1e6 << " M beams/s)\n";
  } else {
    out << "no loss up to the highest rate tried\n";
  }
}

}  // namespace lidaremu::clients
