#include "lidaremu/clients/bench.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench_daemon.hpp"
#include "bench_host.hpp"
#include "lidaremu/clients/daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/packet_decoder.hpp"
#include "lidaremu/core/scan_choice.hpp"
#include "lidaremu/core/scan_table.hpp"

namespace lidaremu::clients {
namespace {
using Clock = std::chrono::steady_clock;

// A --profile value (the daemon refuses anything else before the bench counts a packet).
core::OusterProfile profile_of(const std::string& flag) {
  if (flag == "rng19") return core::OusterProfile::kRng19;
  if (flag == "rng19-dual") return core::OusterProfile::kRng19Dual;
  if (flag == "rng15") return core::OusterProfile::kRng15;
  return core::OusterProfile::kLegacy;
}

double seconds_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double>(t - t0).count();
}

// One sensor's load and what came back.
struct SensorLoad {
  BenchSensor spec;
  core::ScanPattern pattern;
  bool ouster = false;
  bool livox = false;
  std::string scan_table;  // Livox: the --scan-pattern the daemon and the bench share
  // Reads the returns and the time of each data packet (the receive thread's alone).
  std::unique_ptr<core::PacketDecoder> decoder;
  core::ReturnMode return_mode = core::ReturnMode::kStrongest;  // Velodyne, Hesai
  std::string profile = "legacy";
  std::vector<std::vector<std::uint8_t>> datagrams;  // one frame
  std::vector<std::uint64_t> datagram_sim_ns;        // each batch's own time in frame 1
  std::uint64_t rays_per_frame = 0;
  double packets_per_frame = 0;  // data packets that complete a frame (whole ones)
  std::unique_ptr<UdpSink> data, telemetry;
  std::unique_ptr<UdpSender> sender;  // to its hit port
  // Sender side.
  std::uint64_t frames_sent = 0;
  std::size_t next_datagram = 0;  // of the frame being sent
  std::uint64_t datagrams_sent = 0;
  std::vector<double> last_input_s;  // per frame: when its last datagram left
  // Receiver side (its thread only, except frames_out).
  std::atomic<std::uint64_t> frames_out{0};
  std::atomic<std::uint64_t> packets_out{0};
  std::atomic<std::uint64_t> returns_out{0};
  std::vector<double> frame_out_s;  // per frame: when its last whole packet arrived
  // Framed input: each packet names its frame by its timestamp (the daemon runs on the
  // simulation clock the batches carry), so a frame's age is known under drops too. Indexed by
  // frame number (from 1): when its latest packet arrived, 0 while none has.
  bool identify_frames = false;
  std::vector<double> frame_last_packet_s;
  std::atomic<double> last_packet_s{0};  // any data packet, seconds since the start
};

// The daemon hands a frame of raw rows on when the next one begins or its input has been idle
// this long (the last frame of a run).
constexpr int kIdleTimeoutMs = 1000;

// The simulation time of frame 1 (BatchHeader::sim_time_ns in build_load): one second into 2001
// (UTC), a time every family's packets can carry (the RS-Bpearl v3's date counts years from
// 2000 in a byte) at the top of an hour (a Velodyne packet carries microseconds past the hour).
constexpr std::uint64_t kFirstFrameSimNs = 978'307'201'000'000'000;
constexpr double kFirstFrameSimS = 978'307'201.0;

// The frame (numbered from 1) a packet's first column belongs to; 0 for none.
std::size_t frame_of_packet(const SensorLoad& l, std::span<const std::uint8_t> packet) {
  const double stamp = l.decoder->first_column_time_s(packet);
  const double wrap = l.decoder->time_wrap_s();  // Velodyne: microseconds past the hour
  const double t = stamp - (wrap > 0 ? std::fmod(kFirstFrameSimS, wrap) : kFirstFrameSimS);
  // Half a column's slack: the first column of a frame is stamped with the frame's start.
  const double f = std::floor((t + 0.5 * l.pattern.column_period_s) / l.pattern.frame_period_s);
  return f >= 0 && f < 1e7 ? static_cast<std::size_t>(f) + 1 : 0;
}

std::string config_for(const BenchOptions& o,
                       const std::vector<std::unique_ptr<SensorLoad>>& loads) {
  // A sensor's output runs at its own rate only when the input does; faster input is processed
  // and sent as fast as possible.
  const bool realtime = o.pace == "realtime" || (o.pace == "auto" && o.rate == 1.0);
  // Batches carry simulation time; running on it lets the bench tell each packet's frame.
  // Raw rows carry none: in real time they run on the wall clock.
  const bool sim_clock = !realtime || !o.raw;
  std::ostringstream c;
  c << "[daemon]\nhttp = \"off\"\nthreads = " << o.threads << "\nlog_level = \"warn\"\n";
  for (std::size_t i = 0; i < loads.size(); ++i) {
    const SensorLoad& l = *loads[i];
    c << "\n[[sensor]]\nname = \"" << l.spec.label() << "-" << i << "\"\nmodel = \"" << l.spec.model
      << "\"\nsensor_id = " << i << "\nhits = \"udp://127.0.0.1:0\"\n"
      << "hits_format = \"" << (o.raw ? "raw7" : "framed") << "\"\nout = \"" << l.data->url()
      << "\"\ntelemetry = \"" << l.telemetry->url() << "\"\npace = \""
      << (realtime ? "realtime" : "afap") << "\"\nclock = \"" << (sim_clock ? "sim" : "wall")
      << "\"\nphysics = \"" << o.physics << "\"\nseed = " << o.seed
      << "\nrays_per_beam = " << o.rays_per_beam << "\napi_port = 0\n"
      << "idle_timeout_ms = " << kIdleTimeoutMs << "\n"
      << "weather = { rain_mm_per_h = " << o.rain_mm_per_h << " }\n";
    if (l.livox) {
      c << "scan_pattern = \"" << l.scan_table << "\"\n";
    } else if (!l.spec.mode.empty()) {
      c << "mode = \"" << l.spec.mode << "\"\n";
    }
    if (!l.spec.variant.empty()) {
      c << (l.ouster ? "profile" : "return_mode") << " = \"" << l.spec.variant << "\"\n";
    }
  }
  return c.str();
}

// The demo scene for one sensor as the datagrams of one frame (frame 1), built once: the
// generator replays them, restamping frame number and time, so it spends its time sending.
void build_load(const BenchOptions& o, SensorLoad& l, std::uint16_t sensor_id) {
  const core::SensorModel* model = core::find_sensor_model(l.spec.model);
  l.livox = model != nullptr && core::scan_kind(*model) == core::ScanKind::kScanTable;
  // Livox: the spec's mode is the scan table. Frame 1's hits are replayed in every frame, each
  // put along that frame's beams: the load is a frame's, its geometry is test_livox_daemon's.
  if (l.livox)
    l.scan_table = l.spec.mode.empty() ? std::string(core::kTestPatternName) : l.spec.mode;
  l.pattern = l.livox ? scan_for(l.spec.model, 0, "", l.scan_table)
                      : scan_for(l.spec.model, 0, l.spec.mode);
  l.ouster = core::scan_kind(*l.pattern.model) == core::ScanKind::kLidarMode;
  // Hesai: the return mode named (or the model's default) fixes the blocks a column takes.
  const auto named = core::return_mode_named(l.spec.variant);
  l.return_mode = named && !l.ouster ? *named : core::default_return_mode(*l.pattern.model);
  l.identify_frames = !o.raw;
  if (l.ouster && !l.spec.variant.empty()) l.profile = l.spec.variant;
  l.decoder = core::make_packet_decoder(
      l.pattern, {.return_mode = l.return_mode, .profile = profile_of(l.profile)});
  std::vector<float> rows;
  const DemoScene scene =
      o.scene == "all-returning" ? DemoScene::enclosing_sphere(20.0) : DemoScene();
  scene.render(core::BeamGeometry(l.pattern), rows, nullptr, o.rays_per_beam);
  const int channels = l.pattern.model->channels;
  l.rays_per_frame = rows.size() / 7;
  if (o.raw) {
    for (const auto& part : raw_datagrams(rows, std::size_t(channels) * o.rays_per_beam * 7)) {
      l.datagrams.emplace_back(part.bytes.begin(), part.bytes.end());
      l.datagram_sim_ns.push_back(0);
    }
  } else {
    BatchHeader h;
    h.sensor_id = sensor_id;
    h.frame = 1;
    h.column_count = static_cast<std::uint32_t>(l.pattern.columns_per_frame);
    h.rays_per_beam = static_cast<std::uint8_t>(o.rays_per_beam);
    h.sim_time_ns = kFirstFrameSimNs;
    const auto column_ns = static_cast<std::uint64_t>(l.pattern.column_period_s * 1e9);
    l.datagrams = build_frame_batches(h, static_cast<std::uint16_t>(channels), rows, column_ns);
    for (const auto& d : l.datagrams) {  // each batch's own time, restamped frame by frame
      protocol::BatchView view;
      if (protocol::decode_hit_batch(d, view) != protocol::BatchError::kNone) {
        throw std::runtime_error("bench: built a batch the decoder refuses");
      }
      l.datagram_sim_ns.push_back(view.sim_time_ns);
    }
  }
  // Whole data packets per frame: an Ouster frame is W/16 packets; a Velodyne packet may hold
  // the end of one frame and the start of the next, so a frame counts as out with its last
  // whole packet.
  core::OusterOutput ouster;
  if (l.ouster) ouster.profile = profile_of(l.profile);
  const auto echoes = l.ouster ? core::ouster_return_mode(ouster.profile) : l.return_mode;
  const auto encoder = core::make_encoder(l.pattern, {}, echoes, ouster);
  if (!encoder) {
    throw std::runtime_error("bench: " + l.spec.model + " has no return mode '" + l.spec.variant +
                             "'");
  }
  l.packets_per_frame = l.pattern.frame_period_s / encoder->data_packet_period_s();
}

// Frames whose last whole packet is among the first n: frame m-1 ends with packet
// floor(m * packets_per_frame), so m frames are out once m < (n + 1) / packets_per_frame.
std::uint64_t frames_complete_after(const SensorLoad& l, std::uint64_t packets) {
  const double bound = static_cast<double>(packets + 1) / l.packets_per_frame;
  return static_cast<std::uint64_t>(std::ceil(bound - 1e-9)) - 1;
}

void receive_loop(std::vector<std::unique_ptr<SensorLoad>>& loads, const std::atomic<bool>& stop,
                  Clock::time_point t0) {
  std::vector<pollfd> fds;
  for (const auto& l : loads) {
    fds.push_back({l->data->fd(), POLLIN, 0});
    fds.push_back({l->telemetry->fd(), POLLIN, 0});
  }
  std::vector<std::uint8_t> scratch;
  while (!stop.load(std::memory_order_relaxed)) {
    if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
    for (std::size_t i = 0; i < loads.size(); ++i) {
      SensorLoad& l = *loads[i];
      if (fds[2 * i + 1].revents & POLLIN) drain_socket(fds[2 * i + 1].fd, scratch, [](auto) {});
      if (!(fds[2 * i].revents & POLLIN)) continue;
      drain_socket(fds[2 * i].fd, scratch, [&](std::span<const std::uint8_t> packet) {
        const std::uint64_t packets = l.packets_out.fetch_add(1, std::memory_order_relaxed) + 1;
        const double arrived = seconds_since(t0, Clock::now());
        l.last_packet_s.store(arrived, std::memory_order_relaxed);
        if (const std::size_t frame = l.identify_frames ? frame_of_packet(l, packet) : 0) {
          if (l.frame_last_packet_s.size() <= frame) l.frame_last_packet_s.resize(frame + 1, 0.0);
          l.frame_last_packet_s[frame] = arrived;
        }
        l.returns_out.fetch_add(l.decoder->count_returns(packet), std::memory_order_relaxed);
        const std::uint64_t complete = frames_complete_after(l, packets);
        if (complete > l.frames_out.load(std::memory_order_relaxed)) {
          const double now = seconds_since(t0, Clock::now());
          while (l.frame_out_s.size() < complete) l.frame_out_s.push_back(now);
          l.frames_out.store(complete, std::memory_order_release);
        }
      });
    }
  }
}

// The next datagram of the frame being sent; after its last, the frame counts as sent.
void send_next_datagram(SensorLoad& l, bool raw, Clock::time_point t0) {
  const std::uint64_t frame = l.frames_sent + 1;  // frame numbers from 1: 0 is not stored
  const auto period_ns = static_cast<std::uint64_t>(std::llround(l.pattern.frame_period_s * 1e9));
  const std::size_t k = l.next_datagram;
  auto& d = l.datagrams[k];
  if (!raw) {
    restamp_hit_batch(d, static_cast<std::uint32_t>(frame),
                      l.datagram_sim_ns[k] + (frame - 1) * period_ns);
  }
  while (!l.sender->send(d) && errno == ENOBUFS) {
    std::this_thread::yield();
  }
  ++l.datagrams_sent;
  if (++l.next_datagram < l.datagrams.size()) return;
  l.next_datagram = 0;
  l.last_input_s.push_back(seconds_since(t0, Clock::now()));
  ++l.frames_sent;
}

// The machine's ceiling: the same datagrams, as fast as one thread sends them, into a plain
// UDP socket another thread drains. What arrives per second is what loopback carries here.
void measure_ceiling(const BenchOptions& o, const SensorLoad& l, BenchReport& r) {
  UdpSink sink;
  UdpSender sender(sink.url());
  std::atomic<bool> stop{false};
  std::uint64_t received_bytes = 0, received_datagrams = 0;
  std::thread receiver([&] {
    std::vector<std::uint8_t> scratch;
    pollfd p{sink.fd(), POLLIN, 0};
    while (!stop.load(std::memory_order_relaxed)) {
      if (::poll(&p, 1, 20) <= 0) continue;
      drain_socket(sink.fd(), scratch, [&](std::span<const std::uint8_t> d) {
        received_bytes += d.size();
        ++received_datagrams;
      });
    }
  });
  const auto t0 = Clock::now();
  while (seconds_since(t0, Clock::now()) < o.ceiling_seconds) {
    for (const auto& d : l.datagrams) {
      if (!sender.send(d) && errno == ENOBUFS) std::this_thread::yield();
    }
  }
  const double elapsed = seconds_since(t0, Clock::now());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  receiver.join();
  std::uint64_t frame_bytes = 0;
  for (const auto& d : l.datagrams) frame_bytes += d.size();
  r.ceiling_bytes_per_s = static_cast<double>(received_bytes) / elapsed;
  r.ceiling_datagrams_per_s = static_cast<double>(received_datagrams) / elapsed;
  r.ceiling_rays_per_s = r.ceiling_bytes_per_s * static_cast<double>(l.rays_per_frame) /
                         static_cast<double>(frame_bytes);
}

}  // namespace

BenchReport run_bench(const BenchOptions& o) {
  if (o.sensors.empty()) throw std::runtime_error("bench: no sensor given (--sensor MODEL)");
  if (o.pace != "auto" && o.pace != "realtime" && o.pace != "afap") {
    throw std::runtime_error("bench: pace '" + o.pace + "': expected auto, realtime or afap");
  }
  if (o.scene != "demo" && o.scene != "all-returning") {
    throw std::runtime_error("bench: scene '" + o.scene + "': expected demo or all-returning");
  }
  std::vector<std::unique_ptr<SensorLoad>> loads;
  for (std::size_t i = 0; i < o.sensors.size(); ++i) {
    auto l = std::make_unique<SensorLoad>();
    l->spec = o.sensors[i];
    l->data = std::make_unique<UdpSink>();
    l->telemetry = std::make_unique<UdpSink>();
    build_load(o, *l, static_cast<std::uint16_t>(i));
    loads.push_back(std::move(l));
  }
  BenchReport r;
  if (o.ceiling_seconds > 0) measure_ceiling(o, *loads.front(), r);

  const std::string config = "/tmp/lidaremu-bench-" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream f(config);
    f << config_for(o, loads);
  }
  const LoadAffinity load_affinity(o.load_cpus);
  DaemonProcess daemon(o.daemon, {"--config", config}, o.daemon_cpus);
  // One "hits" line per sensor, in order: where to send.
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::vector<std::uint16_t> ports = daemon.hits_ports();
  while (ports.size() < loads.size() && Clock::now() < deadline && daemon.running()) {
    daemon.read_output(std::chrono::milliseconds(50));
    ports = daemon.hits_ports();
  }
  std::remove(config.c_str());
  if (ports.size() < loads.size()) {
    throw std::runtime_error("bench: lidaremud did not start every sensor; it said:\n" +
                             daemon.output());
  }
  for (std::size_t i = 0; i < loads.size(); ++i) {
    loads[i]->sender = std::make_unique<UdpSender>("udp://127.0.0.1:" + std::to_string(ports[i]));
  }

  const auto t0 = Clock::now();
  std::atomic<bool> stop_receiving{false};
  std::thread receiver([&] { receive_loop(loads, stop_receiving, t0); });
  const auto kernel_before = read_kernel_udp_counters();
  const double total_s = o.warmup_seconds + o.seconds;
  double cpu_daemon_at_warmup = -1, cpu_self_at_warmup = 0;
  std::map<int, ThreadCpu> threads_at_warmup;
  std::vector<std::uint64_t> frames_out_at_warmup(loads.size()), packets_at_warmup(loads.size()),
      returns_at_warmup(loads.size()), frames_sent_at_warmup(loads.size());
  double measure_from = 0;
  // What the host gives a punctual thread while measuring: the floor under the pacing error.
  std::optional<WakeupProbe> wakeups;
  // Each sensor's schedule at N x real time: datagram k of frame f leaves at
  // (f * period + k * period / datagrams) / N, as an engine produces a frame while the head turns.
  const auto due_s = [&](const SensorLoad& l) {
    const double k = static_cast<double>(l.next_datagram) / static_cast<double>(l.datagrams.size());
    return (static_cast<double>(l.frames_sent) + k) * l.pattern.frame_period_s / o.rate;
  };
  for (;;) {
    const double now = seconds_since(t0, Clock::now());
    if (cpu_daemon_at_warmup < 0 && now >= o.warmup_seconds) {
      cpu_daemon_at_warmup = process_cpu_s(daemon.pid());
      threads_at_warmup = thread_cpu(daemon.pid());
      cpu_self_at_warmup = self_cpu_s();
      measure_from = now;
      wakeups.emplace();
      for (std::size_t i = 0; i < loads.size(); ++i) {
        frames_out_at_warmup[i] = loads[i]->frames_out.load(std::memory_order_acquire);
        frames_sent_at_warmup[i] = loads[i]->frames_sent;
        packets_at_warmup[i] = loads[i]->packets_out.load(std::memory_order_relaxed);
        returns_at_warmup[i] = loads[i]->returns_out.load(std::memory_order_relaxed);
      }
    }
    // The frame being sent is sent whole: a part of one would end by the idle timeout. At a rate
    // it keeps its pace: sent at once, the run's last frame was complete up to a period early,
    // waited for its sensor time, and the admission rightly dropped it as three periods old.
    const bool ending = now >= total_s;
    if (ending && std::ranges::all_of(loads, [](const auto& l) { return l->next_datagram == 0; })) {
      break;
    }
    if (ending && o.rate <= 0) {
      for (auto& l : loads) {
        while (l->next_datagram != 0) send_next_datagram(*l, o.raw, t0);
      }
      break;
    }
    bool sent = false;
    double next_due_s = now + 0.005;
    for (auto& l : loads) {
      if (o.rate > 0) {
        if (ending && l->next_datagram == 0) continue;
        for (; due_s(*l) <= now && !(ending && l->next_datagram == 0); sent = true) {
          send_next_datagram(*l, o.raw, t0);
        }
        next_due_s = std::min(next_due_s, due_s(*l));
        continue;
      }
      // As fast as taken: whole frames, each as one burst.
      if (l->frames_sent >=
          l->frames_out.load(std::memory_order_acquire) + static_cast<std::uint64_t>(o.in_flight)) {
        continue;
      }
      do send_next_datagram(*l, o.raw, t0);
      while (l->next_datagram != 0);
      sent = true;
    }
    // At a rate: asleep until the next datagram is due (the daemon shares the cores); as fast
    // as taken: polling for the frames out.
    if (o.rate > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, next_due_s - now)));
    } else if (!sent) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  // What was sent comes out within a few frame periods; then the daemon stops. Frames the daemon
  // dropped never come: the wait also ends once the output has been quiet for longer than a
  // frame takes to leave in real time (margin, period, physics) after the idle timeout.
  const auto drain_until = Clock::now() + std::chrono::seconds(5);
  for (bool pending = true; pending && Clock::now() < drain_until;) {
    pending = false;
    const double now = seconds_since(t0, Clock::now());
    for (const auto& l : loads) {
      const double quiet_s = now - l->last_packet_s.load(std::memory_order_relaxed);
      pending |= l->frames_out.load(std::memory_order_acquire) < l->frames_sent &&
                 quiet_s < kIdleTimeoutMs * 1e-3 + 3 * l->pattern.frame_period_s + 0.2;
    }
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double end_s = seconds_since(t0, Clock::now());
  if (wakeups) r.host_wakeups = wakeups->stop();
  const double cpu_daemon = process_cpu_s(daemon.pid()) - std::max(cpu_daemon_at_warmup, 0.0);
  const auto cpu_by_thread = cpu_by_thread_name(threads_at_warmup, thread_cpu(daemon.pid()));
  r.bench_cpu_s = self_cpu_s() - cpu_self_at_warmup;
  const auto kernel_after = read_kernel_udp_counters();
  stop_receiving = true;
  receiver.join();
  r.daemon_cpus_allowed = cpus_allowed_list(daemon.pid());
  r.daemon_exit_code = daemon.stop();

  r.measured_seconds = end_s - measure_from;
  std::vector<double> all_latencies;
  std::uint64_t rays_measured = 0, beams_measured = 0, returns_measured = 0, packets_measured = 0,
                bytes_measured = 0, beams_offered = 0;
  for (std::size_t i = 0; i < loads.size(); ++i) {
    SensorLoad& l = *loads[i];
    BenchSensorReport s;
    s.label = l.spec.label();
    s.frames_identified = l.identify_frames;
    s.frames_sent = l.frames_sent;
    s.frames_out = l.frames_out.load();
    s.datagrams_sent = l.datagrams_sent;
    s.rays_sent = l.frames_sent * l.rays_per_frame;
    s.packets_out = l.packets_out.load();
    s.returns_out = l.returns_out.load();
    std::vector<double> latencies;
    if (l.identify_frames) {
      // Frame f (from 1) is last_input_s[f - 1]; those sent while measuring.
      for (std::size_t f = frames_sent_at_warmup[i] + 1; f <= l.frames_sent; ++f) {
        const double out = f < l.frame_last_packet_s.size() ? l.frame_last_packet_s[f] : 0.0;
        if (out > 0) {
          latencies.push_back(out - l.last_input_s[f - 1]);
          s.latency_periods_max =
              std::max(s.latency_periods_max, latencies.back() / l.pattern.frame_period_s);
        } else {
          ++s.frames_never_out;
        }
      }
    } else {
      // Raw rows carry no frame end: a frame ends when the next one's rows come, the run's last
      // one only after the idle timeout (the bench's, 1 s). That wait is the run's end, not the
      // daemon's latency: frames whose successor was sent count, the last does not.
      for (std::size_t f = frames_out_at_warmup[i];
           f < l.frame_out_s.size() && f + 1 < l.last_input_s.size(); ++f) {
        latencies.push_back(l.frame_out_s[f] - l.last_input_s[f]);
      }
    }
    all_latencies.insert(all_latencies.end(), latencies.begin(), latencies.end());
    s.latency = summarise_latencies(latencies);
    const std::string name = l.spec.label() + "-" + std::to_string(i);
    s.daemon_datagrams_in = daemon_counter(daemon, "datagrams_in_total", name);
    s.daemon_input_kernel_drops = daemon_counter(daemon, "input_kernel_drops_total", name);
    r.daemon_input_kernel_drops += s.daemon_input_kernel_drops;
    s.daemon_frames_dropped = daemon_counter(daemon, "frames_dropped_total", name);
    s.daemon_frames_dropped_late = daemon_counter(daemon, "frames_dropped_late_total", name);
    s.daemon_frames_processed = daemon_counter(daemon, "frames_processed_total", name);
    const auto seconds = [&](const std::string& family) {
      return daemon.value("lidaremu_" + family + "{sensor=\"" + name + "\"}");
    };
    s.daemon_processing_ms_mean = s.daemon_frames_processed
                                      ? seconds("processing_seconds_sum") * 1e3 /
                                            static_cast<double>(s.daemon_frames_processed)
                                      : 0.0;
    s.daemon_pacing_error_max_us = seconds("pacing_error_max_seconds") * 1e6;
    s.daemon_pacing_error_p99_us =
        histogram_quantile(daemon.output(), "pacing_error_seconds", name, 0.99) * 1e6;
    s.daemon_frame_age_p50_ms =
        histogram_quantile(daemon.output(), "frame_age_seconds", name, 0.5) * 1e3;
    s.daemon_frame_age_p99_ms =
        histogram_quantile(daemon.output(), "frame_age_seconds", name, 0.99) * 1e3;
    const auto stage = [&](const std::string& family) {
      const double count = seconds(family + "_count");
      return BenchSensorReport::Stage{
          count > 0 ? seconds(family + "_sum") * 1e3 / count : 0.0,
          histogram_quantile(daemon.output(), family, name, 0.99) * 1e3};
    };
    s.input = stage("frame_input_seconds");
    s.gate_wait = stage("frame_gate_wait_seconds");
    s.physics = stage("processing_seconds");
    s.queued = stage("frame_queued_seconds");
    s.sending = stage("frame_sending_seconds");
    s.age = stage("frame_age_seconds");
    s.daemon_frames_dropped_stale = daemon_counter(daemon, "frames_dropped_stale_total", name);
    s.daemon_encoding_cpu_s = seconds("encoding_cpu_seconds_total");
    const std::string& out = daemon.output();
    const std::string prefix = "lidaremu_batches_rejected_total{sensor=\"" + name + "\"";
    for (auto at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at + 1)) {
      const auto line_end = out.find('\n', at);
      const auto space = out.rfind(' ', line_end);
      s.daemon_batches_rejected += std::stoull(out.substr(space + 1, line_end - space - 1));
    }
    r.input_datagrams_lost +=
        s.datagrams_sent > s.daemon_datagrams_in ? s.datagrams_sent - s.daemon_datagrams_in : 0;
    const std::uint64_t frames_measured = s.frames_out - frames_out_at_warmup[i];
    beams_offered += (s.frames_sent - frames_sent_at_warmup[i]) * l.rays_per_frame /
                     static_cast<std::uint64_t>(o.rays_per_beam);
    rays_measured += frames_measured * l.rays_per_frame;
    beams_measured +=
        frames_measured * l.rays_per_frame / static_cast<std::uint64_t>(o.rays_per_beam);
    returns_measured += s.returns_out - returns_at_warmup[i];
    packets_measured += s.packets_out - packets_at_warmup[i];
    std::uint64_t frame_bytes = 0;
    for (const auto& d : l.datagrams) frame_bytes += d.size();
    bytes_measured += frames_measured * frame_bytes;
    r.sensors.push_back(s);
  }
  r.latency = summarise_latencies(all_latencies);
  const double t = std::max(r.measured_seconds, 1e-9);
  r.rays_per_s = static_cast<double>(rays_measured) / t;
  r.beams_per_s = static_cast<double>(beams_measured) / t;
  r.returns_per_s = static_cast<double>(returns_measured) / t;
  r.packets_per_s = static_cast<double>(packets_measured) / t;
  r.input_bytes_per_s = static_cast<double>(bytes_measured) / t;
  r.daemon_cpu_ns_per_ray =
      rays_measured ? cpu_daemon * 1e9 / static_cast<double>(rays_measured) : 0;
  r.cpu_per_beam = cpu_per_beam(cpu_by_thread, r.sensors, beams_offered, beams_measured);
  r.kernel_udp_rcvbuf_errors = kernel_after.rcvbuf_errors - kernel_before.rcvbuf_errors;
  r.kernel_udp_in_errors = kernel_after.in_errors - kernel_before.in_errors;
  return r;
}

}  // namespace lidaremu::clients
