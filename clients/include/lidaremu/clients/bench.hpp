#pragma once
// lidaremu-bench: a load generator and reporter, separate from the daemon. It starts lidaremud
// with the chosen sensors, streams the demo scene's hit batches to it over loopback (as fast as
// the daemon takes them, or at N times real time), counts what comes out, and measures the
// machine's own ceiling: a plain UDP sink fed the same datagrams in the same run.
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/clients/wakeup_probe.hpp"
#include "lidaremu/core/hesai/format.hpp"

namespace lidaremu::clients {

struct BenchSensor {
  std::string model;    // a --model name
  std::string mode;     // Ouster "2048x10"; Livox the scan table (a CSV file, or
                        // test-pattern, the default); empty: the model's default
  std::string variant;  // Velodyne return mode (strongest|last|dual), Ouster profile
                        // (legacy|rng19|rng19-dual|rng15); empty: the default
  // "MODEL[:MODE][:VARIANT]", e.g. "os1-128:2048x10", "vls128::dual", "os1-64::rng19".
  static BenchSensor parse(const std::string& spec);
  [[nodiscard]] std::string label() const;
};

struct BenchOptions {
  std::vector<BenchSensor> sensors;
  double rate = 0;  // 0: as fast as the daemon takes frames; N: N times real time (the daemon
                    // paces its output in real time when N is 1, sends as fast as it can else)
  // "auto": the daemon paces in real time at rate 1, sends as fast as it can otherwise;
  // "realtime": real-time pacing at any rate (at rate 2 a sensor is offered twice what it can
  // send: the overload every machine meets alike); "afap": as fast as it can at any rate (the
  // zero-loss search's steps, under "auto").
  std::string pace = "auto";
  int in_flight = 2;          // as fast as taken: frames a sensor may have outstanding
  double seconds = 10;        // of load
  double warmup_seconds = 1;  // of load before measuring (first frames allocate, caches fill)
  bool raw = false;           // headerless raw7 rows instead of HitBatch datagrams
  int rays_per_beam = 1;
  std::string scene = "demo";  // or "all-returning": every beam returns, at 20 m (the worst case)
  double rain_mm_per_h = 10;
  std::string physics = "default";  // or "ideal"
  int threads = 0;                  // the daemon's worker threads (0: all cores)
  double ceiling_seconds = 2;       // the plain UDP sink's run (0: skipped)
  std::string daemon;               // lidaremud's path
  std::uint64_t seed = 1;
  // The CPUs the daemon and the bench's own load may run on (empty: any).
  std::vector<int> daemon_cpus;
  std::vector<int> load_cpus;
};

struct LatencySummary {
  std::size_t frames = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

struct BenchSensorReport {
  std::string label;
  std::uint64_t frames_sent = 0;
  std::uint64_t frames_out = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t rays_sent = 0;
  std::uint64_t packets_out = 0;
  std::uint64_t returns_out = 0;
  // Framed input: each frame's latency from the packets that carry its time, so it holds under
  // drops; frames sent while measuring that never came out; the oldest frame that did, in frame
  // periods. Raw input: output frame k paired with input frame k (meaningful without drops).
  LatencySummary latency;
  bool frames_identified = false;
  std::uint64_t frames_never_out = 0;
  double latency_periods_max = 0;
  // The daemon's own counters for this sensor (printed when it stops).
  std::uint64_t daemon_datagrams_in = 0;
  std::uint64_t daemon_input_kernel_drops = 0;  // dropped on its hit socket by the kernel
  std::uint64_t daemon_frames_dropped = 0;
  std::uint64_t daemon_frames_dropped_late = 0;  // of those, before the physics (real time)
  std::uint64_t daemon_batches_rejected = 0;
  std::uint64_t daemon_frames_processed = 0;
  double daemon_processing_ms_mean = 0;
  double daemon_pacing_error_max_us = 0;
  double daemon_pacing_error_p99_us = 0;  // upper bound of its histogram bucket; inf beyond
  // How old frames are when their last packet leaves (the daemon's histogram, bucket bound):
  // true under drops too, where the bench's own latency cannot tell which input a frame was.
  double daemon_frame_age_p50_ms = 0;
  double daemon_frame_age_p99_ms = 0;
  // Where each frame's time went, by stage (the daemon's frame-path histograms): the mean, and
  // the upper bound of the bucket holding the 99th percentile (ms; docs/metrics.md).
  struct Stage {
    double mean_ms = 0;
    double p99_ms = 0;
  };
  Stage input, gate_wait, physics, queued, sending, age;
  // Where the dropped frames went: behind while still arriving (input outran processing),
  // refused before their physics, or dropped after it (stale once complete).
  std::uint64_t daemon_frames_dropped_stale = 0;
  double daemon_encoding_cpu_s = 0;  // over the whole run (the daemon's counter)
};

struct BenchReport {
  std::vector<BenchSensorReport> sensors;
  double measured_seconds = 0;
  double rays_per_s = 0;
  double beams_per_s = 0;
  double returns_per_s = 0;
  double packets_per_s = 0;
  double input_bytes_per_s = 0;
  std::uint64_t input_datagrams_lost = 0;       // sent minus what the daemon counted in
  std::uint64_t daemon_input_kernel_drops = 0;  // of those, dropped on the daemon's sockets
  std::uint64_t kernel_udp_rcvbuf_errors = 0;   // /proc/net/snmp, this host, during the run
  std::uint64_t kernel_udp_in_errors = 0;
  // How late a thread made punctual as the daemon's sender woke, each millisecond while
  // measuring (the bench's own thread, on the bench's CPUs): no pacing error is below it.
  WakeupProbe::Summary host_wakeups;
  double daemon_cpu_ns_per_ray = 0;
  // The daemon's CPU per beam by its threads' work (their names: docs/performance.md): each
  // sensor's input, encoding and sending are one thread each, the serial part that caps one
  // sensor whatever the cores; the physics runs on every core. The input per beam received, the
  // rest per beam out (under drops the two differ).
  struct CpuPerBeam {
    double input_ns = 0;
    double physics_ns = 0;  // TBB's workers and the processing threads, less the encoding
    double encoding_ns = 0;
    double sending_ns = 0;
    // Raw rows: the sensor's locating thread (their conversion and beam search, a set of
    // datagrams at a time, spread over TBB's workers as the set allows: not serial).
    double locating_ns = 0;
    double other_ns = 0;  // the io thread, the live view, the capture writers
    [[nodiscard]] double serial_ns() const { return input_ns + encoding_ns + sending_ns; }
  } cpu_per_beam;
  double bench_cpu_s = 0;
  LatencySummary latency;  // all sensors' frames
  double ceiling_rays_per_s = 0;
  double ceiling_bytes_per_s = 0;
  double ceiling_datagrams_per_s = 0;
  int daemon_exit_code = 0;
  std::string daemon_cpus_allowed;  // as the kernel lists the daemon's (/proc/PID/status)
};

// Throws std::runtime_error when the daemon cannot be started or a sensor name is wrong.
BenchReport run_bench(const BenchOptions& options);
void print_report(std::ostream& out, const BenchOptions& options, const BenchReport& report);

// A run lost something when a frame sent did not come out whole, the daemon dropped a frame or
// refused a batch, or a datagram sent was not counted in (the kernel dropped it).
bool lost_anything(const BenchReport& report);
// Beams per second offered to the daemon at `rate` times real time, over every sensor.
double offered_beams_per_s(const BenchOptions& options, double rate);

// The zero-loss throughput, as RFC 2544 measures a device: the offered rate (a factor of real
// time) grows by half until a run loses something, then bisection narrows the step between the
// last clean rate and the first lossy one to `precision` (relative). One run per step, each of
// options.seconds.
struct ZeroLossStep {
  double rate = 0;
  double offered_beams_per_s = 0;
  bool lossless = false;
  BenchReport report;
};
struct ZeroLossResult {
  std::vector<ZeroLossStep> steps;
  double rate = 0;              // the highest clean rate (0: none was)
  double beams_per_s = 0;       // offered at that rate
  double first_lossy_rate = 0;  // 0: none lost up to max_rate
};
ZeroLossResult find_zero_loss(const BenchOptions& options, double start_rate, double max_rate,
                              double precision, std::ostream* progress);
void print_zero_loss(std::ostream& out, const BenchOptions& options, const ZeroLossResult& result);

// How the zero-loss throughput grows with the daemon's cores: for each count N the daemon runs on
// the first N CPUs the bench may use and the bench's load on the rest (on all of them when none
// is left), and the zero-loss search runs. Throws std::runtime_error when a count exceeds the
// CPUs available.
struct ScalingPoint {
  int cores = 0;
  ZeroLossResult result;
};
std::vector<ScalingPoint> measure_scaling(const BenchOptions& options,
                                          const std::vector<int>& core_counts, double start_rate,
                                          double max_rate, double precision,
                                          std::ostream* progress);
// The table: beams/s per core count, per core, and the efficiency against the first count's
// per-core figure times N (the ideal line).
void print_scaling(std::ostream& out, const std::vector<ScalingPoint>& points);
// The same as an SVG plot (beams/s against cores, with the ideal line).
std::string scaling_svg(const std::vector<ScalingPoint>& points, const std::string& title);

// Percentiles of frame latencies (seconds in, milliseconds out); nearest rank.
LatencySummary summarise_latencies(std::vector<double> seconds);

}  // namespace lidaremu::clients
