#pragma once
// The Hesai AT128's binary angle correction (FORMATS-MORE.md 2.5 and 2.6: the `.dat` file, version
// 1.5, that nebula and the Hesai SDK load and PTC 0x05 serves byte for byte). Three mirror facets
// on one rotor each sweep the same 120-degree field: a block's encoder angle A picks the facet
// (its field), and a channel's optical azimuth is twice A past the field's start, less the
// channel's offset, plus an adjustment interpolated every 2 degrees of A. The emulated unit uses
// it as its forward model (where each beam points) and the spec decoder as the drivers do.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lidaremu::core::hesai {

// Angles in the file's unit: 1/25,600 degree (0.01 degree / 256, the block's azimuth and fine
// azimuth together).
inline constexpr std::int64_t kUnitsPerDegree = 25600;
inline constexpr std::int64_t kUnitsPerTurn = 360 * kUnitsPerDegree;

// How a driver applies the adjustments: nebula rounds each to whole 0.01 degree, the SDK keeps
// it as computed (FORMATS-MORE.md 2.6: they differ by up to 0.0034 degree).
enum class AdjustRounding : std::uint8_t { kNebula, kSdk };

struct MirrorAngles {
  int field = -1;          // the facet whose field holds A; -1: none (the SDK skips such a block)
  double azimuth_deg = 0;  // optical, [0, 360): 90 is straight ahead (+x), the field's centre
  double elevation_deg = 0;
};

class MirrorCorrection {
 public:
  // The file's bytes; an error message (naming what is wrong) when they are no version 1.5
  // correction the drivers would load.
  static std::optional<MirrorCorrection> parse(std::span<const std::uint8_t> bytes,
                                               std::string* error = nullptr);

  [[nodiscard]] int channels() const { return channels_; }
  [[nodiscard]] int fields() const { return static_cast<int>(start_.size()); }
  // Start of each field's facet sweep, in units (the file's value times its resolution).
  [[nodiscard]] std::int64_t field_start(int field) const {
    return start_[static_cast<std::size_t>(field)];
  }
  // The field holding encoder angle `a` (units, [0, kUnitsPerTurn)), or -1.
  [[nodiscard]] int field_of(std::int64_t a) const;
  [[nodiscard]] MirrorAngles angles(std::int64_t a, int channel,
                                    AdjustRounding rounding = AdjustRounding::kNebula) const;
  // The channel's own offset (subtracted from the optical azimuth) and elevation, before the
  // adjustments: what the legacy CSV lists (its Azimuth column is minus the offset).
  [[nodiscard]] double azimuth_offset_deg(int channel) const;
  [[nodiscard]] double elevation_deg(int channel) const;
  // The bytes as given: PTC 0x05's answer, and the file --calibration-out writes.
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return bytes_; }

 private:
  int channels_ = 0;
  int resolution_ = 1;
  std::vector<std::int64_t> start_, end_;     // units
  std::vector<std::int64_t> azimuth_offset_;  // units
  std::vector<std::int64_t> elevation_;       // units
  std::vector<int> azimuth_adjust_;           // 0.01 degree, channel * 180 + A / 2 degrees
  std::vector<int> elevation_adjust_;
  std::vector<std::uint8_t> bytes_;
};

// The correction of the unit whose file nebula ships (PandarAT128.dat, 47,176 bytes: fields
// starting at encoder 23.331, 143.205 and 263.149 degrees), built into the library.
const MirrorCorrection& at128_default_correction();

}  // namespace lidaremu::core::hesai
