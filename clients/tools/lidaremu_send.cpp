// lidaremu-send: send rows from a binary file of float32 rows (7 or 8 per row, column-major in
// the sensor's scan order) to lidaremud as framed batches; or replay what lidaremud --record
// captured, datagram for datagram, at the recorded pace or as fast as possible.
#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/pcap.hpp"

namespace {

// Sends every datagram of a recording to where it arrived (127.0.0.1 and its port), or to
// `hits` when given, keeping the recorded gaps divided by `speed` (0: no waiting).
int replay(const std::string& file, const std::string& hits, double speed) {
  using namespace lidaremu;
  core::PcapReader reader(file);
  std::map<std::uint16_t, std::unique_ptr<clients::UdpSender>> senders;
  std::optional<double> first_time;
  const auto start = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  while (auto d = reader.next()) {
    if (!first_time) first_time = d->capture_time_s;
    if (speed > 0) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>((d->capture_time_s - *first_time) / speed)));
    }
    auto& sender = senders[hits.empty() ? d->destination_port : 0];
    if (!sender) {
      sender = std::make_unique<clients::UdpSender>(
          hits.empty() ? "udp://127.0.0.1:" + std::to_string(d->destination_port) : hits);
    }
    sender->send(d->payload);
    ++sent;
  }
  std::cout << "lidaremu-send: replayed " << sent << " datagrams from " << file << std::endl;
  return 0;
}

}  // namespace

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace lidaremu;
  CLI::App app{"lidaremu-send: send float32 hit rows from a file to lidaremud"};
  std::string file, model = "vlp16", mode, scan_pattern, hits = "udp://127.0.0.1:9870",
                    format = "framed";
  std::string replay_file;
  int rpm = 0, floats = 7, sensor_id = 0, repeat = 1;
  double speed = 1.0;
  app.add_option("file", file, "binary file of little-endian float32 rows");
  app.add_option("--replay", replay_file,
                 "replay a lidaremud --record capture instead (to the recorded ports on "
                 "127.0.0.1, or to --hits if given; --speed 1 keeps the recorded pace, 0 none)");
  app.add_option("--floats", floats, "floats per row: 7 or 8")->capture_default_str();
  app.add_option("--model", model, core::sensor_model_names())->capture_default_str();
  app.add_option("--rpm", rpm, "Velodyne rotation rate (default 600)");
  app.add_option("--mode", mode, "Ouster lidar mode (default 1024x10)");
  app.add_option("--scan-pattern", scan_pattern,
                 "Livox: the scan table (a CSV file, or test-pattern), the daemon's");
  app.add_option("--hits", hits, "the daemon's hit port")->capture_default_str();
  app.add_option("--format", format, "framed|raw")->capture_default_str();
  app.add_option("--speed", speed, "1: the sensor's rate, 0: as fast as possible")
      ->capture_default_str();
  app.add_option("--sensor-id", sensor_id, "sensor id in the batches")->capture_default_str();
  app.add_option("--repeat", repeat, "send the file this many times")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!replay_file.empty()) {
    try {
      return replay(replay_file, app.count("--hits") ? hits : "", speed);
    } catch (const std::exception& e) {
      std::cerr << "lidaremu-send: " << e.what() << '\n';
      return 1;
    }
  }
  if (file.empty()) {
    std::cerr << "lidaremu-send: give a row file, or --replay FILE\n";
    return 2;
  }
  if (floats != 7 && floats != 8) {
    std::cerr << "lidaremu-send: --floats must be 7 or 8\n";
    return 2;
  }
  try {
    const auto pattern = clients::scan_for(model, rpm, mode, scan_pattern);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t row_bytes = sizeof(float) * floats;
    if (bytes.size() % row_bytes != 0) {
      throw std::runtime_error(file + ": " + std::to_string(bytes.size()) +
                               " bytes is not a whole number of " + std::to_string(floats) +
                               "-float rows");
    }
    std::vector<float> rows(bytes.size() / sizeof(float));
    std::memcpy(rows.data(), bytes.data(), bytes.size());
    clients::UdpSender sender(hits);
    clients::StreamOptions options{static_cast<std::uint16_t>(sensor_id), speed, format == "raw",
                                   floats};
    clients::FrameStreamer streamer(sender, pattern, options);
    const std::size_t frame_floats =
        std::size_t(pattern.columns_per_frame) * pattern.model->channels * floats;
    std::size_t frames = 0;
    for (int r = 0; r < repeat; ++r) {
      for (std::size_t at = 0; at < rows.size(); at += frame_floats, ++frames) {
        const std::size_t n = std::min(frame_floats, rows.size() - at);
        streamer.send_frame(std::span<const float>(rows).subspan(
            at, n - n % (std::size_t(pattern.model->channels) * floats)));
      }
    }
    std::cout << "lidaremu-send: " << rows.size() / floats << " rows, " << frames << " frames, "
              << streamer.datagrams_sent() << " datagrams to " << hits << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "lidaremu-send: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
