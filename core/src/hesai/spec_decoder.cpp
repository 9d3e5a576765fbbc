// The Hesai spec decoder: every field from the format tables (hesai/format.hpp).
#include <isa-l/crc.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/utc.hpp"

namespace lidaremu::core::hesai {

Calibration parse_calibration_csv(const std::string& text) {
  Calibration c;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line_number == 1 && (line.rfind("Channel", 0) == 0 || line.rfind("Laser id", 0) == 0)) {
      continue;
    }
    int channel = 0;
    double elevation = 0, azimuth = 0;
    char comma1 = 0, comma2 = 0;
    std::istringstream row(line);
    if (!(row >> channel >> comma1 >> elevation >> comma2 >> azimuth) || comma1 != ',' ||
        comma2 != ',' || channel != static_cast<int>(c.elevation_deg.size()) + 1 ||
        !std::isfinite(elevation) || !std::isfinite(azimuth) || std::fabs(elevation) > 90 ||
        std::fabs(azimuth) > 360) {
      throw std::runtime_error("calibration line " + std::to_string(line_number) + " ('" + line +
                               "'): expected 'channel,elevation,azimuth' with channels from 1 "
                               "in order and angles in degrees");
    }
    c.elevation_deg.push_back(elevation);
    c.azimuth_offset_deg.push_back(azimuth);
  }
  if (c.elevation_deg.empty()) throw std::runtime_error("calibration: no channel rows");
  return c;
}

const ModelFormat* find_model_format(std::string_view name) {
  for (const ModelFormat& m : kModelFormats) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

namespace {
// A date and time a packet may carry (a leap second allowed), microseconds within the second.
bool valid_time(const UtcFields& d, std::uint32_t micros) {
  return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31 && d.hour <= 23 &&
         d.minute <= 59 && d.second <= 60 && micros <= 999'999;
}
}  // namespace

// CRC-32/MPEG-2 (polynomial 0x04C11DB7 unreflected, 0xFFFFFFFF in, nothing out): ISA-L's
// crc32_ieee inverts in and out (CRC-32/BZIP2), so MPEG-2 is its complement.
std::uint32_t crc32_mpeg2(std::span<const std::uint8_t> bytes) {
  return ~crc32_ieee(0, bytes.data(), bytes.size());
}

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kWrongSize:
      return "wrong packet size";
    case DecodeError::kBadSignature:
      return "no EE FF pre-header";
    case DecodeError::kWrongProtocol:
      return "protocol version not the model's";
    case DecodeError::kWrongShape:
      return "laser or block count not the model's";
    case DecodeError::kBadAzimuth:
      return "azimuth out of range";
    case DecodeError::kBadDate:
      return "date out of range";
    case DecodeError::kBadCrc:
      return "CRC does not match";
  }
  return "?";
}

bool read_tail(std::span<const std::uint8_t> packet, const ModelFormat& format, PacketInfo& info) {
  const ProtocolFormat& p = *format.protocol;
  const bool with_sequence =
      p.optional_sequence && packet.size() == format.packet_size_with_sequence();
  UtcFields date{};
  std::uint32_t micros = 0;
  std::optional<std::int64_t> unix_s;  // the AT128's date: UNIX seconds, big-endian
  for (const auto& f : p.tail) {
    if (f.offset + f.bytes > p.tail_size && !with_sequence) continue;  // the optional sequence
    const auto v = load_field(packet, format.tail_at(), f);
    switch (f.name) {
      case Field::kReturnMode:
        info.return_mode = static_cast<std::uint8_t>(v);
        break;
      case Field::kMotorRpm:
        info.motor_rpm = static_cast<int>(v);
        break;
      case Field::kYear:
        date.year = (v < 70 ? 2000 : 1900) + static_cast<int>(v);  // the SDK's rule
        break;
      case Field::kMonth:
        date.month = static_cast<int>(v);
        break;
      case Field::kDay:
        date.day = static_cast<int>(v);
        break;
      case Field::kHour:
        date.hour = static_cast<int>(v);
        break;
      case Field::kMinute:
        date.minute = static_cast<int>(v);
        break;
      case Field::kSecond:
        date.second = static_cast<int>(v);
        break;
      case Field::kMicroseconds:
        micros = static_cast<std::uint32_t>(v);
        break;
      case Field::kFactory:
        info.factory = static_cast<std::uint8_t>(v);
        break;
      case Field::kUdpSequence:
        info.udp_sequence = static_cast<std::uint32_t>(v);
        break;
      case Field::kModeFlag:
        info.mode_flag = static_cast<std::uint8_t>(v);
        break;
      case Field::kUnixSecondsBe:
        unix_s = static_cast<std::int64_t>(load_be(packet, format.tail_at() + f.offset, f.bytes));
        break;
      default:
        break;
    }
  }
  if (unix_s) {
    if (micros > 999'999) return false;
    info.time_s = static_cast<double>(*unix_s) + micros * 1e-6;
    return true;
  }
  if (!valid_time(date, micros)) return false;
  info.time_s = static_cast<double>(unix_seconds(date)) + micros * 1e-6;
  return true;
}

GpsError read_gps_packet(std::span<const std::uint8_t> packet, GpsInfo& info) {
  if (packet.size() != kGpsPacket.size) return GpsError::kWrongSize;
  UtcFields date{};
  for (const auto& f : kGpsPacket.fields) {
    const auto v = load_field(packet, 0, f);
    // Two ASCII digits, units first.
    const auto units = static_cast<int>(v & 0xFF) - '0';
    const auto tens = static_cast<int>(v >> 8) - '0';
    const bool digits = units >= 0 && units <= 9 && tens >= 0 && tens <= 9;
    const int number = tens * 10 + units;
    switch (f.name) {
      case GpsField::kFlag:
        if (v != kGpsFlagValue) return GpsError::kBadFlag;
        continue;
      case GpsField::kMicroseconds:
        info.micros = static_cast<std::uint32_t>(v);
        continue;
      case GpsField::kPositioningStatus:
        info.positioning_status = static_cast<char>(v);
        continue;
      case GpsField::kPpsLock:
        info.pps_locked = v == 1;
        continue;
      default:
        break;
    }
    if (!digits) return GpsError::kBadDigits;
    if (f.name == GpsField::kYear) date.year = 2000 + number;
    if (f.name == GpsField::kMonth) date.month = number;
    if (f.name == GpsField::kDay) date.day = number;
    if (f.name == GpsField::kHour) date.hour = number;
    if (f.name == GpsField::kMinute) date.minute = number;
    if (f.name == GpsField::kSecond) date.second = number;
  }
  if (!valid_time(date, info.micros)) return GpsError::kBadDate;
  info.unix_second = unix_seconds(date);
  const auto* nmea = packet.data() + kGpsPacket.nmea_at;
  const auto* end = std::find(nmea, nmea + kGpsPacket.nmea_bytes, std::uint8_t{0});
  info.nmea.assign(nmea, end);
  return GpsError::kNone;
}

SpecDecoder::SpecDecoder(const ModelFormat& format, Calibration calibration)
    : format_(format), calibration_(std::move(calibration)) {
  if (calibration_.elevation_deg.size() != static_cast<std::size_t>(format_.lasers)) {
    throw std::invalid_argument("calibration has " +
                                std::to_string(calibration_.elevation_deg.size()) +
                                " channels, the model " + std::to_string(format_.lasers));
  }
  for (const auto& loop : calibration_.firetime_us) {
    if (loop.size() != static_cast<std::size_t>(format_.lasers)) {
      throw std::invalid_argument("firing times of " + std::to_string(loop.size()) +
                                  " channels, the model " + std::to_string(format_.lasers));
    }
  }
}

DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                                PacketInfo* info) const {
  const ProtocolFormat& p = *format_.protocol;
  const bool with_sequence =
      p.optional_sequence && packet.size() == format_.packet_size_with_sequence();
  if (packet.size() != format_.packet_size() && !with_sequence) return DecodeError::kWrongSize;
  PacketInfo tail;
  tail.distance_unit_mm = p.distance_unit_mm;
  for (const auto& f : p.header) {
    const auto v = load_field(packet, 0, f);
    switch (f.name) {
      case Field::kSignature:
        if (v != kSignatureValue) return DecodeError::kBadSignature;
        break;
      case Field::kProtocolMajor:
        if (v != static_cast<std::uint64_t>(p.major)) return DecodeError::kWrongProtocol;
        break;
      case Field::kProtocolMinor:
        if (v != static_cast<std::uint64_t>(p.minor)) return DecodeError::kWrongProtocol;
        break;
      case Field::kLaserNum:
        if (v != static_cast<std::uint64_t>(format_.lasers)) return DecodeError::kWrongShape;
        break;
      case Field::kBlockNum:
        if (v != static_cast<std::uint64_t>(format_.blocks)) return DecodeError::kWrongShape;
        break;
      case Field::kFirstBlockReturn:
        tail.first_block_return = static_cast<int>(v);
        break;
      case Field::kDistanceUnitMm:
        tail.distance_unit_mm = static_cast<int>(v);
        break;
      case Field::kReturnNum:
        tail.return_num = static_cast<int>(v);
        break;
      case Field::kFlags:
        tail.flags = static_cast<std::uint8_t>(v);
        break;
      default:
        break;
    }
  }
  if (p.block_flag.bytes != 0) {
    for (int b = 0; b < format_.blocks; ++b) {
      if (load_field(packet, format_.block_at(b), p.block_flag) != kBlockFlagValue) {
        return DecodeError::kBadSignature;
      }
    }
  }
  if (!read_tail(packet, format_, tail)) return DecodeError::kBadDate;
  const std::size_t tail_at = format_.tail_at();
  for (const CrcCheck& c : p.crcs) {
    const std::size_t begin = c.from_first_block ? p.first_block : tail_at + c.begin;
    const auto covered = packet.subspan(begin, tail_at + c.end - begin);
    if (crc32_mpeg2(covered) != load_field(packet, tail_at, c.crc)) return DecodeError::kBadCrc;
  }
  tail.crcs_checked = static_cast<int>(p.crcs.size());
  for (int b = 0; b < format_.blocks; ++b) {  // a bad packet adds no point
    if (load_field(packet, format_.block_at(b), p.azimuth) >= 36000)
      return DecodeError::kBadAzimuth;
  }
  if (info) *info = tail;

  constexpr double kDeg = std::numbers::pi / 180.0;
  const double unit_m = tail.distance_unit_mm * 1e-3;
  // The SDK's firetime correction: the turn in a channel's firing time at the tail's rate; a
  // QT128 block's loop from the mode flag and its column in the packet (blocks in pairs from
  // return mode 0x39 on).
  const auto& firetimes = calibration_.firetime_us;
  const double deg_per_us = tail.motor_rpm * 6e-6;
  const int blocks_per_column = tail.return_mode >= kLastStrongest ? 2 : 1;
  const auto firing_turn_deg = [&](int block, std::size_t channel) {
    if (firetimes.empty()) return 0.0;
    const std::size_t loop =
        static_cast<std::size_t>(tail.mode_flag + block / blocks_per_column + 1) % firetimes.size();
    return firetimes[loop][channel] * deg_per_us;
  };
  for (int b = 0; b < format_.blocks; ++b) {
    const std::size_t block_at = format_.block_at(b);
    const auto azimuth_centideg = load_field(packet, block_at, p.azimuth);
    // A mirror scan: the block's encoder angle in 1/25,600 degree (with its fine azimuth).
    const auto encoder_units =
        static_cast<std::int64_t>(azimuth_centideg) * 256 +
        static_cast<std::int64_t>(
            p.fine_azimuth.bytes != 0 ? load_field(packet, block_at, p.fine_azimuth) : 0);
    // The SDK skips a block whose angle is in no field (nebula throws): no point of it.
    if (calibration_.mirror != nullptr && calibration_.mirror->field_of(encoder_units) < 0) {
      continue;
    }
    for (int ch = 0; ch < format_.lasers; ++ch) {
      const std::size_t at =
          block_at + p.first_record + static_cast<std::size_t>(ch) * p.record_size;
      const auto units = load_field(packet, at, p.distance);
      if (units == 0) continue;
      const auto c = static_cast<std::size_t>(ch);
      double azimuth = static_cast<double>(azimuth_centideg) * 0.01 + firing_turn_deg(b, c) +
                       calibration_.azimuth_offset_deg[c];
      double elevation = calibration_.elevation_deg[c];
      if (calibration_.mirror != nullptr) {
        const MirrorAngles a = calibration_.mirror->angles(encoder_units, ch);
        azimuth = a.azimuth_deg;
        elevation = a.elevation_deg;
      }
      const double r = static_cast<double>(units) * unit_m;
      const double horizontal = r * std::cos(elevation * kDeg);
      Point pt;
      pt.x = static_cast<float>(horizontal * std::sin(azimuth * kDeg));
      pt.y = static_cast<float>(horizontal * std::cos(azimuth * kDeg));
      pt.z = static_cast<float>(r * std::sin(elevation * kDeg));
      pt.distance_m = static_cast<float>(r);
      pt.azimuth_deg = static_cast<float>(std::fmod(azimuth + 360.0, 360.0));
      pt.reflectivity = static_cast<std::uint8_t>(load_field(packet, at, p.reflectivity));
      pt.channel = static_cast<std::uint16_t>(ch);
      pt.block = static_cast<std::uint8_t>(b);
      pt.block_azimuth = static_cast<std::uint16_t>(azimuth_centideg);
      out.push_back(pt);
    }
  }
  return DecodeError::kNone;
}

}  // namespace lidaremu::core::hesai
