// The AT128's `.dat` correction (mirror_correction.hpp), read as FORMATS-MORE.md 2.5 lays it out:
// all little-endian, every angle times the file's resolution byte.
#include "lidaremu/core/hesai/mirror_correction.hpp"

#include <cmath>
#include <stdexcept>

#include "beam_tables.hpp"
#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core::hesai {
namespace {

constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kAdjustPerChannel = 180;  // one every 2 degrees of encoder angle
constexpr std::int64_t kAdjustStep = 2 * kUnitsPerDegree;
constexpr std::size_t kShaBytes = 32;
constexpr std::int64_t kUnitsPerCentidegree = kUnitsPerDegree / 100;

}  // namespace

std::optional<MirrorCorrection> MirrorCorrection::parse(std::span<const std::uint8_t> bytes,
                                                        std::string* error) {
  const auto fail = [&](const std::string& why) -> std::optional<MirrorCorrection> {
    if (error != nullptr) *error = "AT128 correction: " + why;
    return std::nullopt;
  };
  if (bytes.size() < kHeaderBytes || bytes[0] != 0xEE || bytes[1] != 0xFF) {
    return fail("no EE FF header");
  }
  if (bytes[2] != 1 || bytes[3] != 5) {
    return fail("version " + std::to_string(bytes[2]) + "." + std::to_string(bytes[3]) +
                ", where the drivers load only 1.5");
  }
  const std::size_t channels = bytes[4];
  const std::size_t mirrors = bytes[5];
  const int resolution = bytes[15];
  if (channels == 0 || mirrors == 0 || resolution == 0) {
    return fail("no channels, no mirrors or a zero resolution");
  }
  const std::size_t needed =
      kHeaderBytes + 8 * mirrors + 8 * channels + 2 * channels * kAdjustPerChannel + kShaBytes;
  if (bytes.size() < needed) {
    return fail(std::to_string(bytes.size()) + " bytes, " + std::to_string(needed) +
                " needed for " + std::to_string(channels) + " channels and " +
                std::to_string(mirrors) + " mirrors");
  }
  MirrorCorrection c;
  c.channels_ = static_cast<int>(channels);
  c.resolution_ = resolution;
  std::size_t at = kHeaderBytes;
  const auto scaled_u32 = [&] {
    const auto v = static_cast<std::int64_t>(load_le<std::uint32_t>(bytes, at)) * resolution;
    at += 4;
    return v;
  };
  const auto scaled_i32 = [&] {
    const auto v = static_cast<std::int64_t>(load_le<std::int32_t>(bytes, at)) * resolution;
    at += 4;
    return v;
  };
  for (std::size_t m = 0; m < mirrors; ++m) c.start_.push_back(scaled_u32());
  for (std::size_t m = 0; m < mirrors; ++m) c.end_.push_back(scaled_u32());
  for (std::size_t ch = 0; ch < channels; ++ch) c.azimuth_offset_.push_back(scaled_i32());
  for (std::size_t ch = 0; ch < channels; ++ch) c.elevation_.push_back(scaled_i32());
  for (auto* table : {&c.azimuth_adjust_, &c.elevation_adjust_}) {
    for (std::size_t i = 0; i < channels * kAdjustPerChannel; ++i) {
      table->push_back(static_cast<std::int8_t>(bytes[at++]) * resolution);
    }
  }
  c.bytes_.assign(bytes.begin(), bytes.end());
  return c;
}

int MirrorCorrection::field_of(std::int64_t a) const {
  for (std::size_t f = 0; f < start_.size(); ++f) {
    const std::int64_t s = start_[f], e = end_[f];
    const bool inside = s <= e ? (s <= a && a <= e) : (a >= s || a <= e);  // e < s: it wraps
    if (inside) return static_cast<int>(f);
  }
  return -1;
}

MirrorAngles MirrorCorrection::angles(std::int64_t a, int channel, AdjustRounding rounding) const {
  MirrorAngles out;
  out.field = field_of(a);
  if (out.field < 0) return out;
  const auto ch = static_cast<std::size_t>(channel);
  // The adjustments between the two entries around A (the last entry of a channel's table is
  // its own: the drivers read on into the next channel's, which no field ever reaches).
  const auto i = static_cast<std::size_t>(a / kAdjustStep);
  const double k = static_cast<double>(a - static_cast<std::int64_t>(i) * kAdjustStep) /
                   static_cast<double>(kAdjustStep);
  const std::size_t here = ch * kAdjustPerChannel + std::min(i, kAdjustPerChannel - 1);
  const std::size_t next = ch * kAdjustPerChannel + std::min(i + 1, kAdjustPerChannel - 1);
  const auto interpolate = [&](const std::vector<int>& table) {
    const double v = (1.0 - k) * table[here] + k * table[next];
    return rounding == AdjustRounding::kNebula ? std::round(v) : v;
  };
  std::int64_t swept = a - start_[static_cast<std::size_t>(out.field)];
  if (swept < 0) swept += kUnitsPerTurn;
  const double azimuth_units = static_cast<double>(2 * swept - azimuth_offset_[ch]) +
                               interpolate(azimuth_adjust_) * kUnitsPerCentidegree;
  out.azimuth_deg = std::fmod(azimuth_units / kUnitsPerDegree + 720.0, 360.0);
  out.elevation_deg =
      static_cast<double>(elevation_[ch]) / kUnitsPerDegree + interpolate(elevation_adjust_) * 0.01;
  return out;
}

double MirrorCorrection::azimuth_offset_deg(int channel) const {
  return static_cast<double>(azimuth_offset_[static_cast<std::size_t>(channel)]) / kUnitsPerDegree;
}

double MirrorCorrection::elevation_deg(int channel) const {
  return static_cast<double>(elevation_[static_cast<std::size_t>(channel)]) / kUnitsPerDegree;
}

const MirrorCorrection& at128_default_correction() {
  static const MirrorCorrection correction = [] {
    std::string error;
    auto parsed = MirrorCorrection::parse(kPandarAt128Dat, &error);
    if (!parsed) throw std::logic_error("the built-in " + error);
    return *std::move(parsed);
  }();
  return correction;
}

}  // namespace lidaremu::core::hesai
