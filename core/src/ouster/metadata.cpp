// The sensor metadata JSON a real Ouster serves (written for the emulated unit) and the reader of
// real sensors' files (flat and nested), with the profile and timestamp-mode names.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "lidaremu/core/ouster.hpp"

namespace lidaremu::core::ouster {
namespace {

std::vector<int> pixel_shift_by_row(const SensorModel& model, int columns) {
  // A row fires |azimuth| / (360 / W) columns away from the encoder angle; real metadata
  // files state exactly round(azimuth * W / 360).
  std::vector<int> shift;
  for (double az : model.azimuth_offset_deg) {
    shift.push_back(static_cast<int>(std::lround(az * columns / 360.0)));
  }
  return shift;
}

}  // namespace

std::string metadata_json(const ScanPattern& pattern, const SensorIdentity& identity,
                          const MetadataSettings& settings) {
  using nlohmann::ordered_json;
  const SensorModel& m = *pattern.model;
  const int columns = pattern.columns_per_frame;
  const std::string mode =
      std::to_string(columns) + "x" + std::to_string(pattern.frames_per_second);
  const double n = m.ouster.lidar_origin_to_beam_origin_mm;
  ordered_json j;
  const char* profile = profile_name(settings.output.profile);
  // The first and last column the azimuth window lets through.
  const OusterEncoder window(pattern, identity, settings.output);
  int first_column = -1, last_column = -1;
  for (int c = 0; c < columns; ++c) {
    if (!window.column_in_window(static_cast<std::uint32_t>(c))) continue;
    if (first_column < 0 || (c > 0 && !window.column_in_window(c - 1))) first_column = c;
    if (c + 1 == columns || !window.column_in_window(c + 1)) last_column = c;
  }
  j["sensor_info"] = {{"build_date", "2023-09-27T17:19:40Z"},
                      {"build_rev", "v3.1.0"},
                      {"image_rev", "ousteros-image-prod-bootes-v3.1.0+lidaremu"},
                      {"initialization_id", identity.init_id},
                      {"prod_line", std::string(m.ouster.prod_line)},
                      {"prod_pn", std::string(m.ouster.prod_pn)},
                      {"prod_sn", std::to_string(identity.serial_number)},
                      {"status", "RUNNING"}};
  j["beam_intrinsics"] = {
      {"beam_altitude_angles", m.elevation_deg},
      {"beam_azimuth_angles", m.azimuth_offset_deg},
      {"beam_to_lidar_transform", {1, 0, 0, n, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
      {"lidar_origin_to_beam_origin_mm", n}};
  j["imu_intrinsics"] = {{"imu_to_sensor_transform", m.ouster.imu_to_sensor}};
  j["lidar_intrinsics"] = {{"lidar_to_sensor_transform", m.ouster.lidar_to_sensor}};
  j["config_params"] = {
      {"azimuth_window",
       {settings.output.azimuth_window_start_mdeg, settings.output.azimuth_window_end_mdeg}},
      {"columns_per_packet", m.ouster.columns_per_packet},
      {"lidar_mode", mode},
      {"multipurpose_io_mode", "OFF"},
      {"nmea_baud_rate", "BAUD_9600"},
      {"nmea_ignore_valid_char", 0},
      {"nmea_in_polarity", "ACTIVE_HIGH"},
      {"nmea_leap_seconds", 0},
      {"operating_mode", "NORMAL"},
      {"phase_lock_enable", false},
      {"phase_lock_offset", 0},
      {"signal_multiplier", 1},
      {"sync_pulse_in_polarity", "ACTIVE_HIGH"},
      {"sync_pulse_out_angle", 360},
      {"sync_pulse_out_frequency", 1},
      {"sync_pulse_out_polarity", "ACTIVE_HIGH"},
      {"sync_pulse_out_pulse_width", 10},
      {"timestamp_mode", timestamp_mode_name(settings.output.timestamp_mode)},
      {"udp_dest", settings.udp_dest},
      {"udp_port_imu", settings.udp_port_imu},
      {"udp_port_lidar", settings.udp_port_lidar},
      {"udp_profile_imu", "LEGACY"},
      {"udp_profile_lidar", profile}};
  j["lidar_data_format"] = {{"column_window", {first_column, last_column}},
                            {"columns_per_frame", columns},
                            {"columns_per_packet", m.ouster.columns_per_packet},
                            {"pixel_shift_by_row", pixel_shift_by_row(m, columns)},
                            {"pixels_per_column", m.channels},
                            {"udp_profile_imu", "LEGACY"},
                            {"udp_profile_lidar", profile}};
  j["calibration_status"] = {
      {"reflectivity", {{"timestamp", "2023-03-18T18:28:26"}, {"valid", true}}}};
  return j.dump(4);
}

namespace {
Metadata parse_metadata_fields(const std::string& json_text) {
  using nlohmann::json;
  std::vector<std::string> problems;
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("metadata is not JSON: ") + e.what());
  }
  if (!doc.is_object()) throw std::runtime_error("metadata: top level must be an object");
  // The nested format's seven sections come all together or not at all (as the SDK requires):
  // a flat file with one of them, or a nested one missing one, is refused.
  static constexpr auto kSections = std::to_array<const char*>(
      {"sensor_info", "beam_intrinsics", "imu_intrinsics", "lidar_intrinsics", "config_params",
       "lidar_data_format", "calibration_status"});
  int sections = 0;
  for (const char* name : kSections) sections += doc.contains(name) ? 1 : 0;
  const bool nested = sections > 0;
  const json empty = json::object();
  for (const char* name : kSections) {
    if (nested && (!doc.contains(name) || !doc[name].is_object())) {
      problems.push_back(std::string("/") + name +
                         ": missing (the nested format needs all seven "
                         "sections)");
    }
  }
  auto section = [&](const char* name) -> const json& {
    if (!nested) return doc;
    return doc.contains(name) && doc[name].is_object() ? doc[name] : empty;
  };
  Metadata md;
  const json& beams = section("beam_intrinsics");
  // Flat files (firmware 2.x) keep the packet format in "data_format".
  const json& format = nested ? section("lidar_data_format")
                       : doc.contains("data_format") && doc["data_format"].is_object()
                           ? doc["data_format"]
                           : doc;
  const json& config = section("config_params");
  const json& info = section("sensor_info");
  const json& lidar = section("lidar_intrinsics");
  auto numbers = [&](const json& obj, const char* key, std::vector<double>& out) {
    if (!obj.contains(key) || !obj[key].is_array()) {
      problems.push_back(std::string("/") + key + ": missing or not an array");
      return;
    }
    for (const auto& v : obj[key]) {
      if (!v.is_number()) {
        problems.push_back(std::string("/") + key + ": holds a non-number");
        return;
      }
      out.push_back(v.get<double>());
    }
  };
  numbers(beams, "beam_altitude_angles", md.beam_altitude_deg);
  numbers(beams, "beam_azimuth_angles", md.beam_azimuth_deg);
  if (md.beam_altitude_deg.size() != md.beam_azimuth_deg.size()) {
    problems.push_back("/beam_azimuth_angles: length differs from beam_altitude_angles");
  }
  const auto is_zero = [](double v) { return v == 0.0; };
  if (!md.beam_altitude_deg.empty() &&
      std::all_of(md.beam_altitude_deg.begin(), md.beam_altitude_deg.end(), is_zero) &&
      std::all_of(md.beam_azimuth_deg.begin(), md.beam_azimuth_deg.end(), is_zero)) {
    problems.push_back("/beam_altitude_angles: every beam angle is zero (no calibration)");
  }
  // A data format block, when there is one (always in the nested format), must be whole
  // (udp_profile_lidar came with firmware 2.2: LEGACY without it).
  const bool has_format = nested || doc.contains("data_format");
  for (const char* key : {"columns_per_frame", "columns_per_packet", "pixels_per_column",
                          "pixel_shift_by_row", "column_window"}) {
    if (has_format && !format.contains(key)) {
      problems.push_back(std::string(nested ? "/lidar_data_format/" : "/data_format/") + key +
                         ": missing");
    }
  }
  if (has_format && format.contains("pixels_per_column") &&
      format["pixels_per_column"] != md.beam_altitude_deg.size()) {
    problems.push_back("/pixels_per_column: differs from the number of beam angles");
  }
  const std::string mode = config.value("lidar_mode", doc.value("lidar_mode", std::string()));
  if (const auto x = mode.find('x'); x != std::string::npos) {
    md.columns_per_frame = std::atoi(mode.substr(0, x).c_str());
    md.frames_per_second = std::atoi(mode.substr(x + 1).c_str());
  }
  if (md.columns_per_frame != 512 && md.columns_per_frame != 1024 && md.columns_per_frame != 2048 &&
      md.columns_per_frame != 4096) {
    problems.push_back("/config_params/lidar_mode: '" + mode +
                       "' is not <512|1024|2048|4096>x<fps>");
  }
  md.udp_profile_lidar = format.value("udp_profile_lidar", std::string("LEGACY"));
  md.columns_per_packet = format.value("columns_per_packet", 16);
  md.prod_line = info.value("prod_line", doc.value("prod_line", std::string()));
  md.prod_sn = info.value("prod_sn", std::string());
  md.initialization_id = info.value("initialization_id", 0u);
  if (format.contains("pixel_shift_by_row")) {
    for (const auto& v : format["pixel_shift_by_row"])
      md.pixel_shift_by_row.push_back(v.get<int>());
  }
  // Older files omit the beam origin; the SDK then assumes the OS-1 value.
  md.lidar_origin_to_beam_origin_mm = beams.value("lidar_origin_to_beam_origin_mm", 12.163);
  if (lidar.contains("lidar_to_sensor_transform")) {
    const auto& t = lidar["lidar_to_sensor_transform"];
    if (t.is_array() && t.size() == 16) {
      for (std::size_t i = 0; i < 16; ++i) md.lidar_to_sensor[i] = t[i].get<double>();
    } else {
      problems.push_back("/lidar_intrinsics/lidar_to_sensor_transform: needs 16 numbers");
    }
  }
  if (!problems.empty()) {
    std::string msg = "metadata has " + std::to_string(problems.size()) + " problem(s):";
    for (const auto& p : problems) msg += "\n  " + p;
    throw std::runtime_error(msg);
  }
  return md;
}
}  // namespace

Metadata parse_metadata(const std::string& json_text) {
  try {
    return parse_metadata_fields(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("metadata: a field has the wrong type: ") + e.what());
  }
}
namespace {
constexpr std::array<std::pair<OusterTimestampMode, const char*>, 2> kTimestampModeNames{
    {{OusterTimestampMode::kInternalOsc, "TIME_FROM_INTERNAL_OSC"},
     {OusterTimestampMode::kPtp, "TIME_FROM_PTP_1588"}}};
}  // namespace

const char* profile_name(OusterProfile profile) { return profile_format(profile).name; }

std::optional<OusterProfile> profile_from_name(std::string_view udp_profile_lidar) {
  for (const ProfileFormat& f : profile_formats()) {
    if (udp_profile_lidar == f.name) return f.profile;
  }
  return std::nullopt;
}

const char* timestamp_mode_name(OusterTimestampMode mode) {
  for (const auto& [m, name] : kTimestampModeNames) {
    if (m == mode) return name;
  }
  return "TIME_FROM_INTERNAL_OSC";
}

std::optional<OusterTimestampMode> timestamp_mode_from_name(std::string_view name) {
  for (const auto& [m, n] : kTimestampModeNames) {
    if (name == n) return m;
  }
  return std::nullopt;
}

}  // namespace lidaremu::core::ouster
