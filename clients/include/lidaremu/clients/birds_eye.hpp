#pragma once
// Bird's-eye pictures of decoded clouds: the sensor at the centre, x up the image, coloured by
// reflectivity with the live page's colour scale, written as PNG (libpng).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/cloud.hpp"

namespace lidaremu::clients {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // row by row, 3 bytes a pixel
};

struct BirdsEyeOptions {
  double half_extent_m = 40;  // metres from the sensor to the image's edge
  int pixels = 800;           // the square image's side
};

// Reflectivity 0..255 to colour: dark blue through cyan, green and yellow to red.
std::array<std::uint8_t, 3> reflectivity_colour(std::uint16_t reflectivity);
Image render_birds_eye(std::span<const core::CloudPoint> points, const BirdsEyeOptions& options);
// Images side by side, separated by a 4-pixel gap; all must have the same height.
Image side_by_side(std::span<const Image> images);
// Throw std::runtime_error naming the file and the reason.
void write_png(const std::string& path, const Image& image);
Image read_png(const std::string& path);

}  // namespace lidaremu::clients
