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

LegacyEncoder::LegacyEncoder(const ScanPattern& pattern, const SensorIdentity& /*identity*/)
    : pattern_(pattern),
      packet_(
          legacy_packet_size(pattern.model->channels, pattern.model->ouster.columns_per_packet)) {}

double LegacyEncoder::data_packet_period_s() const {
  return pattern_.column_period_s * pattern_.model->ouster.columns_per_packet;
}

void LegacyEncoder::encode_frame(const FrameReturns& returns, double frame_start_s,
                                 PacketSink& sink) {
  const SensorModel& model = *pattern_.model;
  const int per_packet = model.ouster.columns_per_packet;
  const std::size_t column_bytes =
      kLegacyColumnHeader + model.channels * kLegacyPixel + kLegacyColumnFooter;
  const auto columns = static_cast<std::uint32_t>(pattern_.columns_per_frame);
  // The IMU reports at 100 Hz; a sensor at rest feels one g upwards. Its packets go out in
  // time order with the lidar packets, as on the real sensor's wire.
  const int imu_packets = static_cast<int>(std::lround(pattern_.frame_period_s * kImuRateHz));
  int imu_sent = 0;
  auto send_imu_until = [&](double t) {
    for (; imu_sent < imu_packets && frame_start_s + imu_sent / kImuRateHz <= t; ++imu_sent) {
      const double imu_time = frame_start_s + imu_sent / kImuRateHz;
      const auto imu = imu_packet(to_ns(imu_time), {0.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f});
      sink.on_packet(PacketChannel::kTelemetry, imu, imu_time);
    }
  };
  for (std::uint32_t first = 0; first < columns; first += per_packet) {
    std::fill(packet_.begin(), packet_.end(), std::uint8_t{0});
    for (int k = 0; k < per_packet; ++k) {
      const std::uint32_t c = first + k;
      const std::size_t at = k * column_bytes;
      store_le<std::uint64_t>(packet_, at, to_ns(frame_start_s + c * pattern_.column_period_s));
      store_le<std::uint16_t>(packet_, at + 8, static_cast<std::uint16_t>(c));
      store_le<std::uint16_t>(packet_, at + 10, frame_id_);
      store_le<std::uint32_t>(
          packet_, at + 12,
          static_cast<std::uint32_t>(std::uint64_t{c} * kEncoderTicksPerTurn / columns));
      for (int row = 0; row < model.channels; ++row) {
        const std::size_t beam = returns.shape.beam(c, static_cast<std::uint16_t>(row));
        const std::size_t px = at + kLegacyColumnHeader + row * kLegacyPixel;
        const auto range_mm =
            static_cast<std::uint32_t>(std::lround(returns.range_m[beam] * 1000.0));
        store_le<std::uint32_t>(packet_, px, range_mm & 0xFFFFFu);
        if (range_mm == 0) continue;
        store_le<std::uint16_t>(packet_, px + 4, returns.reflectivity[beam]);
        store_le<std::uint16_t>(packet_, px + 6, returns.signal_photons[beam]);
      }
      store_le<std::uint32_t>(packet_, at + column_bytes - kLegacyColumnFooter, kColumnValid);
    }
    // A packet leaves when its last column has been measured.
    const double sent_at = frame_start_s + (first + per_packet - 1) * pattern_.column_period_s;
    send_imu_until(sent_at);
    sink.on_packet(PacketChannel::kData, packet_, sent_at);
  }
  send_imu_until(frame_start_s + pattern_.frame_period_s);
  ++frame_id_;
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
  j["sensor_info"] = {{"build_date", "2023-03-18T18:28:26Z"},
                      {"build_rev", "v2.5.0"},
                      {"image_rev", "ousteros-image-prod-aries-v2.5.0+lidaremu"},
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
  j["config_params"] = {{"azimuth_window", {0, 360000}},
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
                        {"timestamp_mode", "TIME_FROM_INTERNAL_OSC"},
                        {"udp_dest", settings.udp_dest},
                        {"udp_port_imu", settings.udp_port_imu},
                        {"udp_port_lidar", settings.udp_port_lidar},
                        {"udp_profile_imu", "LEGACY"},
                        {"udp_profile_lidar", "LEGACY"}};
  j["lidar_data_format"] = {{"column_window", {0, columns - 1}},
                            {"columns_per_frame", columns},
                            {"columns_per_packet", m.ouster.columns_per_packet},
                            {"pixel_shift_by_row", pixel_shift_by_row(m, columns)},
                            {"pixels_per_column", m.channels},
                            {"udp_profile_imu", "LEGACY"},
                            {"udp_profile_lidar", "LEGACY"}};
  j["calibration_status"] = {
      {"reflectivity", {{"timestamp", "2023-03-18T18:28:26"}, {"valid", true}}}};
  return j.dump(4);
}

Metadata parse_metadata(const std::string& json_text) {
  using nlohmann::json;
  std::vector<std::string> problems;
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("metadata is not JSON: ") + e.what());
  }
  if (!doc.is_object()) throw std::runtime_error("metadata: top level must be an object");
  const bool nested = doc.contains("beam_intrinsics") || doc.contains("sensor_info");
  const json empty = json::object();
  auto section = [&](const char* name) -> const json& {
    if (!nested) return doc;
    if (!doc.contains(name) || !doc[name].is_object()) {
      problems.push_back(std::string("/") + name + ": missing");
      return empty;
    }
    return doc[name];
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

std::optional<ProfileLayout> profile_layout(const std::string& profile) {
  if (profile == "LEGACY") return ProfileLayout{0, 16, 12, 4, 0};
  if (profile == "RNG19_RFL8_SIG16_NIR16") return ProfileLayout{32, 12, 12, 0, 32};
  if (profile == "RNG19_RFL8_SIG16_NIR16_DUAL") return ProfileLayout{32, 12, 16, 0, 32};
  if (profile == "RNG15_RFL8_NIR8") return ProfileLayout{32, 12, 4, 0, 32};
  return std::nullopt;
}

std::uint64_t crc64_xz(std::span<const std::uint8_t> bytes) {
  constexpr std::uint64_t kReflectedPolynomial = 0xC96C5795D7870F42ull;
  std::uint64_t crc = ~0ull;
  for (const std::uint8_t byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? kReflectedPolynomial : 0);
  }
  return ~crc;
}

bool footer_crc_valid(std::span<const std::uint8_t> packet) {
  if (packet.size() < 8) return false;
  return crc64_xz(packet.first(packet.size() - 8)) ==
         load_le<std::uint64_t>(packet, packet.size() - 8);
}

LegacyDecoder::LegacyDecoder(const Metadata& metadata)
    : metadata_(metadata),
      layout_(profile_layout(metadata.udp_profile_lidar).value_or(ProfileLayout{})),
      legacy_(metadata.udp_profile_lidar == "LEGACY") {
  if (!profile_layout(metadata.udp_profile_lidar)) {
    throw std::runtime_error("metadata: unknown udp_profile_lidar '" + metadata.udp_profile_lidar +
                             "'");
  }
}

std::size_t LegacyDecoder::packet_size() const {
  return layout_.packet_header +
         static_cast<std::size_t>(metadata_.columns_per_packet) *
             (layout_.column_header +
              static_cast<std::size_t>(metadata_.channels()) * layout_.pixel +
              layout_.column_footer) +
         layout_.packet_footer;
}

DecodeError LegacyDecoder::decode(std::span<const std::uint8_t> packet,
                                  std::vector<Column>& columns, PacketHeader* header) const {
  if (packet.size() != packet_size()) return DecodeError::kWrongSize;
  if (!legacy_) return decode_profile(packet, columns, header);
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
DecodeError LegacyDecoder::decode_profile(std::span<const std::uint8_t> packet,
                                          std::vector<Column>& columns,
                                          PacketHeader* header) const {
  const std::uint16_t frame_id = load_le<std::uint16_t>(packet, 2);
  if (header) {
    header->packet_type = load_le<std::uint16_t>(packet, 0);
    header->frame_id = frame_id;
    header->init_id = load_le<std::uint32_t>(packet, 4) & 0xFFFFFFu;
    header->serial_number = load_le<std::uint64_t>(packet, 7) & 0xFFFFFFFFFFull;
  }
  const int h = metadata_.channels();
  const std::size_t column_bytes = layout_.column_header + h * layout_.pixel;
  const std::string& profile = metadata_.udp_profile_lidar;
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
      if (profile == "RNG15_RFL8_NIR8") {
        p.range_mm = (load_le<std::uint16_t>(packet, px) & 0x7FFFu) * 8u;
        p.reflectivity = packet[px + 2];
        p.near_ir = static_cast<std::uint16_t>(packet[px + 3] * 16);
      } else if (profile == "RNG19_RFL8_SIG16_NIR16_DUAL") {
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

std::array<double, 3> LegacyDecoder::to_xyz(const Column& column, int row) const {
  constexpr double kDeg = std::numbers::pi / 180.0;
  const double r = column.pixels[row].range_mm;
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
