// Which beam a hit belongs to, for raw rows (they carry no beam): the channel from the hit's
// elevation, the column from its azimuth, refined from the found beam's own origin (an Ouster
// beam leaves 15-27 mm off the axis, an HDL-64E laser up to 0.2 m: close in, that moves a hit by
// more than a beam's spacing). Many hits at once: each refinement's angles for all of them in
// SIMD lanes (simd::atan2_each, the same bits on every instruction set), the channel from a
// table in O(1), and only the hits whose beam moved go round again.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <numeric>

#include "angles.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/core/simd.hpp"

namespace lidaremu::core {
using angles::kDeg;
using angles::wrap_degrees;

namespace {
constexpr double kNoBound = std::numeric_limits<double>::infinity();

// How a family's beams are searched: whether they leave the axis (Ouster beams leave from a ring
// in the lidar frame), whether the azimuth is taken clockwise from y (Hesai's frame), whether
// every beam has an origin of its own (RoboSense's turning lens centre; a corrected Velodyne
// laser's offsets are the model's). An exhaustive switch, -Wswitch-enum an error: a new family
// fails the build here until its rule is written.
struct LocateRules {
  bool on_axis = true;
  bool azimuth_from_y = false;
  bool own_origins = false;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"
LocateRules locate_rules(const SensorModel& model) {
  switch (model.family) {
    case SensorFamily::kOuster:
      return {.on_axis = false};
    case SensorFamily::kHesai:
      return {.azimuth_from_y = true};
    case SensorFamily::kRoboSense:
      return {.own_origins = true};
    case SensorFamily::kVelodyne:
      return {.own_origins = !model.laser_corrections.empty()};
    case SensorFamily::kLivox:  // never asked: a scan-table pattern has no grid (locate_many)
      return {};
  }
  std::abort();  // every enumerator is handled above
}
#pragma GCC diagnostic pop

// The widest turn a ball of radius reach, seen from the hit, gives a direction: asin(sine), with
// sine reach over the distance. asin(s) / s grows with s, so up to s = 1/2 it is below
// asin(1/2) / (1/2) = pi / 3 = 1.0471975...; farther out no bound is taken (infinity).
double widest_turn_rad(double sine) { return sine < 0.5 ? sine * 1.0472 : kNoBound; }

// Whether a hit seen from the origin at (xy, z) (its distance in the xy plane, its height) keeps
// its channel and column when seen from anywhere within `reach` of the origin: both margins (the
// channel's in degrees, the column's in columns) wider than the widest turn, with room for the
// angles' rounding.
bool settled(double reach, double xy, double z, double channel_margin_deg, double column_margin,
             double columns_per_radian) {
  constexpr double kRoundingRoom = 1e-9;  // degrees or columns; the angles are good to 1e-15
  const double turn_deg = widest_turn_rad(reach / std::sqrt(xy * xy + z * z)) / kDeg;
  const double azimuth_turn_columns = widest_turn_rad(reach / xy) * columns_per_radian;
  return channel_margin_deg > turn_deg + kRoundingRoom &&
         column_margin > azimuth_turn_columns + kRoundingRoom;
}
}  // namespace

void BeamGeometry::build_elevation_index() {
  channels_by_elevation_.resize(model_.channels);
  std::iota(channels_by_elevation_.begin(), channels_by_elevation_.end(), std::uint16_t{0});
  std::sort(channels_by_elevation_.begin(), channels_by_elevation_.end(),
            [&](std::uint16_t a, std::uint16_t b) {
              return model_.elevation_deg[a] < model_.elevation_deg[b];
            });
  sorted_elevation_deg_.clear();
  for (const std::uint16_t ch : channels_by_elevation_) {
    sorted_elevation_deg_.push_back(model_.elevation_deg[ch]);
  }
  // Bins of half the smallest gap between distinct elevations (channels sharing one are scanned
  // past), at most 2^16 of them, over the channels' span and a degree either side.
  double smallest_gap = 1.0;
  for (std::size_t i = 1; i < sorted_elevation_deg_.size(); ++i) {
    const double gap = sorted_elevation_deg_[i] - sorted_elevation_deg_[i - 1];
    if (gap > 0) smallest_gap = std::min(smallest_gap, gap);
  }
  elevation_bins_from_deg_ = sorted_elevation_deg_.front() - 1.0;
  const double span = sorted_elevation_deg_.back() + 1.0 - elevation_bins_from_deg_;
  elevation_bin_deg_ = std::max(smallest_gap / 2, span / 65536.0);
  const auto bins = static_cast<std::size_t>(std::ceil(span / elevation_bin_deg_)) + 1;
  first_channel_in_bin_.resize(bins);
  for (std::size_t b = 0; b < bins; ++b) {
    const double lower_edge =
        elevation_bins_from_deg_ + static_cast<double>(b) * elevation_bin_deg_;
    first_channel_in_bin_[b] = static_cast<std::uint16_t>(
        std::lower_bound(sorted_elevation_deg_.begin(), sorted_elevation_deg_.end(), lower_edge) -
        sorted_elevation_deg_.begin());
  }
}

BeamGeometry::NearestChannel BeamGeometry::nearest_channel(double elevation_deg,
                                                           Margin margin) const {
  // The first channel at or above the elevation (what a binary search finds): from the bin's
  // first one (every channel before it is below the bin, so below the elevation), forward.
  const double bin = (elevation_deg - elevation_bins_from_deg_) / elevation_bin_deg_;
  const std::size_t last_bin = first_channel_in_bin_.size() - 1;
  const std::size_t b =
      bin >= 0 ? std::min(static_cast<std::size_t>(std::min(bin, 1e9)), last_bin) : 0;
  const std::size_t n = sorted_elevation_deg_.size();
  std::size_t above = first_channel_in_bin_[b];
  while (above < n && sorted_elevation_deg_[above] < elevation_deg) ++above;
  // The choice changes where the elevation crosses the midpoint of two neighbouring elevations
  // (of two equal ones: that elevation, where the scan above steps past one of them). Those
  // nearest below and above it are among the three around `above`.
  double margin_deg = 0;
  if (margin == Margin::kMeasure) {
    margin_deg = std::numeric_limits<double>::infinity();
    for (std::size_t i = above > 2 ? above - 2 : 0; i <= above && i + 1 < n; ++i) {
      const double boundary = 0.5 * (sorted_elevation_deg_[i] + sorted_elevation_deg_[i + 1]);
      margin_deg = std::min(margin_deg, std::fabs(elevation_deg - boundary));
    }
  }
  if (above == 0) return {channels_by_elevation_.front(), margin_deg};
  if (above == n) return {channels_by_elevation_.back(), margin_deg};
  const double below_gap = elevation_deg - sorted_elevation_deg_[above - 1];
  const double above_gap = sorted_elevation_deg_[above] - elevation_deg;
  return {below_gap < above_gap ? channels_by_elevation_[above - 1] : channels_by_elevation_[above],
          margin_deg};
}

double BeamGeometry::farthest_beam_origin_m() const {
  if (pattern_.table != nullptr) return 0;
  const LocateRules rules = locate_rules(model_);
  if (!rules.on_axis) return std::fabs(model_.ouster.lidar_origin_to_beam_origin_mm) * 1e-3;
  if (!rules.own_origins) return 0;
  // A RoboSense lens centre and a corrected Velodyne laser's offsets turn with the column about
  // the z axis: their distance from the origin is the channel's in every column
  // (test_sensor_models checks every beam against it).
  double farthest = 0;
  for (std::uint16_t channel = 0; channel < model_.channels; ++channel) {
    farthest = std::max(farthest, ray(0, channel).origin.norm());
  }
  return farthest;
}

template <std::size_t kChunk>
void BeamGeometry::locate_chunk(const Eigen::Vector3d* points, BeamIndex* out, std::size_t n,
                                Refinement refinement) const {
  const int columns = pattern_.columns_per_frame;
  const auto column_of = [&](double column_float) {
    const long c = std::lround(column_float) % columns;  // one division: this runs per hit
    return static_cast<std::uint32_t>(c < 0 ? c + columns : c);
  };
  const LocateRules rules = locate_rules(model_);
  const bool spinning = rules.on_axis;
  const bool hesai = rules.azimuth_from_y;
  // Refinements: the beam origin moves with the found beam, the beam follows the direction from
  // it. Once a refinement finds the beam it started from, every later one would too (it starts
  // from the same origin): that hit is done. Beams sharing one origin need no refinement.
  const int refinements = !spinning ? 4 : (rules.own_origins ? 6 : 1);
  const auto loops = static_cast<std::uint32_t>(model_.hesai.firetime_us.size());
  // The first refinement looks from the frame's origin; the second from the found beam's, no
  // farther than the reach: a ball of that radius seen from the hit turns its direction by at
  // most asin(reach / distance), its azimuth by asin(reach / distance in the xy plane). A hit
  // whose channel and column are farther than that from a boundary keeps its beam in the second
  // refinement, which would end it: it ends now. (Firing loops that take turns have a boundary
  // of their own: they always refine.)
  const bool settle_early =
      refinement == Refinement::kSettledEarly && refinements > 1 && loops <= 1;
  const double reach = beam_origin_reach_m_ * (spinning ? 1.0 : 1e3);  // the lidar frame's mm
  const double columns_per_radian = columns / (2.0 * std::numbers::pi);
  std::array<Eigen::Vector3d, kChunk> start;  // the hit, in the frame the angles are taken in
  std::array<Eigen::Vector3d, kChunk> from;   // from the current beam's origin
  std::array<std::uint16_t, kChunk> active;   // hits whose beam may still move
  std::array<double, kChunk> elevation_y, elevation_x, azimuth_y, azimuth_x, elevation, azimuth;
  for (std::size_t i = 0; i < n; ++i) {
    start[i] = spinning ? points[i]
                        : Eigen::Vector3d(lidar_to_sensor_rotation_.transpose() *
                                          (points[i] * 1e3 - lidar_to_sensor_translation_mm_));
    from[i] = start[i];
    active[i] = static_cast<std::uint16_t>(i);
  }
  std::size_t n_active = n;
  for (int iteration = 0; iteration < refinements && n_active > 0; ++iteration) {
    for (std::size_t k = 0; k < n_active; ++k) {
      const Eigen::Vector3d& p = from[active[k]];
      elevation_y[k] = p.z();
      elevation_x[k] = spinning ? std::hypot(p.x(), p.y()) : p.head<2>().norm();
      // Velodyne: clockwise from +x; Hesai: clockwise from +y; Ouster: counter-clockwise from +x.
      azimuth_y[k] = hesai ? p.x() : spinning ? -p.y() : p.y();
      azimuth_x[k] = hesai ? p.y() : p.x();
    }
    simd::atan2_each({elevation_y.data(), n_active}, {elevation_x.data(), n_active},
                     {elevation.data(), n_active});
    simd::atan2_each({azimuth_y.data(), n_active}, {azimuth_x.data(), n_active},
                     {azimuth.data(), n_active});
    const bool refine_next = iteration + 1 < refinements;
    const bool may_settle = settle_early && iteration == 0;
    std::size_t still_active = 0;
    for (std::size_t k = 0; k < n_active; ++k) {
      const std::size_t i = active[k];
      const NearestChannel found =
          nearest_channel(elevation[k] / kDeg, may_settle ? Margin::kMeasure : Margin::kSkip);
      const std::uint16_t channel = found.channel;
      std::uint32_t column = 0;
      double column_float = 0;
      if (spinning) {
        const double azimuth_deg = wrap_degrees(azimuth[k] / kDeg);
        // The channel's angle from its column's azimuth (its firing turn and calibration).
        const auto turn_deg = [&](std::uint32_t c) {
          return velodyne_laser_azimuth_deg(c, channel) - velodyne_column_azimuth_deg(c);
        };
        column_float = (azimuth_deg - turn_deg(0)) / 360.0 * columns;
        column = column_of(column_float);
        // Firing loops taking turns column by column (Hesai QT128): the channel's angle differs
        // by loop, by up to most of a column; the column is the one whose own loop's angle puts
        // it nearest.
        if (loops > 1) {
          double nearest = std::numeric_limits<double>::infinity();
          for (std::uint32_t loop = 0; loop < loops; ++loop) {
            // Column `loop` fires in that loop, and every loops-th column after it.
            const double at = (azimuth_deg - turn_deg(loop)) / 360.0 * columns;
            const double own = std::round((at - loop) / loops) * loops + loop;
            const double miss = std::fabs(at - own);
            if (miss < nearest) {
              nearest = miss;
              column = column_of(own);
            }
          }
        }
      } else {
        const double encoder = azimuth[k] + model_.azimuth_offset_deg[channel] * kDeg;
        column_float = columns * (1.0 - encoder / (2.0 * std::numbers::pi));
        column = column_of(column_float);
      }
      if (iteration > 0 && channel == out[i].channel && column == out[i].column) continue;
      out[i] = {column, channel};
      if (!refine_next) continue;
      if (may_settle &&
          settled(reach, elevation_x[k], elevation_y[k], found.margin_deg,
                  0.5 - std::fabs(column_float - std::round(column_float)), columns_per_radian)) {
        continue;
      }
      from[i] = spinning ? Eigen::Vector3d(start[i] - ray(column, channel).origin)
                         : Eigen::Vector3d(start[i] - ouster_beam_origin_lidar_mm(column));
      active[still_active++] = static_cast<std::uint16_t>(i);
    }
    n_active = still_active;
  }
}

void BeamGeometry::locate_many(std::span<const Eigen::Vector3d> points_in_sensor,
                               std::span<BeamIndex> out, Refinement refinement) const {
  constexpr std::size_t kChunk = 256;  // the working arrays stay on the stack (about 25 KB)
  const std::size_t n = std::min(points_in_sensor.size(), out.size());
  if (pattern_.table != nullptr) {  // no grid to find a hit's beam in (sensor_model.hpp)
    std::fill_n(out.begin(), n, BeamIndex{});
    return;
  }
  for (std::size_t at = 0; at < n; at += kChunk) {
    locate_chunk<kChunk>(points_in_sensor.data() + at, out.data() + at, std::min(kChunk, n - at),
                         refinement);
  }
}

BeamIndex BeamGeometry::locate(const Eigen::Vector3d& point_in_sensor) const {
  BeamIndex index;
  locate_many({&point_in_sensor, 1}, {&index, 1});
  return index;
}

}  // namespace lidaremu::core
