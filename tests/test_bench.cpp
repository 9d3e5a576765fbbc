// lidaremu-bench against the real daemon: every frame accounted for, raw rows on schedule.

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/bench.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/clients/wakeup_probe.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {

clients::BenchOptions short_bench(const std::vector<std::string>& sensors, double seconds) {
  clients::BenchOptions o;
  o.daemon = test::daemon_path();
  for (const auto& spec : sensors) o.sensors.push_back(clients::BenchSensor::parse(spec));
  o.seconds = seconds;
  o.warmup_seconds = 0.3;
  return o;
}

// A run of one sensor: the daemon exited cleanly and the report holds the sensor.
clients::BenchReport run_one_sensor(const clients::BenchOptions& o) {
  auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 1);
  return r;
}

// A process's command name, state and parent (/proc/PID/stat); none once it is gone.
struct ProcessStatus {
  std::string command;
  char state = '?';
  pid_t parent = 0;
};
std::optional<ProcessStatus> process_status(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (command) state ppid ...": the command may hold spaces and parentheses.
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  ProcessStatus s;
  s.command = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  rest >> s.state >> s.parent;
  return s;
}

// The child of `parent` running `command`, if it has one.
std::optional<pid_t> child_named(pid_t parent, const std::string& command) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (const auto s = process_status(pid); s && s->parent == parent && s->command == command) {
      return pid;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("A daemon dies with the bench that started it, killed mid-run", "[e2e][bench]") {
  // A bench (or a test) killed mid-run by a timeout or a user must not leave its daemon running,
  // holding its ports for whatever runs next (a CI job's next step once failed on that).
  const std::string bench_path = LIDAREMU_TEST_BENCH;
  const std::string daemon = test::daemon_path();
  const pid_t bench = ::fork();
  if (bench == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::execl(bench_path.c_str(), "lidaremu-bench", "--daemon", daemon.c_str(), "--sensor", "vlp16",
            "--seconds", "60", "--ceiling-seconds", "0", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(bench > 0);
  std::optional<pid_t> daemon_pid;
  for (int i = 0; i < 200 && !daemon_pid; ++i) {
    std::this_thread::sleep_for(50ms);
    daemon_pid = child_named(bench, "lidaremud");
  }
  if (!daemon_pid) {
    ::kill(bench, SIGKILL);
    ::waitpid(bench, nullptr, 0);
  }
  REQUIRE(daemon_pid);
  // The bench stopped first, so that its sending ends and the daemon says what it says about
  // that while the bench can still read it: a daemon that writes to its dead parent's pipe dies
  // of SIGPIPE anyway; the one that outlived its test was quiet.
  ::kill(bench, SIGSTOP);
  std::this_thread::sleep_for(2s);
  ::kill(bench, SIGKILL);
  ::waitpid(bench, nullptr, 0);
  // Gone, or a zombie its new parent has yet to reap, within five seconds.
  const auto dead = [&] {
    const auto s = process_status(*daemon_pid);
    return !s || s->state == 'Z' || s->command != "lidaremud";
  };
  bool died = false;
  for (int i = 0; i < 100 && !died; ++i) {
    std::this_thread::sleep_for(50ms);
    died = dead();
  }
  if (!died) ::kill(*daemon_pid, SIGKILL);  // a failed run leaves nothing behind
  CHECK(died);
}

TEST_CASE("lidaremu-bench loads the real daemon and accounts for every frame", "[e2e][bench]") {
  // One sensor of each family; the Bpearl v3 stamps YMD time, which the bench must read to tell
  // a packet's frame; the Mid-360's frames are no whole packets (208.3 a frame).
  // (Sanitized, a frame of each takes so long that 1.5 s carried two: three times as long.)
  auto o = short_bench({"vlp16", "os1-32:512x10:rng19", "pandar-xt32::dual", "rs-bpearl-v3",
                        "livox-mid360:test-pattern"},
                       test::kSanitized ? 4.5 : 1.5);
  o.in_flight = 1;
  o.ceiling_seconds = 0.3;
  const auto r = clients::run_bench(o);
  CHECK(r.daemon_exit_code == 0);
  REQUIRE(r.sensors.size() == 5);
  for (const auto& s : r.sensors) {
    INFO(s.label);
    CHECK(s.frames_sent >= 3);
    CHECK(s.frames_out == s.frames_sent);
    CHECK(s.daemon_datagrams_in == s.datagrams_sent);
    CHECK(s.daemon_frames_processed == s.frames_sent);
    CHECK(s.daemon_frames_dropped == 0);
    CHECK(s.daemon_batches_rejected == 0);
    CHECK(s.latency.frames > 0);
    CHECK(s.frames_never_out == 0);
    CHECK(s.latency.p50_ms > 0);
    CHECK(s.latency.p50_ms <= s.latency.p99_ms);
    CHECK(s.latency.p99_ms <= s.latency.max_ms);
    CHECK(s.returns_out > 0);
    // Dual modes report each echo twice when there is one (the same return in both blocks).
    const std::uint64_t echoes_per_ray = s.label.ends_with("dual") ? 2 : 1;
    CHECK(s.returns_out < echoes_per_ray * s.rays_sent);
  }
  CHECK(r.input_datagrams_lost == 0);
  CHECK(r.rays_per_s > 0);
  CHECK(r.returns_per_s > 0);
  CHECK(r.returns_per_s < 2 * r.rays_per_s);
  CHECK(r.daemon_cpu_ns_per_ray > 0);
  CHECK(r.ceiling_rays_per_s > r.rays_per_s);
  std::ostringstream report;
  clients::print_report(report, o, r);
  CHECK_THAT(report.str(), Catch::Contains("lidaremud reached"));
  // The host's wake-ups, measured while the load ran: one a millisecond.
  CHECK(r.host_wakeups.wakeups >= 500);
  CHECK(r.host_wakeups.p99_us <= r.host_wakeups.max_us);
  CHECK_THAT(report.str(), Catch::Contains("host wake-ups      p99"));
}

TEST_CASE("lidaremu-bench at twice real time sends raw rows on the sensor's schedule",
          "[e2e][bench]") {
  auto o = short_bench({"vlp16"}, 1.0);
  o.rate = 2;
  o.raw = true;
  o.warmup_seconds = 0.2;
  o.ceiling_seconds = 0;
  const auto r = run_one_sensor(o);
  const auto& s = r.sensors[0];
  // 10 Hz at twice real time for 1.2 s: 24 frames, the first at once.
  CHECK(s.frames_sent >= 23);
  CHECK(s.frames_sent <= 26);
  CHECK(s.daemon_datagrams_in == s.datagrams_sent);
  // Every frame is processed or, when input outruns processing, dropped whole and counted.
  CHECK(s.daemon_frames_processed + s.daemon_frames_dropped == s.frames_sent);
  CHECK(s.frames_out > 0);
  // At full speed a VLP-16 frame takes a few milliseconds of its 50: all of them come out.
  if (!test::kSanitized) CHECK(s.frames_out == s.frames_sent);
  CHECK(r.ceiling_rays_per_s == 0);
  // Their beams are found on the sensor's locating thread (and TBB's workers), not the input's.
  CHECK(r.cpu_per_beam.locating_ns > 0);
  // Raw rows carry no frame end: the run's last frame ends only at the daemon's idle timeout
  // (the bench's: 1 s), which is the run's end, not a latency; the frames before it end when the
  // next one's rows come, a period later at most.
  // (Output frame k is paired with input frame k, so this holds where none was dropped: always
  // in the normal build, above; a sanitized daemon drops some.)
  CHECK(s.latency.frames > 0);
  if (s.daemon_frames_dropped == 0) CHECK(s.latency.frames < s.frames_out);
  if (!test::kSanitized) CHECK(s.latency.max_ms < 500);
}

TEST_CASE(
    "Offered twice what it can send in real time, a sensor drops frames whole and counts "
    "every one",
    "[e2e][bench][overload][pacing]") {
  // Real-time pacing carries one frame per period whatever the CPU: at twice real time half the
  // frames must go. Each output packet names its frame by its timestamp (simulation clock), so
  // the bench knows each frame's age and which frames never came out.
  auto o = short_bench({"os1-32:512x10"}, 2.5);
  o.rate = 2;
  o.pace = "realtime";
  o.warmup_seconds = 0.5;
  o.ceiling_seconds = 0;
  const auto r = run_one_sensor(o);
  const auto& s = r.sensors[0];
  INFO("sent " << s.frames_sent << ", processed " << s.daemon_frames_processed << ", dropped "
               << s.daemon_frames_dropped << " (late " << s.daemon_frames_dropped_late
               << "), oldest out " << s.latency_periods_max << " periods");
  REQUIRE(s.frames_identified);
  CHECK(s.frames_sent >= 55);
  CHECK(s.daemon_datagrams_in == s.datagrams_sent);
  // Every frame is processed or dropped whole and counted, most by the admission (late).
  CHECK(s.daemon_frames_processed + s.daemon_frames_dropped == s.frames_sent);
  CHECK(s.daemon_frames_dropped_late * 2 >= s.daemon_frames_dropped);
  // About half leave (the sender carries one in two).
  CHECK(s.daemon_frames_processed >= s.frames_sent * 25 / 100);
  CHECK(s.daemon_frames_processed <= s.frames_sent * 65 / 100);
  CHECK(s.frames_never_out > 0);
  CHECK(s.latency.frames > 0);
  // How old what leaves is, is a performance figure: lidaremu-bench prints it (the oldest under
  // three periods in most runs on 2 cores; in some the sender waits out a frame due ahead and
  // the oldest reaches 9-10 periods, the known issue in docs/performance.md), not a check here.
  CHECK(s.latency_periods_max > 0);
  // Before the admission (the previous daemon under this same bench) the frame buffers and the
  // sender's queue aged what left: 25 of 60 out, the oldest 11.5 periods old.
}

TEST_CASE("A real-time run's last frame keeps the engine's pace and comes out",
          "[e2e][bench][pacing]") {
  // The run ends 10 ms into a frame. Its rest was sent at once: complete almost a period early,
  // waiting for its sensor time, it would leave over three periods after its input, and the
  // admission dropped it (every real-time bench run lost its last frame of some sensor).
  auto o = short_bench({"os1-32:512x10"}, 1.01);
  o.warmup_seconds = 0.5;
  o.rate = 1;
  o.ceiling_seconds = 0;
  const auto r = run_one_sensor(o);
  const auto& s = r.sensors[0];
  INFO("frames sent " << s.frames_sent << ", out " << s.frames_out << ", dropped "
                      << s.daemon_frames_dropped << ", never out " << s.frames_never_out);
  // The frame begun at 1.5 s is sent whole: 16 frames.
  CHECK(s.frames_sent == 16);
  CHECK(s.daemon_frames_dropped == 0);
  CHECK(s.frames_never_out == 0);
  CHECK(s.frames_out == s.frames_sent);
  // Each frame left about two periods after its last datagram (the pacing margin, then its own
  // span), the last one too: sent at once, it took nearly three, and with other sensors' physics
  // to wait behind, more than the admission allows.
  INFO("latency p50 " << s.latency.p50_ms << ", max " << s.latency.max_ms << " ms");
  CHECK(s.latency.p50_ms < 250);
  if (!test::kSanitized) CHECK(s.latency.max_ms < 260);
}

TEST_CASE("A real-time frame's path, stage by stage, adds up to its age", "[e2e][bench][pacing]") {
  // The daemon times each frame's stages (docs/metrics.md, frame path) so that a lost or late
  // frame shows where its time went; the bench reads them back. Real time, one OS1-32 512x10
  // (100 ms frames), each frame's datagrams spread over its period as an engine sends them.
  auto o = short_bench({"os1-32:512x10"}, 1.5);
  o.rate = 1;
  o.ceiling_seconds = 0;
  const auto r = run_one_sensor(o);
  const auto& s = r.sensors[0];
  INFO("input " << s.input.mean_ms << ", gate wait " << s.gate_wait.mean_ms << ", physics "
                << s.physics.mean_ms << ", queued " << s.queued.mean_ms << ", sending "
                << s.sending.mean_ms << ", age " << s.age.mean_ms << " ms");
  constexpr double kPeriodMs = 100;
  // The age is the two stages after the input: complete -> last packet queued -> it left.
  CHECK(s.age.mean_ms == Approx(s.queued.mean_ms + s.sending.mean_ms).margin(0.01));
  // The engine spreads a frame over its period.
  CHECK(s.input.mean_ms > 0.5 * kPeriodMs);
  CHECK(s.input.mean_ms < 1.2 * kPeriodMs);
  CHECK(s.physics.mean_ms > 0);
  // One sensor: nothing else's physics to wait behind, beyond the gate's hand-over.
  CHECK(s.gate_wait.mean_ms < 0.2 * kPeriodMs);
  // Real-time pacing sends a frame's packets over its period, the pacing margin after it is
  // ready: the last packet leaves at least a period after it was queued.
  CHECK(s.sending.mean_ms > 0.9 * kPeriodMs);
  CHECK(s.sending.mean_ms < 3 * kPeriodMs);
  CHECK(s.age.p99_ms >= s.age.mean_ms);
  // The daemon's CPU by its threads' work: every kind did some, and together they are the
  // process's CPU (both from /proc: the process's in 10 ms ticks, a few percent of this short
  // run; the threads' sum leaves out none but threads that ended).
  const auto& c = r.cpu_per_beam;
  INFO("CPU per beam: input " << c.input_ns << ", physics " << c.physics_ns << ", encoding "
                              << c.encoding_ns << ", sending " << c.sending_ns << ", other "
                              << c.other_ns << " ns; the process " << r.daemon_cpu_ns_per_ray);
  CHECK(c.input_ns > 0);
  CHECK(c.physics_ns > 0);
  CHECK(c.encoding_ns > 0);
  CHECK(c.sending_ns > 0);
  CHECK(c.serial_ns() == Approx(c.input_ns + c.encoding_ns + c.sending_ns));
  CHECK(c.locating_ns == 0);  // framed input
  CHECK(c.input_ns + c.physics_ns + c.encoding_ns + c.sending_ns + c.other_ns ==
        Approx(r.daemon_cpu_ns_per_ray).epsilon(0.25));
  std::ostringstream report;
  clients::print_report(report, o, r);
  CHECK_THAT(report.str(), Catch::Contains("frame path"));
  CHECK_THAT(report.str(), Catch::Contains("serial (a sensor's input, encoding and sending"));
}

TEST_CASE(
    "lidaremu-bench --cores: the daemon runs on the cores it is given; the table and the plot "
    "follow",
    "[e2e][bench]") {
  auto o = short_bench({"vlp16"}, 0.5);
  o.warmup_seconds = 0.2;
  o.ceiling_seconds = 0;
  // The search starts at rate 1, the highest tried: the daemon on the bench's first CPU. (A
  // sanitizer build may not hold one VLP-16 on one core: its search then goes on down.)
  const auto points = clients::measure_scaling(o, {1}, 1.0, 1.0, 0.5, nullptr);
  REQUIRE(points.size() == 1);
  CHECK(points[0].cores == 1);
  REQUIRE_FALSE(points[0].result.steps.empty());
  const auto& report = points[0].result.steps[0].report;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  REQUIRE(::sched_getaffinity(0, sizeof mine, &mine) == 0);
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &mine)) ++first_cpu;
  CHECK(report.daemon_cpus_allowed == std::to_string(first_cpu));
  CHECK(report.daemon_exit_code == 0);
  // The bench's own CPUs are its own again after the run.
  cpu_set_t after;
  CPU_ZERO(&after);
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&mine, &after));
  std::ostringstream table;
  clients::print_scaling(table, points);
  INFO(table.str());
  if (points[0].result.rate > 0) CHECK_THAT(table.str(), Catch::Contains("100.00 %"));
  const std::string svg = clients::scaling_svg(points, "test");
  CHECK(svg.rfind("<svg", 0) == 0);
  std::size_t lines = 0;  // the measured one and the ideal one
  for (auto at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++lines;
  }
  CHECK(lines == 2);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  // More cores than the bench may use: refused, naming the count.
  CHECK_THROWS_WITH(clients::measure_scaling(o, {CPU_COUNT(&mine) + 1}, 1.0, 1.0, 0.5, nullptr),
                    Catch::Contains("--cores " + std::to_string(CPU_COUNT(&mine) + 1)));
}

TEST_CASE("The all-returning scene: every ray of every beam hits the 20 m sphere, facing back",
          "[bench]") {
  for (const char* model : {"vlp16", "hdl64e", "os1-128"}) {
    const auto pattern = clients::scan_for(model, 0, "");
    std::vector<float> rows;
    clients::DemoScene::enclosing_sphere(20.0).render(core::BeamGeometry(pattern), rows, nullptr,
                                                      5);
    REQUIRE(rows.size() ==
            std::size_t(pattern.columns_per_frame) * pattern.model->channels * 5 * 7);
    for (std::size_t i = 0; i < rows.size(); i += 7) {
      const Eigen::Vector3d point(rows[i], rows[i + 1], rows[i + 2]);
      const Eigen::Vector3d normal(rows[i + 3], rows[i + 4], rows[i + 5]);
      REQUIRE(rows[i + 6] == clients::material::kConcrete);
      REQUIRE(point.norm() == Approx(20.0).margin(1e-4));
      // The inside of the sphere: the normal points back at the centre.
      REQUIRE(normal.dot(-point.normalized()) == Approx(1.0).margin(1e-5));
    }
  }
  // The demo scene itself is unchanged by it: the road is still there.
  std::vector<float> rows;
  clients::DemoScene().render(core::BeamGeometry(clients::scan_for("vlp16", 0, "")), rows);
  std::size_t asphalt = 0;
  for (std::size_t i = 6; i < rows.size(); i += 7)
    asphalt += rows[i] == clients::material::kAsphalt;
  CHECK(asphalt > 1000);
}

TEST_CASE("The wake-up probe wakes each millisecond and measures how late", "[bench]") {
  // Both on one CPU, so that a real-time thread spinning there holds the probe off it.
  cpu_set_t one{};
  CPU_SET(0, &one);
  cpu_set_t before{};
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
  clients::WakeupProbe probe;
  std::this_thread::sleep_for(150ms);
  // A thread above the probe's real-time priority keeps the CPU for 30 ms: the probe's next
  // wake-up comes that late, once (the deadlines missed meanwhile are one late wake-up).
  bool hogged = false;
  std::thread([&] {
    sched_param above{};
    above.sched_priority = 10;
    if (::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &above) != 0) return;
    hogged = true;
    const auto until = std::chrono::steady_clock::now() + 30ms;
    while (std::chrono::steady_clock::now() < until) {
    }
  }).join();
  std::this_thread::sleep_for(150ms);
  const auto summary = probe.stop();
  REQUIRE(::sched_setaffinity(0, sizeof before, &before) == 0);
  INFO("wake-ups " << summary.wakeups << ", p99 " << summary.p99_us << " us, max " << summary.max_us
                   << " us");
  // One wake-up a millisecond at most, some of the 330 ms's lost to sanitizers' slowness.
  CHECK(summary.wakeups >= 100);
  CHECK(summary.wakeups <= 331);
  CHECK(summary.p99_us <= summary.max_us);
  CHECK(summary.realtime == hogged);  // both asked for the real-time class; root gets it
  if (hogged) {
    CHECK(summary.max_us >= 20'000);
    CHECK(summary.wakeups <= 331 - 20);
  }
  // Stopped twice: the same summary.
  CHECK(probe.stop().wakeups == summary.wakeups);
}

TEST_CASE("A bench run lost something when any frame, batch or datagram went missing", "[bench]") {
  clients::BenchReport clean;
  clients::BenchSensorReport s;
  s.frames_sent = s.frames_out = 10;
  clean.sensors.push_back(s);
  CHECK_FALSE(clients::lost_anything(clean));
  auto lossy = clean;
  lossy.sensors[0].frames_out = 9;
  CHECK(clients::lost_anything(lossy));
  lossy = clean;
  lossy.sensors[0].daemon_frames_dropped = 1;
  CHECK(clients::lost_anything(lossy));
  lossy = clean;
  lossy.sensors[0].daemon_batches_rejected = 1;
  CHECK(clients::lost_anything(lossy));
  lossy = clean;
  lossy.input_datagrams_lost = 1;
  CHECK(clients::lost_anything(lossy));
  lossy = clean;
  lossy.daemon_input_kernel_drops = 1;
  CHECK(clients::lost_anything(lossy));
  // Offered load: a VLP-16 fires its 16 lasers every 55.296 us (FORMATS.md), 289,352 beams/s.
  clients::BenchOptions o;
  o.sensors = {clients::BenchSensor::parse("vlp16"), clients::BenchSensor::parse("vlp16")};
  CHECK(clients::offered_beams_per_s(o, 1.5) == Approx(2 * 16 / 55.296e-6 * 1.5));
}

TEST_CASE("The zero-loss search runs the real daemon at growing rates and brackets the result",
          "[e2e][bench]") {
  auto o = short_bench({"vlp16"}, 0.6);
  o.warmup_seconds = 0.2;
  o.scene = "all-returning";
  std::ostringstream progress;
  const auto result = clients::find_zero_loss(o, 1.0, 2.0, 0.5, &progress);
  INFO(progress.str());
  REQUIRE(result.steps.size() >= 2);
  CHECK(result.steps[0].rate == 1.0);
  if (!test::kSanitized) {
    // One VLP-16 at its own rate is well within two cores: the first step is clean, and the
    // search grew from there (1x, then 1.5x; 2.25x is past the highest rate asked).
    CHECK(result.steps[0].lossless);
    CHECK(result.steps[1].rate == Approx(1.5));
    CHECK(result.rate >= 1.0);
    // Every step is sent as fast as taken, the one at 1x too: its frames leave as soon as they
    // are done (about 100 ms after their last datagram: a VLP-16 frame's last packet carries the
    // next frame's first columns), not a pacing margin and the frame's span later (200 ms) under
    // the admission's bound, which the other steps do not meet.
    CHECK(result.steps[0].report.latency.p99_ms < 150);
  }
  CHECK(result.beams_per_s == Approx(clients::offered_beams_per_s(o, result.rate)));
  for (const auto& step : result.steps) {
    CHECK(step.lossless == !clients::lost_anything(step.report));
    CHECK(step.report.sensors.at(0).frames_sent > 0);
    if (step.rate > result.rate) CHECK_FALSE(step.lossless);
  }
  CHECK(progress.str().find("clean") != std::string::npos);
}
