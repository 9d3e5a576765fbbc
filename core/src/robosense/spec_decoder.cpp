// The RoboSense spec decoder, written from FORMATS-HESAI-ROBOSENSE.md section 2 and the packet
// structs of rs_driver v1.5: it places points as rs_driver does (x forward, y left; the lens
// centre; each channel's azimuth moved on by the turn during its block) and, like rs_driver with
// wait_for_difop, decodes nothing before a DIFOP.
#include <cmath>
#include <numbers>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/utc.hpp"

namespace lidaremu::core::robosense {
namespace {

constexpr double kRadPerCdeg = std::numbers::pi / 18000.0;

// false when the fields are no time (microseconds past a second, a month 13).
bool read_time(std::span<const std::uint8_t> in, std::size_t at, TimeForm form, double& time_s) {
  if (form == TimeForm::kUtcMicros) {
    const std::uint64_t micros = load_be(in, at + 6, 4);
    if (micros > 999'999) return false;
    time_s = static_cast<double>(load_be(in, at, 6)) + static_cast<double>(micros) * 1e-6;
    return true;
  }
  const UtcFields f{2000 + in[at], in[at + 1], in[at + 2], in[at + 3], in[at + 4], in[at + 5]};
  const std::uint64_t ms = load_be(in, at + 6, 2), us = load_be(in, at + 8, 2);
  if (f.month < 1 || f.month > 12 || f.day < 1 || f.day > 31 || f.hour > 23 || f.minute > 59 ||
      f.second > 60 || ms > 999 || us > 999) {
    return false;
  }
  time_s = static_cast<double>(unix_seconds(f)) + static_cast<double>(ms) * 1e-3 +
           static_cast<double>(us) * 1e-6;
  return true;
}

// Angles in 0.01 degree, as rs_driver keeps them: the RS-LiDAR-32's 0.001 degree rounded
// (round(v * 0.1)), the RS-LiDAR-16's 0.0001 degree truncated ((u16)(v * 0.01)).
DifopError read_angles(std::span<const std::uint8_t> in, std::size_t at, AngleForm form,
                       std::array<int, kChannels>& cdeg) {
  const std::size_t channels = form == AngleForm::kPitch16 ? 16 : cdeg.size();
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const std::size_t a = at + ch * kAngleBytes;
    if (in[a] == kAngleUncalibrated) return DifopError::kUncalibrated;
    switch (form) {
      case AngleForm::kSignedCdeg:
      case AngleForm::kSignedMdeg: {
        const auto magnitude = static_cast<int>(load_be(in, a + 1, 2));
        const int steps = in[a] == 0 ? magnitude : -magnitude;
        cdeg[ch] =
            form == AngleForm::kSignedCdeg ? steps : static_cast<int>(std::round(steps * 0.1));
        break;
      }
      case AngleForm::kPitch16: {
        const auto pitch = static_cast<int>(static_cast<double>(load_be(in, a, 3)) * 0.01);
        cdeg[ch] = ch < 8 ? -pitch : pitch;  // channels 1-8 point down
        break;
      }
    }
    if (cdeg[ch] < kAngleMinCdeg || cdeg[ch] > kAngleMaxCdeg) return DifopError::kAngleOutOfRange;
  }
  return DifopError::kNone;
}

}  // namespace

DifopError read_difop(std::span<const std::uint8_t> packet, const ModelFormat& format,
                      DifopInfo& info) {
  if (packet.size() != kPacketSize) return DifopError::kWrongSize;
  if (!std::equal(kDifopId.begin(), kDifopId.end(), packet.begin())) return DifopError::kBadId;
  const DifopFormat& d = format.difop;
  DifopInfo out;
  if (const DifopError e = read_angles(packet, d.vertical_at, d.angle_form, out.vertical_cdeg);
      e != DifopError::kNone) {
    return e;
  }
  if (d.horizontal_at != 0) {
    if (const DifopError e =
            read_angles(packet, d.horizontal_at, d.angle_form, out.horizontal_cdeg);
        e != DifopError::kNone) {
      return e;
    }
  }
  out.rpm = static_cast<int>(load_be(packet, d.rpm_at, 2));
  out.fov_start_cdeg = static_cast<int>(load_be(packet, d.fov_start_at, 2));
  out.fov_end_cdeg = static_cast<int>(load_be(packet, d.fov_end_at, 2));
  out.return_mode = packet[d.return_mode_at];
  if (!read_time(packet, d.time_at, d.time_form, out.time_s)) out.time_s = 0;
  std::copy_n(packet.begin() + d.serial_at, out.serial.size(), out.serial.begin());
  std::copy_n(packet.begin() + d.lidar_ip_at, out.lidar_ip.size(), out.lidar_ip.begin());
  out.msop_port = static_cast<std::uint16_t>(load_be(packet, d.msop_port_at, 2));
  out.difop_port = static_cast<std::uint16_t>(load_be(packet, d.difop_port_at, 2));
  out.sync_status = d.sync_status_at != 0 ? packet[d.sync_status_at] : 0;
  for (std::size_t i = 0; i < d.gprmc_bytes && packet[d.gprmc_at + i] != 0; ++i) {
    out.gprmc += static_cast<char>(packet[d.gprmc_at + i]);
  }
  info = std::move(out);
  return DifopError::kNone;
}

SpecDecoder::SpecDecoder(const SensorModel& model)
    : model_(model), format_(*model.robosense.format) {}

DifopError SpecDecoder::on_difop(std::span<const std::uint8_t> packet) {
  DifopInfo info;
  const DifopError e = read_difop(packet, format_, info);
  if (e != DifopError::kNone) return e;
  difop_ = std::move(info);
  if (difop_.rpm == 0) difop_.rpm = 600;  // as rs_driver: a unit reporting 0 spins at 600
  has_difop_ = true;
  return DifopError::kNone;
}

bool SpecDecoder::dual() const {
  const auto* mode = model_.robosense.return_mode_of_code(difop_.return_mode);
  return mode != nullptr && reports_two_echoes(mode->return_mode);
}

std::optional<double> msop_time_s(std::span<const std::uint8_t> packet, const ModelFormat& format) {
  const MsopFormat& m = format.msop;
  double time_s = 0;
  if (packet.size() != kPacketSize ||
      !std::equal(m.id.begin(), m.id.begin() + m.id_bytes, packet.begin()) ||
      !read_time(packet, m.time_at, m.time_form, time_s)) {
    return std::nullopt;
  }
  return time_s;
}

DecodeError SpecDecoder::decode(std::span<const std::uint8_t> packet, std::vector<Point>& out,
                                PacketInfo* info) {
  if (!has_difop_) return DecodeError::kNoDifop;
  if (packet.size() != kPacketSize) return DecodeError::kWrongSize;
  const MsopFormat& m = format_.msop;
  if (!std::equal(m.id.begin(), m.id.begin() + m.id_bytes, packet.begin())) {
    return DecodeError::kBadId;
  }
  double packet_time_s = 0;
  if (!read_time(packet, m.time_at, m.time_form, packet_time_s)) return DecodeError::kBadTime;
  if (info != nullptr) {
    info->time_s = packet_time_s;
    info->temperature_c = temperature_of(packet.subspan(m.temperature_at).first<2>());
  }
  const RoboSenseTraits& rs = model_.robosense;
  // A block holds one firing of every channel, or two on the RS-LiDAR-16 in single return
  // (slots 16-31 the next firing); in dual return the echoes of one firing take two blocks, or
  // the two halves of one block on the RS-LiDAR-16.
  const bool two_echoes = dual();
  const int firings_per_block = format_.firings_per_block;
  const int firing_channels = kChannels / firings_per_block;
  const int stride = two_echoes && firings_per_block == 1 ? 2 : 1;  // blocks one firing takes
  const int firings_in_block = two_echoes ? 1 : firings_per_block;
  const double firing_us = rs.block_period_us;
  const double block_span_us = firing_us * firings_in_block;
  // The azimuth step a block makes at the DIFOP's rate: for a packet's last block (pair), and
  // for any step past 1 degree (a gap in the scan).
  const int nominal_step =
      static_cast<int>(std::lround(36000.0 * (difop_.rpm / 60.0) * firing_us * 1e-6)) *
      firings_in_block;
  const auto azimuth_of = [&](int block) {
    return static_cast<int>(load_be(packet, block_at(block) + 2, 2));
  };
  for (int block = 0; block < kBlocks; ++block) {
    if (load_be(packet, block_at(block), 2) != kBlockFlag) return DecodeError::kBadBlockFlag;
    const int first_of_group = block - block % stride;
    const int next = first_of_group + stride;
    const int azimuth = azimuth_of(block);
    int step = nominal_step;
    if (next < kBlocks) {
      step = (azimuth_of(next) - azimuth_of(first_of_group) + 36000) % 36000;
      if (step > 100) step = nominal_step;
    }
    const int firing_group = block / stride;  // dual: the two blocks of a pair fire together
    const double block_time_s =
        packet_time_s + static_cast<double>(firing_group) * block_span_us * 1e-6;
    for (int slot = 0; slot < kChannels; ++slot) {
      const int ch = slot % firing_channels;
      const int half = slot / firing_channels;
      if (ch >= model_.channels) continue;
      const std::size_t at = record_at(block, slot);
      const auto units = load_be(packet, at, 2);
      if (units == 0) continue;
      const auto c = static_cast<std::size_t>(ch);
      const int firing = two_echoes ? 0 : half;
      const double fired_us = firing * firing_us + rs.firing_offset_us[c];
      const auto share = static_cast<float>(fired_us) / static_cast<float>(block_span_us);
      const int turned = azimuth + static_cast<int>(static_cast<float>(step) * share);
      const int calibrated = turned + difop_.horizontal_cdeg[c];
      const double v = difop_.vertical_cdeg[c] * kRadPerCdeg;
      const double h = turned * kRadPerCdeg, hf = calibrated * kRadPerCdeg;
      const double d = static_cast<double>(units) * format_.distance_unit_m;
      Point p;
      p.x = static_cast<float>(d * std::cos(v) * std::cos(hf) + rs.lens_rx_m * std::cos(h));
      p.y = static_cast<float>(-d * std::cos(v) * std::sin(hf) - rs.lens_rx_m * std::sin(h));
      p.z = static_cast<float>(d * std::sin(v) + rs.lens_rz_m);
      p.distance_m = static_cast<float>(d);
      p.intensity = packet[at + 2];
      p.channel = static_cast<std::uint16_t>(ch);
      p.block = static_cast<std::uint8_t>(block);
      p.firing = static_cast<std::uint8_t>(firing);
      p.echo = static_cast<std::uint8_t>(!two_echoes ? 0 : stride == 2 ? block % 2 : half);
      p.block_azimuth = static_cast<std::uint16_t>(azimuth);
      p.time_s = block_time_s + fired_us * 1e-6;
      out.push_back(p);
    }
  }
  return DecodeError::kNone;
}

}  // namespace lidaremu::core::robosense
