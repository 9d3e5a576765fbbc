#include "lidaremu/clients/birds_eye.hpp"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace lidaremu::clients {
namespace {

constexpr std::array<std::uint8_t, 3> kBackground{16, 20, 24};
constexpr std::array<std::uint8_t, 3> kGrid{40, 50, 60};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

void set_pixel(Image& image, int x, int y, const std::array<std::uint8_t, 3>& c) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  const auto at = (static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                   static_cast<std::size_t>(x)) *
                  3;
  std::copy(c.begin(), c.end(), image.rgb.begin() + static_cast<std::ptrdiff_t>(at));
}

// libpng's errors end in a longjmp; the message is kept for the exception instead of printed.
void keep_png_error(png_structp png, png_const_charp message) {
  auto* kept = static_cast<std::string*>(png_get_error_ptr(png));
  if (kept) *kept = message;
  png_longjmp(png, 1);
}
void ignore_png_warning(png_structp /*png*/, png_const_charp /*message*/) {}

}  // namespace

std::array<std::uint8_t, 3> reflectivity_colour(std::uint16_t reflectivity) {
  // The stops of the live page (daemon/web/viewer.js), so pictures and page agree.
  struct Stop {
    double t;
    std::array<double, 3> c;
  };
  static constexpr std::array<Stop, 5> kStops{{{0.0, {0.15, 0.2, 0.6}},
                                               {0.2, {0.1, 0.6, 0.9}},
                                               {0.4, {0.2, 0.85, 0.3}},
                                               {0.6, {0.95, 0.9, 0.2}},
                                               {1.0, {1.0, 0.25, 0.2}}}};
  const double t = std::min<double>(reflectivity, 255) / 255.0;
  std::size_t i = 1;
  while (i < kStops.size() - 1 && t > kStops[i].t) ++i;
  const double f = std::clamp((t - kStops[i - 1].t) / (kStops[i].t - kStops[i - 1].t), 0.0, 1.0);
  std::array<std::uint8_t, 3> out{};
  for (std::size_t k = 0; k < 3; ++k) {
    const double v = kStops[i - 1].c[k] + (kStops[i].c[k] - kStops[i - 1].c[k]) * f;
    out[k] = static_cast<std::uint8_t>(std::lround(255.0 * v));
  }
  return out;
}

Image render_birds_eye(std::span<const core::CloudPoint> points, const BirdsEyeOptions& options) {
  Image image{options.pixels, options.pixels, {}};
  image.rgb.resize(static_cast<std::size_t>(options.pixels) *
                   static_cast<std::size_t>(options.pixels) * 3);
  for (std::size_t i = 0; i < image.rgb.size(); i += 3) {
    std::copy(kBackground.begin(), kBackground.end(), image.rgb.begin() + static_cast<long>(i));
  }
  const double scale = options.pixels / (2.0 * options.half_extent_m);  // pixels per metre
  const double centre = options.pixels / 2.0;
  // x forward is up the image, y left is left: column = centre - y, row = centre - x.
  const auto column_of = [&](double y) { return static_cast<int>(std::floor(centre - y * scale)); };
  const auto row_of = [&](double x) { return static_cast<int>(std::floor(centre - x * scale)); };
  const int lines = static_cast<int>(std::floor(options.half_extent_m / 10));  // 10 m grid
  for (int line = -lines; line <= lines; ++line) {
    const double m = 10.0 * line;
    for (int p = 0; p < options.pixels; ++p) {
      set_pixel(image, column_of(m), p, kGrid);
      set_pixel(image, p, row_of(m), kGrid);
    }
  }
  // Low points first, so that walls and objects stay visible over the road.
  std::vector<const core::CloudPoint*> order;
  order.reserve(points.size());
  for (const auto& p : points) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->z < b->z; });
  for (const auto* p : order) {
    const auto colour = reflectivity_colour(p->reflectivity);
    const int c = column_of(p->y), r = row_of(p->x);
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) set_pixel(image, c + dx, r + dy, colour);
  }
  for (int d = -3; d <= 3; ++d) {  // the sensor
    set_pixel(image, static_cast<int>(centre) + d, static_cast<int>(centre), {255, 255, 255});
    set_pixel(image, static_cast<int>(centre), static_cast<int>(centre) + d, {255, 255, 255});
  }
  return image;
}

Image side_by_side(std::span<const Image> images) {
  constexpr int kGap = 4;
  Image out;
  for (const auto& image : images) {
    if (out.height != 0 && image.height != out.height) {
      throw std::invalid_argument("side_by_side: images of different heights");
    }
    out.height = image.height;
    out.width += image.width + (out.width > 0 ? kGap : 0);
  }
  out.rgb.assign(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 3,
                 255);
  int x0 = 0;
  for (const auto& image : images) {
    for (int y = 0; y < image.height; ++y) {
      const auto from = image.rgb.begin() + static_cast<long>(y) * image.width * 3;
      std::copy(from, from + static_cast<long>(image.width) * 3,
                out.rgb.begin() + (static_cast<long>(y) * out.width + x0) * 3);
    }
    x0 += image.width + kGap;
  }
  return out;
}

void write_png(const std::string& path, const Image& image) {
  const File file(std::fopen(path.c_str(), "wb"));
  if (!file) throw std::runtime_error(path + ": cannot open for writing");
  std::string why;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, &why, keep_png_error, ignore_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::runtime_error(path + ": libpng could not start");
  }
  // libpng reports errors by longjmp; nothing here owns resources that jump would skip.
  if (setjmp(png_jmpbuf(png))) {  // NOLINT(cert-err52-cpp)
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error(path + ": libpng failed while writing: " + why);
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < image.height; ++y) {
    png_write_row(png, image.rgb.data() +
                           static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) * 3);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}

Image read_png(const std::string& path) {
  const File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw std::runtime_error(path + ": cannot open");
  std::string why;
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &why, keep_png_error, ignore_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    throw std::runtime_error(path + ": libpng could not start");
  }
  Image image;
  if (setjmp(png_jmpbuf(png))) {  // NOLINT(cert-err52-cpp)
    png_destroy_read_struct(&png, &info, nullptr);
    throw std::runtime_error(path + ": not a PNG libpng can read (" + why + ")");
  }
  png_init_io(png, file.get());
  png_read_info(png, info);
  // Whatever the file holds (palette, grey, alpha, 16 bits), read it as 8-bit RGB.
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  png_read_update_info(png, info);
  image.width = static_cast<int>(png_get_image_width(png, info));
  image.height = static_cast<int>(png_get_image_height(png, info));
  image.rgb.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) *
                   3);
  std::vector<png_bytep> rows(static_cast<std::size_t>(image.height));
  for (int y = 0; y < image.height; ++y) {
    rows[static_cast<std::size_t>(y)] =
        image.rgb.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) * 3;
  }
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return image;
}

}  // namespace lidaremu::clients
