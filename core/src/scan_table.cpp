#include "lidaremu/core/scan_table.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <sstream>

#include "lidaremu/core/config_text.hpp"

namespace lidaremu::core {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The three numbers of a line, or false.
bool parse_row(std::string_view line, std::array<double, 3>& values) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::size_t comma = line.find(',');
    const bool last = k + 1 == values.size();
    if (last != (comma == std::string_view::npos)) return false;
    const std::string_view field = trimmed(last ? line : line.substr(0, comma));
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), values[k]);
    if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(values[k])) {
      return false;
    }
    if (!last) line.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

ScanTableResult parse_scan_table_csv(std::string_view text, int channels, std::string_view name) {
  const auto fail = [&](std::size_t line, const std::string& why) {
    return ScanTableResult{nullptr, std::string(name) + (line > 0 ? " line " : "") +
                                        (line > 0 ? std::to_string(line) : "") + ": " + why};
  };
  if (channels <= 0) return fail(0, "no lasers to assign the directions to");
  auto table = std::make_shared<ScanTable>();
  table->channels = channels;
  table->source = std::string(name);
  constexpr double kRad = std::numbers::pi / 180.0;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.empty()) continue;
    std::array<double, 3> v{};
    if (!parse_row(line, v)) {
      if (line_number == 1) continue;  // the header
      return fail(line_number, "expected three numbers: time, azimuth (deg), zenith (deg)");
    }
    const double azimuth = v[1] * kRad, zenith = v[2] * kRad;
    if (v[2] < 0 || v[2] > 180) return fail(line_number, "zenith outside 0..180 degrees");
    table->directions.emplace_back(static_cast<float>(std::sin(zenith) * std::cos(azimuth)),
                                   static_cast<float>(std::sin(zenith) * std::sin(azimuth)),
                                   static_cast<float>(std::cos(zenith)));
  }
  if (table->directions.empty()) return fail(0, "no points");
  if (table->directions.size() % static_cast<std::size_t>(channels) != 0) {
    return fail(0, std::to_string(table->directions.size()) + " points are not whole firings of " +
                       std::to_string(channels) + " lasers");
  }
  return {std::move(table), {}};
}

ScanTableResult load_scan_table_csv(const std::filesystem::path& file, int channels) {
  const ConfigText text = read_config_file(file, kMaxScanTableBytes);
  if (text.error) return {nullptr, *text.error};
  return parse_scan_table_csv(text.text, channels, file.string());
}

std::string golden_angle_test_pattern_csv(std::size_t firings, int lasers) {
  std::ostringstream csv;
  csv << "Time/s,Azimuth/deg,Zenith/deg\n";
  for (std::size_t f = 0; f < firings; ++f) {
    for (int k = 0; k < lasers; ++k) {
      const double azimuth = std::fmod(static_cast<double>(f) * 137.508, 360.0);
      const double wander = static_cast<double>(f) * 0.00618 + static_cast<double>(k) / lasers;
      const double elevation = -7.0 + 59.0 * (wander - std::floor(wander));
      csv << f * static_cast<std::size_t>(lasers) + static_cast<std::size_t>(k) << ',' << azimuth
          << ',' << 90.0 - elevation << '\n';
    }
  }
  return csv.str();
}

ScanTableResult scan_table_named(std::string_view spec, int channels) {
  if (spec == kTestPatternName) {
    // Made once per lasers count (a few hundred milliseconds of text): every start-up, reload
    // and client shares it.
    static std::mutex made_mutex;
    static std::map<int, ScanTableResult> made;
    const std::scoped_lock lock(made_mutex);
    auto [at, fresh] = made.try_emplace(channels);
    if (fresh) {
      at->second =
          parse_scan_table_csv(golden_angle_test_pattern_csv(kTestPatternFirings, channels),
                               channels, "the built-in test pattern");
    }
    return at->second;
  }
  if (spec.empty()) {
    return {nullptr, "no scan table: a CSV file (livox_laser_simulation's form) or \"" +
                         std::string(kTestPatternName) + "\""};
  }
  return load_scan_table_csv(std::filesystem::path(spec), channels);
}

}  // namespace lidaremu::core
