#include "lidaremu/core/ouster.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core::ouster {
namespace {

std::uint64_t to_ns(double seconds) {
  return seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e9));
}

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

std::array<std::uint8_t, kImuPacketSize> imu_packet(std::uint64_t time_ns,
                                                    const std::array<float, 3>& accel_g,
                                                    const std::array<float, 3>& gyro_deg_s) {
  std::array<std::uint8_t, kImuPacketSize> p{};
  store_le<std::uint64_t>(p, 0, time_ns);
  store_le<std::uint64_t>(p, 8, time_ns);
  store_le<std::uint64_t>(p, 16, time_ns);
  for (int i = 0; i < 3; ++i) {
    store_le<float>(p, 24 + 4 * i, accel_g[i]);
    store_le<float>(p, 36 + 4 * i, gyro_deg_s[i]);
  }
  return p;
}

OusterEncoder::OusterEncoder(const ScanPattern& pattern, const SensorIdentity& identity,
                             const OusterOutput& output)
    : pattern_(pattern),
      identity_(identity),
      output_(output),
      layout_(profile_layout(output.profile)),
      packet_(
          layout_.packet_size(pattern.model->channels, pattern.model->ouster.columns_per_packet)) {}

double OusterEncoder::data_packet_period_s() const {
  return pattern_.column_period_s * pattern_.model->ouster.columns_per_packet;
}

bool OusterEncoder::column_in_window(std::uint32_t column) const {
  const std::uint64_t angle_mdeg =
      std::uint64_t{column} * 360000 / static_cast<std::uint64_t>(pattern_.columns_per_frame);
  const std::uint32_t start = output_.azimuth_window_start_mdeg;
  const std::uint32_t end = output_.azimuth_window_end_mdeg;
  return start <= end ? angle_mdeg >= start && angle_mdeg <= end
                      : angle_mdeg >= start || angle_mdeg <= end;
}

std::uint64_t OusterEncoder::timestamp_ns(double sensor_time_s) const {
  switch (output_.timestamp_mode) {
    case OusterTimestampMode::kPtp:
      return to_ns(sensor_time_s + kTaiMinusUtcS);
    case OusterTimestampMode::kInternalOsc:
      break;
  }
  return to_ns(sensor_time_s - output_.power_on_time_s);
}

void OusterEncoder::encode_columns(const FrameReturns& returns, double frame_start_s,
                                   std::uint32_t end, PacketSink& sink) {
  const SensorModel& model = *pattern_.model;
  const auto per_packet = static_cast<std::uint32_t>(model.ouster.columns_per_packet);
  const bool legacy = output_.profile == OusterProfile::kLegacy;
  const std::size_t column_bytes =
      layout_.column_header + model.channels * layout_.pixel + layout_.column_footer;
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  // The IMU reports at 100 Hz what the engine's poses imply (at rest: one g upwards). Its
  // packets go out in time order with the lidar packets, as on the real sensor's wire.
  const int imu_packets = static_cast<int>(std::lround(pattern_.frame_period_s * kImuRateHz));
  auto send_imu_until = [&](double t) {
    for (; imu_sent_ < imu_packets && frame_start_s + imu_sent_ / kImuRateHz <= t; ++imu_sent_) {
      const double imu_time = frame_start_s + imu_sent_ / kImuRateHz;
      const auto imu = imu_packet(timestamp_ns(imu_time), motion_.accel_g, motion_.gyro_deg_s);
      sink.on_packet(PacketChannel::kTelemetry, imu, imu_time);
    }
  };
  for (; next_packet_column_ < columns && next_packet_column_ + per_packet <= end;
       next_packet_column_ += per_packet) {
    const std::uint32_t first = next_packet_column_;
    bool any_in_window = false;
    for (std::uint32_t k = 0; k < per_packet; ++k) any_in_window |= column_in_window(first + k);
    // A packet leaves when its last column has been measured; none outside the window.
    const double sent_at = frame_start_s + (first + per_packet - 1) * pattern_.column_period_s;
    send_imu_until(sent_at);
    if (!any_in_window) continue;
    std::fill(packet_.begin(), packet_.end(), std::uint8_t{0});
    if (!legacy) {
      store_le<std::uint16_t>(packet_, 0, kPacketTypeLidar);
      store_le<std::uint16_t>(packet_, 2, frame_id_);
      store_le<std::uint32_t>(packet_, 4, identity_.init_id & 0xFFFFFFu);  // byte 7 follows
      store_le<std::uint64_t>(packet_, 7, identity_.serial_number & 0xFFFFFFFFFFull);
      packet_[12] = 0;  // alert flags: none
    }
    for (std::uint32_t k = 0; k < per_packet; ++k) {
      const std::uint32_t c = first + k;
      write_column(returns, c, layout_.packet_header + k * column_bytes,
                   timestamp_ns(frame_start_s + c * pattern_.column_period_s));
    }
    if (!legacy) {
      const std::size_t crc_at = packet_.size() - 8;
      store_le<std::uint64_t>(packet_, crc_at, crc64_xz(std::span(packet_).first(crc_at)));
    }
    sink.on_packet(PacketChannel::kData, packet_, sent_at);
  }
  if (end < columns) return;
  send_imu_until(frame_start_s + pattern_.frame_period_s);
  ++frame_id_;
  next_packet_column_ = 0;
  imu_sent_ = 0;
}

void OusterEncoder::write_column(const FrameReturns& returns, std::uint32_t column, std::size_t at,
                                 std::uint64_t timestamp_ns) {
  const SensorModel& model = *pattern_.model;
  const bool legacy = output_.profile == OusterProfile::kLegacy;
  const bool valid = column_in_window(column);
  const std::size_t column_bytes =
      layout_.column_header + model.channels * layout_.pixel + layout_.column_footer;
  store_le<std::uint64_t>(packet_, at, timestamp_ns);
  store_le<std::uint16_t>(packet_, at + 8, static_cast<std::uint16_t>(column));
  if (legacy) {
    store_le<std::uint16_t>(packet_, at + 10, frame_id_);
    store_le<std::uint32_t>(
        packet_, at + 12,
        static_cast<std::uint32_t>(std::uint64_t{column} * kEncoderTicksPerTurn /
                                   pattern_.columns_per_frame));
    store_le<std::uint32_t>(packet_, at + column_bytes - kLegacyColumnFooter,
                            valid ? kColumnValid : 0u);
  } else {
    store_le<std::uint16_t>(packet_, at + 10, valid ? 1 : 0);
  }
  if (!valid) return;
  for (int row = 0; row < model.channels; ++row) {
    write_pixel(returns, returns.shape.beam(column, static_cast<std::uint16_t>(row)),
                at + layout_.column_header + row * layout_.pixel);
  }
}

void OusterEncoder::write_pixel(const FrameReturns& returns, std::size_t beam, std::size_t px) {
  // A range the field cannot hold is sent as no return, never wrapped.
  const auto field = [](float range_m, std::uint32_t unit_mm, std::uint32_t max) {
    const auto units = static_cast<std::uint32_t>(std::lround(range_m * 1000.0 / unit_mm));
    return units > max ? 0u : units;
  };
  const std::size_t first = returns.slot(beam, 0);
  switch (output_.profile) {
    case OusterProfile::kLegacy: {
      const std::uint32_t range = field(returns.range_m[first], 1, 0xFFFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint16_t>(packet_, px + 8, returns.near_ir[beam]);  // with or without echo
      if (range == 0) return;
      store_le<std::uint16_t>(packet_, px + 4, returns.reflectivity[first]);
      store_le<std::uint16_t>(packet_, px + 6, returns.signal_photons[first]);
      return;
    }
    case OusterProfile::kRng19: {
      const std::uint32_t range = field(returns.range_m[first], 1, 0x7FFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint16_t>(packet_, px + 8, returns.near_ir[beam]);
      if (range == 0) return;
      packet_[px + 4] = returns.reflectivity[first];
      store_le<std::uint16_t>(packet_, px + 6, returns.signal_photons[first]);
      return;
    }
    case OusterProfile::kRng19Dual: {
      const std::size_t second = returns.slot(beam, 1);
      const std::uint32_t range = field(returns.range_m[first], 1, 0x7FFFFu);
      const std::uint32_t range2 = field(returns.range_m[second], 1, 0x7FFFFu);
      store_le<std::uint32_t>(packet_, px, range);
      store_le<std::uint32_t>(packet_, px + 4, range2);
      store_le<std::uint16_t>(packet_, px + 12, returns.near_ir[beam]);
      if (range) {
        packet_[px + 3] = returns.reflectivity[first];
        store_le<std::uint16_t>(packet_, px + 8, returns.signal_photons[first]);
      }
      if (range2) {
        packet_[px + 7] = returns.reflectivity[second];
        store_le<std::uint16_t>(packet_, px + 10, returns.signal_photons[second]);
      }
      return;
    }
    case OusterProfile::kRng15: {
      const std::uint32_t range = field(returns.range_m[first], 8, 0x7FFFu);
      store_le<std::uint16_t>(packet_, px, static_cast<std::uint16_t>(range));
      packet_[px + 3] = static_cast<std::uint8_t>(std::min(returns.near_ir[beam] / 16, 255));
      if (range) packet_[px + 2] = returns.reflectivity[first];
      return;
    }
  }
}

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
  static constexpr std::array<const char*, 7> kSections{
      "sensor_info",   "beam_intrinsics",   "imu_intrinsics",    "lidar_intrinsics",
      "config_params", "lidar_data_format", "calibration_status"};
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

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kWrongSize:
      return "wrong packet size";
    case DecodeError::kBadMeasurementId:
      return "measurement id out of range";
    case DecodeError::kBadStatus:
      return "column status not valid";
  }
  return "?";
}

ProfileLayout profile_layout(OusterProfile profile) {
  switch (profile) {
    case OusterProfile::kLegacy:
      break;
    case OusterProfile::kRng19:
      return ProfileLayout{32, 12, 12, 0, 32};
    case OusterProfile::kRng19Dual:
      return ProfileLayout{32, 12, 16, 0, 32};
    case OusterProfile::kRng15:
      return ProfileLayout{32, 12, 4, 0, 32};
  }
  return ProfileLayout{0, 16, 12, 4, 0};
}

namespace {
constexpr std::array<std::pair<OusterProfile, const char*>, 4> kProfileNames{
    {{OusterProfile::kLegacy, "LEGACY"},
     {OusterProfile::kRng19, "RNG19_RFL8_SIG16_NIR16"},
     {OusterProfile::kRng19Dual, "RNG19_RFL8_SIG16_NIR16_DUAL"},
     {OusterProfile::kRng15, "RNG15_RFL8_NIR8"}}};
constexpr std::array<std::pair<OusterTimestampMode, const char*>, 2> kTimestampModeNames{
    {{OusterTimestampMode::kInternalOsc, "TIME_FROM_INTERNAL_OSC"},
     {OusterTimestampMode::kPtp, "TIME_FROM_PTP_1588"}}};
}  // namespace

const char* profile_name(OusterProfile profile) {
  for (const auto& [p, name] : kProfileNames) {
    if (p == profile) return name;
  }
  return "LEGACY";
}

std::optional<OusterProfile> profile_from_name(std::string_view udp_profile_lidar) {
  for (const auto& [p, name] : kProfileNames) {
    if (udp_profile_lidar == name) return p;
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

namespace {
// CRC-64/XZ, one table lookup per byte.
constexpr std::array<std::uint64_t, 256> make_crc64_table() {
  constexpr std::uint64_t kReflectedPolynomial = 0xC96C5795D7870F42ull;
  std::array<std::uint64_t, 256> table{};
  for (std::uint64_t i = 0; i < 256; ++i) {
    std::uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? kReflectedPolynomial : 0);
    table[i] = crc;
  }
  return table;
}
constexpr auto kCrc64Table = make_crc64_table();
}  // namespace

std::uint64_t crc64_xz(std::span<const std::uint8_t> bytes) {
  std::uint64_t crc = ~0ull;
  for (const std::uint8_t byte : bytes) crc = kCrc64Table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

bool footer_crc_valid(std::span<const std::uint8_t> packet) {
  if (packet.size() < 8) return false;
  return crc64_xz(packet.first(packet.size() - 8)) ==
         load_le<std::uint64_t>(packet, packet.size() - 8);
}

SpecDecoder::SpecDecoder(const Metadata& metadata) : metadata_(metadata) {
  const auto profile = profile_from_name(metadata.udp_profile_lidar);
  if (!profile) {
    throw std::runtime_error("metadata: unknown udp_profile_lidar '" + metadata.udp_profile_lidar +
                             "'");
  }
  profile_ = *profile;
  layout_ = profile_layout(profile_);
}

std::size_t SpecDecoder::packet_size() const {
  return layout_.packet_size(metadata_.channels(), metadata_.columns_per_packet);
}

DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Column>& columns,
                                PacketHeader* header) const {
  if (packet.size() != packet_size()) return DecodeError::kWrongSize;
  if (profile_ != OusterProfile::kLegacy) return decode_profile(packet, columns, header);
  const int h = metadata_.channels();
  const std::size_t column_bytes = kLegacyColumnHeader + h * kLegacyPixel + kLegacyColumnFooter;
  for (int k = 0; k < metadata_.columns_per_packet; ++k) {
    const std::size_t at = k * column_bytes;
    Column c;
    c.timestamp_ns = load_le<std::uint64_t>(packet, at);
    c.measurement_id = load_le<std::uint16_t>(packet, at + 8);
    c.frame_id = load_le<std::uint16_t>(packet, at + 10);
    c.encoder_count = load_le<std::uint32_t>(packet, at + 12);
    c.status = load_le<std::uint32_t>(packet, at + column_bytes - kLegacyColumnFooter);
    if (c.measurement_id >= metadata_.columns_per_frame) return DecodeError::kBadMeasurementId;
    c.pixels.resize(h);
    for (int row = 0; row < h; ++row) {
      const std::size_t px = at + kLegacyColumnHeader + row * kLegacyPixel;
      c.pixels[row] = {
          load_le<std::uint32_t>(packet, px) & 0xFFFFFu, load_le<std::uint16_t>(packet, px + 4),
          load_le<std::uint16_t>(packet, px + 6), load_le<std::uint16_t>(packet, px + 8)};
    }
    columns.push_back(std::move(c));
  }
  return DecodeError::kNone;
}

// The non-legacy profiles (FORMATS.md): a 32-byte packet header, 12-byte column headers, the
// profile's pixels, a 32-byte footer.
DecodeError SpecDecoder::decode_profile(std::span<const std::uint8_t> packet,
                                        std::vector<Column>& columns, PacketHeader* header) const {
  const std::uint16_t frame_id = load_le<std::uint16_t>(packet, 2);
  if (header) {
    header->packet_type = load_le<std::uint16_t>(packet, 0);
    header->frame_id = frame_id;
    header->init_id = load_le<std::uint32_t>(packet, 4) & 0xFFFFFFu;
    header->serial_number = load_le<std::uint64_t>(packet, 7) & 0xFFFFFFFFFFull;
  }
  const int h = metadata_.channels();
  const std::size_t column_bytes = layout_.column_header + h * layout_.pixel;
  for (int k = 0; k < metadata_.columns_per_packet; ++k) {
    const std::size_t at = layout_.packet_header + k * column_bytes;
    Column c;
    c.timestamp_ns = load_le<std::uint64_t>(packet, at);
    c.measurement_id = load_le<std::uint16_t>(packet, at + 8);
    c.status = load_le<std::uint16_t>(packet, at + 10);
    c.frame_id = frame_id;
    if (c.measurement_id >= metadata_.columns_per_frame) return DecodeError::kBadMeasurementId;
    c.pixels.resize(h);
    for (int row = 0; row < h; ++row) {
      const std::size_t px = at + layout_.column_header + row * layout_.pixel;
      Pixel& p = c.pixels[row];
      if (profile_ == OusterProfile::kRng15) {
        p.range_mm = (load_le<std::uint16_t>(packet, px) & 0x7FFFu) * 8u;
        p.reflectivity = packet[px + 2];
        p.near_ir = static_cast<std::uint16_t>(packet[px + 3] * 16);
      } else if (profile_ == OusterProfile::kRng19Dual) {
        p.range_mm = load_le<std::uint32_t>(packet, px) & 0x7FFFFu;
        p.reflectivity = packet[px + 3];
        p.range2_mm = load_le<std::uint32_t>(packet, px + 4) & 0x7FFFFu;
        p.reflectivity2 = packet[px + 7];
        p.signal = load_le<std::uint16_t>(packet, px + 8);
        p.signal2 = load_le<std::uint16_t>(packet, px + 10);
        p.near_ir = load_le<std::uint16_t>(packet, px + 12);
      } else {
        p.range_mm = load_le<std::uint32_t>(packet, px) & 0x7FFFFu;
        p.reflectivity = packet[px + 4];
        p.signal = load_le<std::uint16_t>(packet, px + 6);
        p.near_ir = load_le<std::uint16_t>(packet, px + 8);
      }
    }
    columns.push_back(std::move(c));
  }
  return DecodeError::kNone;
}

std::array<double, 3> SpecDecoder::to_xyz(const Column& column, int row) const {
  return to_xyz(column, row, column.pixels[row].range_mm);
}

std::array<double, 3> SpecDecoder::to_xyz(const Column& column, int row,
                                          std::uint32_t range_mm) const {
  constexpr double kDeg = std::numbers::pi / 180.0;
  const double r = range_mm;
  const double encoder =
      2.0 * std::numbers::pi * (1.0 - double(column.measurement_id) / metadata_.columns_per_frame);
  const double azimuth = -metadata_.beam_azimuth_deg[row] * kDeg;
  const double altitude = metadata_.beam_altitude_deg[row] * kDeg;
  const double n = metadata_.lidar_origin_to_beam_origin_mm;
  const double dx = std::cos(encoder + azimuth) * std::cos(altitude);
  const double dy = std::sin(encoder + azimuth) * std::cos(altitude);
  const double dz = std::sin(altitude);
  const double lx = r * dx + n * std::cos(encoder) - n * dx;
  const double ly = r * dy + n * std::sin(encoder) - n * dy;
  const double lz = r * dz - n * dz;
  const auto& t = metadata_.lidar_to_sensor;
  return {0.001 * (t[0] * lx + t[1] * ly + t[2] * lz + t[3]),
          0.001 * (t[4] * lx + t[5] * ly + t[6] * lz + t[7]),
          0.001 * (t[8] * lx + t[9] * ly + t[10] * lz + t[11])};
}

}  // namespace lidaremu::core::ouster
