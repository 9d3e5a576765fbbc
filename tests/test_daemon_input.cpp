// What an engine (or anyone else) sends the real daemon: hostile datagrams, floods, strangers,
// columns out of order, frame numbers far ahead or restarted, input the kernel drops.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {
using test::check_velodyne_round_trip;
using test::hits_url;
using test::scene_rows;
using test::steady_rate;
using test::valid_rows;
}  // namespace

namespace {
// A VLP-16 with ideal physics, sending as soon as packets are complete, to `data`; a frame the
// engine leaves unfinished ends after `idle_ms` without batches.
test::DaemonProcess ideal_vlp16(const test::UdpReceiver& data, const std::string& idle_ms) {
  return test::DaemonProcess({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--physics", "ideal", "--pace", "afap",
                              "--idle-timeout-ms", idle_ms, "--api-port", "0", "--http", "off"});
}
}  // namespace

TEST_CASE("Hostile datagrams are counted and never disturb the good input", "[e2e][hostile]") {
  test::UdpReceiver data, telemetry;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--telemetry", telemetry.url(), "--physics", "ideal",
                              "--pace", "afap"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  clients::BatchHeader h{.column_count = 2};
  const auto good_batch =
      clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7));
  // Truncated, wrong identifier, failing verification.
  sender.send(std::span(good_batch).first(5));
  auto wrong_id = good_batch;
  wrong_id[4] = 'Z';
  sender.send(wrong_id);
  auto corrupt = good_batch;
  corrupt[0] = 0xFF, corrupt[1] = 0xFF, corrupt[2] = 0xFF;
  sender.send(corrupt);
  // Row count disagreeing with the header, unknown sensor, columns past the frame.
  h.column_count = 3;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  h.column_count = 2;
  h.sensor_id = 9;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  h.sensor_id = 0;
  h.first_column = 5000;
  sender.send(clients::build_hit_batch(h, std::span(rows).first(std::size_t{2} * 16 * 7)));
  // Random bytes and a Control message with NaN weather.
  std::vector<std::uint8_t> noise(1000);
  for (std::size_t i = 0; i < noise.size(); ++i)
    noise[i] = static_cast<std::uint8_t>(i * 7919 % 251);
  sender.send(noise);
  sender.send(clients::build_control({.fog_visibility_m = std::nanf("")}));
  // Then a whole good frame with poisoned rows in it: NaN, infinity, unknown material.
  const std::size_t valid = valid_rows(rows);
  std::size_t poisoned_valid = 0;
  for (std::size_t beam : {100u, 2000u, 3000u, 7000u}) poisoned_valid += rows[beam * 7 + 6] != 0;
  rows[100 * 7 + 0] = std::nanf("");
  rows[2000 * 7 + 2] = INFINITY;
  rows[3000 * 7 + 6] = 77;
  rows[7000 * 7 + 6] = 5000;
  clients::FrameStreamer streamer(sender, pattern, {.speed = 5.0});
  streamer.send_frame(rows);
  const auto packets = data.receive(75, 3s, 20s);
  CHECK(packets.size() == 75);
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"";
  auto rejected = [&](const char* reason) {
    return daemon.counter("lidaremu_batches_rejected_total" + s + ",reason=\"" + reason + "\"}");
  };
  CHECK(rejected("too_short") == 1);
  CHECK(rejected("unknown_identifier") == 2);  // the wrong id and the noise
  CHECK(rejected("verify_failed") == 1);
  CHECK(rejected("row_count_mismatch") == 1);
  CHECK(rejected("unknown_sensor") == 1);
  CHECK(rejected("columns_out_of_range") == 1);
  CHECK(rejected("bad_layout") == 1);  // the NaN weather
  CHECK(daemon.counter("lidaremu_rows_non_finite_total" + s + "}") == 2);
  CHECK(daemon.counter("lidaremu_rows_unknown_material_total" + s + "}") == 2);
  CHECK(daemon.counter("lidaremu_rows_stored_total" + s + "}") == valid - poisoned_valid);
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s + "}") == 1);
  // The daemon said why, in its log (stderr is inherited; the counters above are the proof).
  const auto tail = data.receive(1, 500ms, 2s);
  auto all = packets;
  all.insert(all.end(), tail.begin(), tail.end());
  CHECK(check_velodyne_round_trip(all, scene_rows(pattern)) == valid - poisoned_valid);
}

TEST_CASE("A sender allow-list refuses and counts everyone else", "[e2e][hostile]") {
  test::UdpReceiver data;
  // Only 127.0.0.9 may send; the test sends from 127.0.0.1.
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--allow", "127.0.0.9", "--api-port", "0", "--http",
                              "off"});
  const auto pattern = clients::scan_for("vlp16", 600, "");
  clients::UdpSender sender(hits_url(daemon));
  clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
  streamer.send_frame(scene_rows(pattern));
  CHECK(data.receive(10, 500ms, 2s).empty());
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_datagrams_refused_sender_total{sensor=\"vlp16-0\"}") > 0);
  CHECK(daemon.counter("lidaremu_rows_stored_total{sensor=\"vlp16-0\"}") == 0);
  CHECK(daemon.output().find("not on the allow-list") != std::string::npos);  // a log says why
}

namespace {
// One datagram from `source_ip` (a loopback address of its own) to the daemon's hit port.
void send_from(const std::string& source_ip, const std::string& hits,
               const std::vector<std::uint8_t>& datagram) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source_ip.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(test::port_of(hits));
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) == 0);
  CHECK(::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                 sizeof to) == static_cast<ssize_t>(datagram.size()));
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  ::close(fd);
}
}  // namespace

TEST_CASE("The allow-list guards Control too: a stranger can neither pause nor rain",
          "[e2e][hostile]") {
  // The review's worry: a Control message (pause, weather) from any host on the network stopping
  // a sensor whose hits only the engine may send. Control arrives on the hit port and passes the
  // same allow-list before it is read.
  test::UdpReceiver data;
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              data.url(), "--allow", "127.0.0.9", "--api-port", "0", "--http",
                              "127.0.0.1:0", "--foxglove", "off"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  const std::string hits = hits_url(daemon);
  clients::ControlMessage pause;
  pause.pause = true;
  pause.rain_mm_per_h = 50;
  const auto weather = [&] {
    const auto sensors =
        nlohmann::json::parse(test::http_request("GET", base + "/api/v1/sensors").body);
    return sensors.at(0);
  };
  send_from("127.0.0.7", hits, clients::build_control(pause));  // a stranger
  std::this_thread::sleep_for(300ms);
  CHECK(weather()["paused"] == false);
  CHECK(weather()["weather"]["rain_mm_per_h"] == 0);
  send_from("127.0.0.9", hits, clients::build_control(pause));  // the engine
  for (const auto until = std::chrono::steady_clock::now() + 3s;
       weather()["paused"] == false && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
  }
  CHECK(weather()["paused"] == true);
  CHECK(weather()["weather"]["rain_mm_per_h"] == 50);
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_datagrams_refused_sender_total{sensor=\"vlp16-0\"}") == 1);
  CHECK(daemon.counter("lidaremu_control_messages_total{sensor=\"vlp16-0\"}") == 1);
}

TEST_CASE("A flood on one sensor's input does not delay another's packets",
          "[e2e][hostile][pacing]") {
  test::UdpReceiver calm_out, flooded_out;
  const std::string config = "/tmp/lidaremu-e2e-isolation.toml";
  {
    std::ofstream f(config);
    f << "[daemon]\nhttp = \"off\"\n"
      << "[[sensor]]\nname = \"calm\"\nmodel = \"vlp16\"\nsensor_id = 0\napi_port = 0\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << calm_out.url() << "\"\n"
      << "[[sensor]]\nname = \"flooded\"\nmodel = \"vlp16\"\nsensor_id = 1\napi_port = 0\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << flooded_out.url() << "\"\n";
  }
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor flooded", 5s));
  // Both inputs' ports, from the start-up lines.
  auto port_of = [&](const std::string& name) {
    const auto& out = daemon.output();
    const auto line = out.find("sensor " + name + " (");
    const auto at = out.find("hits udp://127.0.0.1:", line) + 21;
    return "udp://127.0.0.1:" + out.substr(at, out.find(' ', at) - at);
  };
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  std::atomic<bool> done{false};
  // The flooded input gets whole frames as fast as the loopback takes them (far beyond ten
  // times the sensor's rate) mixed with garbage.
  std::thread flood([&] {
    clients::UdpSender sender(port_of("flooded"));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 0});
    const std::vector<std::uint8_t> junk(1400, 0x5A);
    while (!done) {
      streamer.send_frame(rows);
      for (int i = 0; i < 200; ++i) sender.send(junk);
    }
  });
  std::thread engine([&] {
    clients::UdpSender sender(port_of("calm"));
    clients::FrameStreamer streamer(sender, pattern, {.speed = 1.0});
    for (int f = 0; f < 25; ++f) streamer.send_frame(rows);
  });
  const auto packets = calm_out.receive(1500, 1s, 10s);
  engine.join();
  done = true;
  flood.join();
  REQUIRE(daemon.stop() == 0);
  REQUIRE(packets.size() > 1200);
  const double rate = steady_rate(packets, 100, 50);
  INFO("calm sensor: " << rate << " packets/s while its neighbour was flooded");
  CHECK(rate == Approx(1e6 / 1327.104).epsilon(0.01));
  if (!test::kSanitized)
    CHECK(daemon.counter("lidaremu_frames_dropped_total{sensor=\"calm\"}") == 0);
  CHECK(daemon.counter("lidaremu_batches_rejected_total{sensor=\"flooded\",reason="
                       "\"unknown_identifier\"}") > 1000);
  std::remove(config.c_str());
}

TEST_CASE("Columns out of order or twice, absurd rows, a frame that never completes",
          "[e2e][hostile]") {
  test::UdpReceiver data;
  test::DaemonProcess daemon = ideal_vlp16(data, "150");
  const auto pattern = clients::scan_for("vlp16", 600, "");
  auto rows = scene_rows(pattern);
  // Absurd values: a hit 1e30 m away, a normal of length 0.
  rows[500 * 7 + 0] = 1e30f;
  rows[500 * 7 + 6] = 8;
  rows[900 * 7 + 3] = rows[900 * 7 + 4] = rows[900 * 7 + 5] = 0;
  rows[900 * 7 + 6] = 8;
  clients::UdpSender sender(hits_url(daemon));
  auto batches = clients::build_frame_batches(
      {.frame = 0, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame)}, 16, rows,
      0, 60000);
  // Frame 0: its batches last to first, the middle one twice.
  std::reverse(batches.begin(), batches.end());
  batches.insert(batches.begin() + 3, batches[batches.size() / 2]);
  for (const auto& b : batches) sender.send(b);
  // Frame 1: only its first half, then silence.
  auto half = clients::build_frame_batches(
      {.frame = 1, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame / 2)}, 16,
      std::span(rows).first(rows.size() / 2), 0, 60000);
  for (const auto& b : half) sender.send(b);
  const auto packets = data.receive(200, 1s, 10s);
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 1);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total" + s) == 1);  // the idle timeout ends it
  CHECK(daemon.counter("lidaremu_frames_processed_total" + s) == 2);
  CHECK(daemon.counter("lidaremu_rows_out_of_range_total" + s) == 4);  // in both frames
  // Both frames' packets went out: the whole first frame, the half second one (and the rest
  // of the second frame's firing sequences, empty, as the sensor's stream continues).
  CHECK(packets.size() >= 75 + 37);
}

TEST_CASE("A column sent again after every column before it was in is ignored and counted",
          "[e2e][hostile]") {
  // Columns go into the physics as soon as every column before them is in (the frame streams),
  // so a batch repeating such columns cannot be stored any more: it is refused, counted, and
  // what leaves is the first copy. Here the repeat says every hit is twice as far.
  test::UdpReceiver data;
  test::DaemonProcess daemon = ideal_vlp16(data, "150");
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  auto far_rows = rows;
  for (std::size_t i = 0; i < far_rows.size(); i += 7) {
    for (int k = 0; k < 3; ++k) far_rows[i + k] *= 2;
  }
  const clients::BatchHeader frame{
      .frame = 0, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame)};
  auto batches = clients::build_frame_batches(frame, 16, rows, 0, 60000);
  const auto repeat = clients::build_frame_batches(frame, 16, far_rows, 0, 60000).front();
  REQUIRE(batches.size() > 4);
  batches.insert(batches.begin() + 3, repeat);
  clients::UdpSender sender(hits_url(daemon));
  for (const auto& b : batches) sender.send(b);
  auto packets = data.receive(75, 1s, 10s);
  REQUIRE(daemon.stop() == 0);
  const auto tail = data.receive(1, 500ms, 2s);  // the part-filled packet the stop completes
  packets.insert(packets.end(), tail.begin(), tail.end());
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_batches_repeated_total" + s) == 1);
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 1);
  // Every point where the first copy put it, and none missing.
  CHECK(check_velodyne_round_trip(packets, rows) == valid_rows(rows));
}

TEST_CASE("A partial frame leaves after the idle timeout while Control messages keep coming",
          "[e2e][hostile]") {
  // An engine that stops sending batches may go on sending its pose every tick: the idle timeout
  // counts from the last batch, whatever else arrives.
  test::UdpReceiver data;
  test::DaemonProcess daemon = ideal_vlp16(data, "150");
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  for (const auto& b : clients::build_frame_batches(
           {.frame = 1, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame / 2)},
           16, std::span(rows).first(rows.size() / 2), 0, 60000)) {
    REQUIRE(sender.send(b));
  }
  std::atomic<bool> done{false};
  std::thread ticks([&] {
    clients::ControlMessage pose;
    pose.has_pose = true;
    while (!done) {
      sender.send(clients::build_control(pose));
      std::this_thread::sleep_for(test::kSanitized ? 2ms : 200us);  // sanitized: 10x slower
    }
  });
  const auto packets = data.receive(200, test::kSanitized ? 3s : 500ms, 10s);
  done = true;
  ticks.join();
  REQUIRE(daemon.stop() == 0);
  // The half frame left while the ticks went on, not only when the daemon stopped.
  CHECK(packets.size() >= 37);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total{sensor=\"vlp16-0\"}") == 1);
  CHECK(daemon.counter("lidaremu_control_messages_total{sensor=\"vlp16-0\"}") > 5);
}

TEST_CASE("Frame numbers: a stray far ahead and an engine restart do not silence the sensor",
          "[e2e][hostile]") {
  // The audit: one batch numbered 1,000 ahead made every later frame stale, and so did an
  // engine that restarted its frame counter. Now both start a new sequence (counted).
  test::UdpReceiver data;
  test::DaemonProcess daemon = ideal_vlp16(data, "100");
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  clients::UdpSender sender(hits_url(daemon));
  const auto frame = [&](std::uint32_t number) {
    return clients::build_frame_batches(
        {.frame = number, .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame)},
        16, rows, 0, 60000);
  };
  // Each frame's packets are awaited before the next is sent, so none is dropped for load (a
  // sanitized daemon can be quiet for a second before a frame's first packet).
  std::size_t packets = 0;
  const auto quiet = test::kSanitized ? 3000ms : 300ms;
  const auto send_frame = [&](std::uint32_t f) {
    for (const auto& b : frame(f)) sender.send(b);
    packets += data.receive(75, quiet, 5s).size();
  };
  send_frame(100);
  send_frame(101);
  sender.send(frame(2000).front());                                      // a stray batch, far ahead
  for (const std::uint32_t f : {102u, 103u, 0u, 1u, 2u}) send_frame(f);  // on, then a restart
  packets += data.receive(100, 500ms, 5s).size();
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 7);
  CHECK(daemon.counter("lidaremu_frames_incomplete_total" + s) == 1);   // the stray's lone batch
  CHECK(daemon.counter("lidaremu_frames_resequenced_total" + s) == 3);  // 2000, 102, 0
  CHECK(daemon.counter("lidaremu_batches_stale_total" + s) == 0);
  CHECK(daemon.counter("lidaremu_frames_dropped_total" + s) == 0);
  CHECK(packets >= std::size_t{7} * 75);
}

TEST_CASE("Input the kernel drops while the daemon cannot read is counted, datagram for datagram",
          "[e2e][hostile]") {
  test::DaemonProcess daemon({"--model", "vlp16", "--hits", "udp://127.0.0.1:0", "--out",
                              "udp://127.0.0.1:9", "--api-port", "0", "--http", "off", "--pace",
                              "afap"});
  // A stopped process reads nothing: 40 MB of 60 KB datagrams overflow its 16 MiB buffer.
  REQUIRE(daemon.freeze());
  clients::UdpSender sender(hits_url(daemon));
  const std::vector<std::uint8_t> junk(60000, 0x5A);
  constexpr std::uint64_t kSent = 700;
  for (std::uint64_t i = 0; i < kSent; ++i) REQUIRE(sender.send(junk));
  daemon.send_signal(SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(daemon.stop() == 0);
  const std::string s = "{sensor=\"vlp16-0\"}";
  const auto in = daemon.counter("lidaremu_datagrams_in_total" + s);
  const auto dropped = daemon.counter("lidaremu_input_kernel_drops_total" + s);
  CHECK(in > 0);  // how many fit depends on the buffer the kernel granted (rmem_max)
  CHECK(dropped > 100);
  CHECK(in + dropped == kSent);
  CHECK(daemon.counter(
            "lidaremu_batches_rejected_total{sensor=\"vlp16-0\",reason=\"unknown_identifier\"}") ==
        in);
}

TEST_CASE("Each column keeps its first copy, whichever thread converts its batch",
          "[e2e][hostile][ingest]") {
  // The input thread keeps each batch's bytes for the processing thread to convert, in a room
  // sized for the sensor's own rays; an engine casting three rays a beam at a one-ray sensor
  // sends batches three times that size, which no longer fit after half the frame: those the
  // input thread converts itself. Columns 28-41 arrive before 14-27 (so none of them is taken
  // yet), then a batch of columns 28-55 whose first half says every hit is twice as far: those
  // columns keep their first copy, the second half is new and goes in; the batch of 42-55 that
  // follows brings nothing new and is refused.
  test::UdpReceiver data;
  test::DaemonProcess daemon = ideal_vlp16(data, "150");
  const auto pattern = clients::scan_for("vlp16", 600, "");
  const auto rows = scene_rows(pattern);
  constexpr std::size_t kRow = 7, kColumn = 16 * kRow;
  std::vector<float> three_rays;
  for (std::size_t beam = 0; beam < rows.size() / kRow; ++beam) {
    const auto row = std::span(rows).subspan(beam * kRow, kRow);
    three_rays.insert(three_rays.end(), row.begin(), row.end());
    for (int ray = 1; ray < 3; ++ray) {  // the sensor keeps ray 0 of each beam
      three_rays.insert(three_rays.end(),
                        {row[0] * 3, row[1] * 3, row[2] * 3, row[3], row[4], row[5], row[6]});
    }
  }
  const clients::BatchHeader frame{
      .frame = 0,
      .column_count = static_cast<std::uint32_t>(pattern.columns_per_frame),
      .rays_per_beam = 3};
  // 14 columns a batch (20,000 bytes): batch k holds columns 14k .. 14k + 13.
  auto batches = clients::build_frame_batches(frame, 16, three_rays, 0, 20000);
  REQUIRE(batches.size() > 8);
  std::vector<float> overlap(rows.begin() + 28 * kColumn, rows.begin() + 56 * kColumn);
  for (std::size_t i = 0; i < 14 * kColumn; i += kRow) {
    for (std::size_t k = 0; k < 3; ++k) overlap[i + k] *= 2;
  }
  const auto repeat =
      clients::build_hit_batch({.frame = 0, .first_column = 28, .column_count = 28}, overlap);
  std::vector<std::vector<std::uint8_t>> sent{batches[0], batches[2], repeat, batches[1],
                                              batches[3]};
  sent.insert(sent.end(), batches.begin() + 4, batches.end());
  clients::UdpSender sender(hits_url(daemon));
  for (const auto& b : sent) sender.send(b);
  auto packets = data.receive(75, 1s, 10s);
  REQUIRE(daemon.stop() == 0);
  const auto tail = data.receive(1, 500ms, 2s);
  packets.insert(packets.end(), tail.begin(), tail.end());
  const std::string s = "{sensor=\"vlp16-0\"}";
  CHECK(daemon.counter("lidaremu_frames_complete_total" + s) == 1);
  CHECK(daemon.counter("lidaremu_batches_repeated_total" + s) == 1);
  CHECK(daemon.counter("lidaremu_rows_stored_total" + s) == valid_rows(rows));
  // Every point where its column's first copy (ray 0) put it, and none missing.
  CHECK(check_velodyne_round_trip(packets, rows) == valid_rows(rows));
}

namespace {
// How often a thread of the daemon has woken (test::wake_ups).
std::uint64_t wake_ups(int pid, int tid) {
  const auto woken =
      test::wake_ups("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid));
  REQUIRE(woken.has_value());
  return *woken;
}
}  // namespace

TEST_CASE("The engine's datagrams wake the sensor's input thread only, never the io thread",
          "[e2e][hostile]") {
  // The io thread (the process's main thread: HTTP, side channels, reloads) once woke for every
  // datagram: the hit socket sat on its context's epoll, edge-triggered, with no handler.
  const test::UdpReceiver data;
  auto daemon = ideal_vlp16(data, "100");
  clients::UdpSender sender(hits_url(daemon));
  const std::vector<std::uint8_t> junk(200, 0x5A);  // counted as rejected: any datagram does
  std::this_thread::sleep_for(200ms);               // the start-up's own work done
  const std::uint64_t before = wake_ups(daemon.pid(), daemon.pid());
  constexpr int kSent = 1000;
  for (int i = 0; i < kSent; ++i) {
    REQUIRE(sender.send(junk));
    std::this_thread::sleep_for(200us);  // one at a time: each would be its own wake-up
  }
  std::this_thread::sleep_for(200ms);
  const std::uint64_t woken = wake_ups(daemon.pid(), daemon.pid()) - before;
  REQUIRE(daemon.stop() == 0);
  CHECK(daemon.counter("lidaremu_datagrams_in_total{sensor=\"vlp16-0\"}") == kSent);
  INFO("the io thread woke " << woken << " times while " << kSent << " datagrams arrived");
  CHECK(woken < kSent / 20);
}
