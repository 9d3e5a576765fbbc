// Real-time pacing, on the real lidaremud process on loopback: the sensors' packet rates, a
// sensor clock that jumps ahead, and a daemon that loses the CPU for a moment (it catches up,
// losing nothing). What each packet's time should be is the schedule's rule
// (daemon/runtime/pacing_schedule.hpp; its arithmetic is tested in test_scheduling).

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/ouster.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::hits_url;
using test::scene_rows;
using test::steady_rate;

// Streams 25 frames of the demo scene at the sensor's own rate through a realtime daemon and
// returns the packets that came out, with their arrival times.
std::vector<test::UdpReceiver::Datagram> stream_realtime(const char* model, std::size_t expected) {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", model, "--hits", "udp://127.0.0.1:0", "--out", data.url(),
                              "--telemetry", telemetry.url(), "--pace", "realtime"});
  const auto pattern = clients::scan_for(model, 0, "");
  const auto rows = scene_rows(pattern);
  std::thread engine([&] {
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < 25; ++f) streamer.send_frame(rows);
  });
  auto packets = data.receive(expected, 1s, 10s);
  engine.join();
  daemon.stop();
  return packets;
}

// Sends OS1-64 1024x10 frames of the demo scene whole, frame i + 1 at i's time in `sent_ms`
// (from now) with i's simulation time in `sim_ms` (empty: none, the wall clock's case).
void send_whole_frames(const test::DaemonProcess& daemon, const std::vector<int>& sent_ms,
                       const std::vector<std::uint64_t>& sim_ms = {}) {
  const auto pattern = clients::scan_for("os1-64", 0, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  const auto column_ns = static_cast<std::uint64_t>(pattern.column_period_s * 1e9);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t f = 0; f < sent_ms.size(); ++f) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(sent_ms[f]));
    clients::BatchHeader h;
    h.frame = static_cast<std::uint32_t>(f + 1);
    h.column_count = static_cast<std::uint32_t>(pattern.columns_per_frame);
    if (!sim_ms.empty()) h.sim_time_ns = sim_ms[f] * 1'000'000;
    for (const auto& d : clients::build_frame_batches(h, 64, rows, column_ns)) {
      REQUIRE(sender.send(d));
    }
  }
}

// Each packet's columns, decoded with the metadata the daemon wrote (removed after).
std::vector<std::vector<core::ouster::Column>> decode_columns(
    const std::vector<test::UdpReceiver::Datagram>& packets, const std::string& metadata) {
  core::ouster::SpecDecoder decoder(core::ouster::parse_metadata(test::slurp(metadata)));
  std::remove(metadata.c_str());
  std::vector<std::vector<core::ouster::Column>> decoded(packets.size());
  for (std::size_t i = 0; i < packets.size(); ++i) {
    REQUIRE(decoder.decode(packets[i].bytes, decoded[i]) == core::ouster::DecodeError::kNone);
  }
  return decoded;
}

}  // namespace

TEST_CASE("Realtime pacing holds the real packet rates", "[e2e][pacing]") {
  SECTION("VLP-16: 754 packets per second") {
    const auto packets = stream_realtime("vlp16", 1500);
    REQUIRE(packets.size() > 1200);
    // Skip the start-up: measure over the steady stream.
    const double rate = steady_rate(packets, 100, 50);
    INFO("measured " << rate << " packets/s");
    CHECK(rate == Approx(1e6 / 1327.104).epsilon(0.01));
  }
  SECTION("OS1-64 1024x10: 64 packets per frame, 10 frames per second") {
    const auto packets = stream_realtime("os1-64", std::size_t{25} * 64);
    REQUIRE(packets.size() > 1200);
    std::map<std::uint16_t, int> per_frame;
    for (const auto& p : packets)
      ++per_frame[static_cast<std::uint16_t>(p.bytes[10] | (p.bytes[11] << 8))];
    for (const auto& [frame, count] : per_frame) CHECK(count == 64);
    const double rate = steady_rate(packets, 64, 64);
    INFO("measured " << rate << " packets/s");
    CHECK(rate == Approx(640).epsilon(0.01));
  }
}

TEST_CASE("Real-time pacing does not hold a frame back when the sensor clock jumps ahead",
          "[e2e][pacing]") {
  // A packet due up to 2 s ahead used to be waited for: a frame whose start had jumped (a
  // simulation clock skipping, or a wall-clock frame start catching up after processing lagged)
  // left that much late and aged every frame behind it (1-2 s under overload).
  test::UdpReceiver data, telemetry;
  const std::string metadata =
      "/tmp/lidaremu-e2e-clock-jump-" + std::to_string(::getpid()) + ".json";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--clock", "sim", "--pace", "realtime", "--api-port", "0",
                              "--metadata-out", metadata});
  // Frames at real time, 100 ms of simulation apart, except the last: 1.5 s further on.
  send_whole_frames(daemon, {0, 100, 200, 300}, {1000, 1100, 1200, 2700});
  // Arrival times count from here: the last frame's last datagram has just left.
  const auto packets = data.receive(std::size_t{4} * 64, 2s, 6s);
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() == std::size_t{4} * 64);
  // The jumped frame's packets (their timestamps say 2.7 s on) left within the pacing margin
  // (one frame period) and the frame's own span of its last datagram, not 1.5 s later.
  const auto columns = decode_columns(packets, metadata);
  std::size_t jumped = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (columns[i].front().timestamp_ns < 2'700'000'000) continue;
    ++jumped;
    CHECK(packets[i].arrival_s < 0.5);
  }
  CHECK(jumped == 64);
  CHECK(daemon.counter("lidaremu_pacing_resyncs_total{sensor=\"os1-64-0\"}") >= 1);
}

TEST_CASE("On the wall clock, frames the engine did not send leave their periods in the stamps",
          "[e2e][pacing]") {
  // A real sensor spins on whether or not a frame is read. The engine sends three frames at
  // real time, pauses two periods, and sends three more: the first frame after the pause starts
  // three periods after the one before it. Chained one period per frame sent, as it was, the
  // stamps fell a period behind the wall clock for every frame not sent (the admission's drops
  // under overload too), and the pacing then saw every later frame late.
  test::UdpReceiver data, telemetry;
  const std::string metadata = "/tmp/lidaremu-e2e-wall-gap-" + std::to_string(::getpid()) + ".json";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--clock", "wall", "--pace", "realtime", "--api-port", "0",
                              "--metadata-out", metadata});
  // Three frames at real time, a pause of two periods, three more.
  send_whole_frames(daemon, {0, 100, 200, 500, 600, 700});
  // Every frame's packets: the last one's too, once its successor's absence ends the stream.
  const auto packets = data.receive(std::size_t{6} * 64, 1s, 6s);
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() == std::size_t{6} * 64);
  std::map<std::uint16_t, std::uint64_t> frame_start_ns;  // by frame id: its first column
  for (const auto& columns : decode_columns(packets, metadata)) {
    for (const auto& c : columns) {
      if (c.measurement_id == 0) frame_start_ns[c.frame_id] = c.timestamp_ns;
    }
  }
  REQUIRE(frame_start_ns.size() == 6);
  std::vector<double> gaps_ms;
  for (auto it = std::next(frame_start_ns.begin()); it != frame_start_ns.end(); ++it) {
    gaps_ms.push_back(static_cast<double>(it->second - std::prev(it)->second) * 1e-6);
  }
  const std::vector<double> expected{100, 100, 300, 100, 100};
  for (std::size_t i = 0; i < gaps_ms.size(); ++i) {
    INFO("frame " << i + 2 << " starts " << gaps_ms[i] << " ms after the one before");
    CHECK(gaps_ms[i] == Approx(expected[i]).margin(0.5));
  }
}

TEST_CASE("A daemon that loses the CPU for 70 ms catches up and loses no frame", "[e2e][pacing]") {
  // SIGSTOP then SIGCONT: every thread of the daemon held off the CPU, as a loaded host does.
  // The packets due meanwhile leave late, and the ones after them at twice the pace until back
  // on the schedule. The rule before restarted the schedule a pacing margin later, which aged
  // every later frame by the stall plus the margin, past the three periods the admission allows:
  // frames were dropped after such a stall.
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--pace", "realtime"});
  const auto pattern = clients::scan_for("vlp16", 0, "");
  const auto rows = scene_rows(pattern);
  constexpr int kFrames = 30;
  std::thread engine([&] {
    clients::UdpSender sender(hits_url(daemon));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < kFrames; ++f) streamer.send_frame(rows);
  });
  std::this_thread::sleep_for(1500ms);
  daemon.send_signal(SIGSTOP);
  std::this_thread::sleep_for(70ms);
  daemon.send_signal(SIGCONT);
  engine.join();
  // Every frame's packets but the last frame's tail (the encoder holds it until the next frame).
  const std::size_t expected = kFrames * 1808 / 24;
  const auto packets = data.receive(expected, 1s, 10s);
  REQUIRE(daemon.stop() == 0);
  CHECK(packets.size() == expected);
  CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"vlp16-0\"}") == 0);
  CHECK(daemon.counter("lidaremu_pacing_catch_ups_total{sensor=\"vlp16-0\"}") >= 1);
  CHECK(daemon.counter("lidaremu_pacing_resyncs_total{sensor=\"vlp16-0\"}") == 0);
}
