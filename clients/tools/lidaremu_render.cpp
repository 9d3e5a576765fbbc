// lidaremu-render: bird's-eye PNG of decoded frames (PCD files, as lidaremud --export writes
// them), coloured by reflectivity; several inputs come out side by side (dry | rain, say).
#include <CLI/CLI.hpp>
#include <iostream>

#include "lidaremu/clients/birds_eye.hpp"
#include "lidaremu/core/cloud_export.hpp"

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace lidaremu;
  CLI::App app{"lidaremu-render: bird's-eye PNG of decoded frames, coloured by reflectivity"};
  std::vector<std::string> inputs;
  std::string output;
  clients::BirdsEyeOptions options;
  app.add_option("pcd", inputs, "PCD files (lidaremud --export); several go side by side")
      ->required();
  app.add_option("-o,--output", output, "the PNG to write")->required();
  app.add_option("--extent", options.half_extent_m, "metres from the sensor to the edge")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--pixels", options.pixels, "side of each square picture")
      ->capture_default_str()
      ->check(CLI::Range(16, 8192));
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<clients::Image> pictures;
    for (const auto& input : inputs) {
      const core::Cloud cloud = core::read_pcd(input);
      pictures.push_back(clients::render_birds_eye(cloud.points, options));
      std::cout << "lidaremu-render: " << input << ": " << cloud.points.size() << " points"
                << std::endl;
    }
    clients::write_png(output, clients::side_by_side(pictures));
    std::cout << "lidaremu-render: wrote " << output << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "lidaremu-render: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
