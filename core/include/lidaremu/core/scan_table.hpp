#pragma once
// A scan that repeats no grid (Livox's non-repetitive patterns) as data: for each firing, the
// direction of each of the lasers that fire together, over a cycle of firings that successive
// frames walk through in turn.
#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lidaremu::core {

struct ScanTable {
  int channels = 0;
  // [firing * channels + channel]: unit vectors in the sensor frame (x forward, y left, z up).
  std::vector<Eigen::Vector3f> directions;
  std::string source;  // the file it came from, for messages

  [[nodiscard]] std::size_t firings() const {
    return channels > 0 ? directions.size() / static_cast<std::size_t>(channels) : 0;
  }
  // Firing `firing` of the endless scan: the table's cycle repeats (an empty table points
  // nowhere).
  [[nodiscard]] Eigen::Vector3f direction(std::uint64_t firing, int channel) const {
    const std::size_t cycle = firings();
    if (cycle == 0) return Eigen::Vector3f::Zero();
    return directions[(firing % cycle) * static_cast<std::size_t>(channels) +
                      static_cast<std::size_t>(channel)];
  }
  bool operator==(const ScanTable&) const = default;
};

// A file larger than this is refused before it is read (256 MiB: some minutes of a 200,000
// points/s scan as text).
inline constexpr std::size_t kMaxScanTableBytes = std::size_t{256} << 20;

struct ScanTableResult {
  std::shared_ptr<const ScanTable> table;
  std::string error;  // what is wrong and where ("mid360.csv line 12: ..."), when table is null
};

// livox_laser_simulation's scan-mode CSV (the files Gazebo users of Livox units have): an optional
// header line ("Time/s,Azimuth/deg,Zenith/deg"), then one point per line, time (ignored: the
// model's firing clock times the points), azimuth counter-clockwise from x and zenith from z up,
// degrees; the `channels` lasers of a firing on consecutive lines.
ScanTableResult parse_scan_table_csv(std::string_view text, int channels, std::string_view name);
ScanTableResult load_scan_table_csv(const std::filesystem::path& file, int channels);

// The spelling that picks the built-in test pattern instead of a file (a file of that name is
// given as "./test-pattern").
inline constexpr std::string_view kTestPatternName = "test-pattern";
// A test pattern in the same CSV form, NOT any unit's: the firings sweep the azimuth by a golden
// angle (137.508 degrees) each while the lasers' elevations wander over -7 to +52 degrees (the
// Mid-360's field of view), so every frame looks elsewhere. For demos, tests and benchmarks where
// the unit's own table is not at hand; the start-up line says when it is in use.
std::string golden_angle_test_pattern_csv(std::size_t firings, int lasers);
// One second of the Mid-360's firings (50,000): ten frames before the cycle repeats.
inline constexpr std::size_t kTestPatternFirings = 50'000;
// `spec`: kTestPatternName (the test pattern, kTestPatternFirings long) or a CSV file's path.
ScanTableResult scan_table_named(std::string_view spec, int channels);

}  // namespace lidaremu::core
