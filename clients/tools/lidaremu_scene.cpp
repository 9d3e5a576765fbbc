// lidaremu-scene: the built-in demo scene, ray-cast for a sensor's beams and streamed to
// lidaremud at the sensor's rate.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/streaming.hpp"

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace lidaremu;
  CLI::App app{"lidaremu-scene: stream the built-in demo scene to lidaremud"};
  std::string model = "vlp16", mode, scan_pattern, hits = "udp://127.0.0.1:9870", format = "framed";
  int rpm = 0, frames = 0, sensor_id = 0;
  double speed = 1.0, duration = 0, height = 1.8;
  app.add_option("--model", model, core::sensor_model_names())->capture_default_str();
  app.add_option("--rpm", rpm, "Velodyne rotation rate (default 600)");
  app.add_option("--mode", mode, "Ouster lidar mode (default 1024x10)");
  app.add_option("--scan-pattern", scan_pattern,
                 "Livox: the scan table (a CSV file, or test-pattern), the daemon's");
  app.add_option("--hits", hits, "the daemon's hit port")->capture_default_str();
  app.add_option("--format", format, "framed|raw7")->capture_default_str();
  app.add_option("--frames", frames, "frames to send (0: until --duration, or forever)");
  app.add_option("--duration", duration, "seconds of scan time to send (0: no limit)");
  app.add_option("--speed", speed, "1: the sensor's rate, 2: twice as fast, 0: as fast as possible")
      ->capture_default_str();
  app.add_option("--sensor-id", sensor_id, "sensor id in the batches")->capture_default_str();
  app.add_option("--sensor-height", height, "metres above the road")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (format != "framed" && format != "raw7") {
    std::cerr << "lidaremu-scene: --format must be framed or raw7\n";
    return 2;
  }
  try {
    const auto pattern = clients::scan_for(model, rpm, mode, scan_pattern);
    const core::BeamGeometry geometry(pattern);
    const clients::DemoScene scene(height);
    std::vector<float> rows;
    std::vector<std::uint32_t> object_ids;  // ground truth: the live view and exports show it
    scene.render(geometry, rows, &object_ids);
    clients::UdpSender sender(hits);
    clients::StreamOptions options;
    options.sensor_id = static_cast<std::uint16_t>(sensor_id);
    options.speed = speed;
    options.raw = format == "raw7";
    clients::FrameStreamer streamer(sender, pattern, options);
    if (duration > 0 && frames == 0)
      frames = static_cast<int>(std::lround(duration / pattern.frame_period_s));
    std::cout << "lidaremu-scene: " << model << ", " << pattern.columns_per_frame << " columns x "
              << pattern.model->channels << " channels per frame, to " << hits << std::endl;
    for (int f = 0; frames == 0 || f < frames; ++f) {
      // A table scan looks elsewhere every frame: the scene is cast again along its beams.
      if (pattern.table) {
        scene.render(geometry, rows, &object_ids, 1, 0.001, streamer.frames_sent());
      }
      streamer.send_frame(rows, options.raw ? std::span<const std::uint32_t>{} : object_ids);
    }
    std::cout << "lidaremu-scene: sent " << frames << " frames in " << streamer.datagrams_sent()
              << " datagrams (" << streamer.send_failures() << " refused by the kernel)"
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "lidaremu-scene: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
