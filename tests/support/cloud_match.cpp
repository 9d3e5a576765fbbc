#include "cloud_match.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <span>
#include <sstream>
#include <unordered_map>

#include "daemon_process.hpp"
#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::test {

using core::load_le;

std::vector<XYZ> read_pcd_xyz(const std::string& path) {
  const std::string text = slurp(path);
  const auto data_at = text.find("DATA binary\n");
  REQUIRE(data_at != std::string::npos);
  std::istringstream header(text.substr(0, data_at));
  std::vector<int> sizes;
  std::size_t points = 0;
  for (std::string line; std::getline(header, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "SIZE")
      for (int s; words >> s;) sizes.push_back(s);
    if (key == "POINTS") words >> points;
  }
  std::size_t stride = 0;
  for (int s : sizes) stride += static_cast<std::size_t>(s);
  // PCD bytes read as unsigned bytes: the one place a char buffer is viewed as binary.
  const auto body = std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
          text.data()) +
          data_at + 12,
      points * stride);
  std::vector<XYZ> out;
  for (std::size_t i = 0; i < points; ++i) {
    out.push_back({load_le<float>(body, i * stride), load_le<float>(body, i * stride + 4),
                   load_le<float>(body, i * stride + 8)});
  }
  return out;
}

std::vector<double> nearest_distances(const std::vector<XYZ>& from, const std::vector<XYZ>& to,
                                      double cell) {
  auto key = [](long x, long y, long z) {
    return (x * 73856093) ^ (y * 19349663) ^ (z * 83492791);
  };
  std::unordered_multimap<long, std::size_t> grid;
  for (std::size_t i = 0; i < to.size(); ++i) {
    grid.emplace(
        key(std::lround(to[i].x / cell), std::lround(to[i].y / cell), std::lround(to[i].z / cell)),
        i);
  }
  std::vector<double> out;
  for (const auto& p : from) {
    double best = 1e9;
    const long cx = std::lround(p.x / cell), cy = std::lround(p.y / cell),
               cz = std::lround(p.z / cell);
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dz = -1; dz <= 1; ++dz) {
          const auto [b, e] = grid.equal_range(key(cx + dx, cy + dy, cz + dz));
          for (auto it = b; it != e; ++it) {
            const auto& q = to[it->second];
            best = std::min(best, double(std::hypot(p.x - q.x, p.y - q.y, p.z - q.z)));
          }
        }
    out.push_back(best);
  }
  return out;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace lidaremu::test
