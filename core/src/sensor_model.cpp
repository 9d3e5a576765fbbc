#include "lidaremu/core/sensor_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <numeric>

#include "angles.hpp"
#include "lidaremu/core/hesai/mirror_correction.hpp"

namespace lidaremu::core {
using angles::kDeg;
using angles::wrap_degrees;

// The beam geometry differs by family (each driver's frame and its range's origin). Every branch
// over the family here is an exhaustive switch with no default, -Wswitch-enum an error: a family
// added to the enumeration fails the build here until its geometry is written.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"

namespace {
double column_period_us(const SensorModel& model) {
  switch (model.family) {
    case SensorFamily::kHesai:
      return model.hesai.block_period_us;
    case SensorFamily::kRoboSense:
      return model.robosense.block_period_us;
    case SensorFamily::kVelodyne:
      return model.velodyne.sequence_period_us;
    case SensorFamily::kOuster:  // set by its lidar mode (make_ouster_scan)
    case SensorFamily::kLivox:   // set by its firing clock (make_table_scan)
      break;
  }
  std::abort();  // make_rpm_scan is only reached by models set by rpm
}
}  // namespace

ScanPatternResult make_rpm_scan(const SensorModel& model, int rpm) {
  const SpinTraits& spin = model.spin;
  if (!rpm_driven(model)) return {std::nullopt, "not a model set by rpm"};
  if (rpm < spin.min_rpm || rpm > spin.max_rpm || (rpm - spin.min_rpm) % spin.rpm_step != 0) {
    std::string accepted = std::to_string(spin.min_rpm) + ".." + std::to_string(spin.max_rpm);
    if (spin.rpm_step > 1) accepted += " in steps of " + std::to_string(spin.rpm_step);
    return {std::nullopt, "rpm " + std::to_string(rpm) + " is not one of " + accepted + " for " +
                              std::string(model.name)};
  }
  ScanPattern p;
  p.model = &model;
  p.column_period_s = column_period_us(model) * 1e-6;
  // The firing clock is fixed; the column count per revolution follows from the rotation rate.
  p.columns_per_frame = static_cast<int>(std::lround(60.0 / rpm / p.column_period_s));
  p.frame_period_s = p.columns_per_frame * p.column_period_s;
  p.rpm = 60.0 / p.frame_period_s;
  return {p, {}};
}

ScanPatternResult make_ouster_scan(const SensorModel& model, int columns, int fps) {
  if (model.family != SensorFamily::kOuster) return {std::nullopt, "not an Ouster model"};
  const bool columns_ok = columns == 512 || columns == 1024 || columns == 2048;
  const bool fps_ok = fps == 10 || fps == 20;
  if (!columns_ok || !fps_ok || (columns == 2048 && fps == 20)) {
    return {std::nullopt, "lidar mode " + std::to_string(columns) + "x" + std::to_string(fps) +
                              " is not one of 512x10, 1024x10, 2048x10, 512x20, 1024x20"};
  }
  ScanPattern p;
  p.model = &model;
  p.columns_per_frame = columns;
  p.frames_per_second = fps;
  p.frame_period_s = 1.0 / fps;
  p.column_period_s = p.frame_period_s / columns;
  p.rpm = 60.0 * fps;
  return {p, {}};
}

ScanPatternResult make_table_scan(const SensorModel& model,
                                  std::shared_ptr<const ScanTable> table) {
  if (model.family != SensorFamily::kLivox) return {std::nullopt, "not a model with a scan table"};
  if (table == nullptr || table->channels != model.channels) {
    return {std::nullopt, std::string(model.name) + " needs a scan table of " +
                              std::to_string(model.channels) + " lasers"};
  }
  const LivoxTraits& livox = model.livox;
  ScanPattern p;
  p.model = &model;
  p.frames_per_second = livox.frames_per_second;
  p.frame_period_s = 1.0 / livox.frames_per_second;
  p.column_period_s = livox.firing_period_us * 1e-6;
  p.columns_per_frame = static_cast<int>(std::lround(p.frame_period_s / p.column_period_s));
  p.rpm = 60.0 * livox.frames_per_second;
  if (table->firings() < static_cast<std::size_t>(p.columns_per_frame)) {
    return {std::nullopt, table->source + ": " + std::to_string(table->firings()) +
                              " firings, fewer than one frame's " +
                              std::to_string(p.columns_per_frame)};
  }
  p.table = std::move(table);
  return {p, {}};
}

BeamGeometry::BeamGeometry(const ScanPattern& pattern) : pattern_(pattern), model_(*pattern.model) {
  if (model_.family == SensorFamily::kOuster) {
    const auto& m = model_.ouster.lidar_to_sensor;
    lidar_to_sensor_rotation_ << m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10];
    lidar_to_sensor_translation_mm_ << m[3], m[7], m[11];
    // Each column's beam origin, once: reported_range() needs it for every hit.
    const double n = model_.ouster.lidar_origin_to_beam_origin_mm;
    for (int column = 0; column < pattern_.columns_per_frame; ++column) {
      const double encoder =
          2.0 * std::numbers::pi * (1.0 - double(column) / pattern_.columns_per_frame);
      beam_origins_lidar_mm_.emplace_back(n * std::cos(encoder), n * std::sin(encoder), 0.0);
    }
  }
  if (pattern_.table == nullptr) build_elevation_index();
  beam_origin_reach_m_ = farthest_beam_origin_m();
}

double BeamGeometry::column_time_s(std::uint32_t column) const {
  return column * pattern_.column_period_s;
}

double BeamGeometry::velodyne_column_azimuth_deg(std::uint32_t column) const {
  return wrap_degrees(360.0 * column / pattern_.columns_per_frame);
}

double BeamGeometry::velodyne_laser_azimuth_deg(std::uint32_t column, std::uint16_t channel) const {
  const double deg_per_us = 360.0 / (pattern_.frame_period_s * 1e6);
  switch (model_.family) {
    case SensorFamily::kHesai:
      // The block azimuth, the turn until the channel fires (its firing time, from the vendor's
      // firetime file: where the SDK with that file puts the point; nebula applies none and is
      // off by as much as on a real unit), then the calibration's offset.
      return velodyne_column_azimuth_deg(column) +
             deg_per_us * model_.hesai.firetime_at_us(channel, column) +
             model_.azimuth_offset_deg[channel];
    case SensorFamily::kRoboSense:
      // rs_driver: the block azimuth moved on by the turn until the channel fires, then its
      // horizontal calibration added.
      return robosense_turned_azimuth_deg(column, channel) + model_.azimuth_offset_deg[channel];
    case SensorFamily::kVelodyne:
    case SensorFamily::kOuster:  // not asked: its beams are ouster_direction_lidar's
    case SensorFamily::kLivox:   // not asked: its beams are its scan table's
      break;
  }
  // Lasers of a sequence fire one after another while the head keeps turning.
  const double fire_offset_us = model_.velodyne.firing_offset_us(channel);
  return velodyne_column_azimuth_deg(column) + deg_per_us * fire_offset_us -
         model_.azimuth_offset_deg[channel];
}

double BeamGeometry::robosense_turned_azimuth_deg(std::uint32_t column,
                                                  std::uint16_t channel) const {
  // rs_driver's turn: the azimuth step to the next block times the channel's share of the
  // block, in float, truncated to whole hundredths of a degree.
  const double step_cdeg = std::round(36000.0 / pattern_.columns_per_frame);
  const auto share = static_cast<float>(model_.robosense.firing_offset_us[channel]) /
                     static_cast<float>(model_.robosense.block_period_us);
  const auto turn_cdeg = static_cast<int>(static_cast<float>(step_cdeg) * share);
  return velodyne_column_azimuth_deg(column) + turn_cdeg / 100.0;
}

Eigen::Vector3d BeamGeometry::ouster_beam_origin_lidar_mm(std::uint32_t column) const {
  return beam_origins_lidar_mm_[column];
}

Eigen::Vector3d BeamGeometry::ouster_direction_lidar(std::uint32_t column,
                                                     std::uint16_t channel) const {
  const double encoder =
      2.0 * std::numbers::pi * (1.0 - double(column) / pattern_.columns_per_frame);
  const double azimuth = encoder - model_.azimuth_offset_deg[channel] * kDeg;
  const double altitude = model_.elevation_deg[channel] * kDeg;
  return {std::cos(azimuth) * std::cos(altitude), std::sin(azimuth) * std::cos(altitude),
          std::sin(altitude)};
}

Eigen::Vector3d velodyne_point(const SensorModel& model, int laser, double azimuth_deg,
                               double raw_distance_m) {
  const double a = (azimuth_deg - model.azimuth_offset_deg[laser]) * kDeg;
  const double e = model.elevation_deg[laser] * kDeg;
  const double ce = std::cos(e), se = std::sin(e), ca = std::cos(a), sa = std::sin(a);
  if (model.laser_corrections.empty()) {
    return {raw_distance_m * ce * ca, -raw_distance_m * ce * sa, raw_distance_m * se};
  }
  // velodyne_pointcloud's corrections, in its own axes (x right, y forward) first.
  const VelodyneLaserCorrection& c = model.laser_corrections[laser];
  const double d = raw_distance_m + c.dist_correction_m;
  const double vo = c.vert_offset_m, h = c.horiz_offset_m;
  const double xy = d * ce - vo * se;
  const double xx = std::fabs(xy * sa - h * ca);
  const double yy = std::fabs(xy * ca + h * sa);
  // The two-point correction: linear in the distance along each axis between 2.4 m (x) or
  // 1.93 m (y) and 25.04 m, as the calibration defines it.
  const double correction_x =
      (c.dist_correction_m - c.dist_correction_x_m) * (xx - 2.4) / (25.04 - 2.4) +
      c.dist_correction_x_m - c.dist_correction_m;
  const double correction_y =
      (c.dist_correction_m - c.dist_correction_y_m) * (yy - 1.93) / (25.04 - 1.93) +
      c.dist_correction_y_m - c.dist_correction_m;
  const double dx = d + correction_x, dy = d + correction_y;
  const double right = (dx * ce - vo * se) * sa - h * ca;
  const double forward = (dy * ce - vo * se) * ca + h * sa;
  return {forward, -right, dy * se + vo * ce};
}

BeamRay BeamGeometry::ray_in_frame(std::uint32_t frame, std::uint32_t column,
                                   std::uint16_t channel) const {
  if (pattern_.table != nullptr) {
    // Livox's frame (x forward, y left, z up), every beam from the origin.
    const std::uint64_t firing =
        std::uint64_t{frame} * static_cast<std::uint64_t>(pattern_.columns_per_frame) + column;
    return {Eigen::Vector3d::Zero(), pattern_.table->direction(firing, channel).cast<double>()};
  }
  switch (model_.family) {
    case SensorFamily::kHesai:
      return hesai_ray(column, channel);
    case SensorFamily::kRoboSense:
      return robosense_ray(column, channel);
    case SensorFamily::kVelodyne:
      return velodyne_ray(column, channel);
    case SensorFamily::kOuster:
      return ouster_ray(column, channel);
    case SensorFamily::kLivox:  // its beams are its scan table's (above)
      break;
  }
  std::abort();  // a Livox model's pattern always holds its scan table
}

BeamRay BeamGeometry::hesai_ray(std::uint32_t column, std::uint16_t channel) const {
  // Hesai's cloud frame (nebula, the SDK): x right, y forward, z up; azimuth clockwise from y.
  double a = velodyne_laser_azimuth_deg(column, channel) * kDeg;
  double e = model_.elevation_deg[channel] * kDeg;
  if (model_.hesai.mirror != nullptr) {
    // A mirror scan (AT128): where the unit's correction puts the channel at the column's
    // encoder angle, as nebula computes it from the packet.
    const std::int64_t encoder_units =
        static_cast<std::int64_t>(column % static_cast<std::uint32_t>(pattern_.columns_per_frame)) *
        hesai::kUnitsPerTurn / pattern_.columns_per_frame;
    const hesai::MirrorAngles m = model_.hesai.mirror->angles(encoder_units, channel);
    a = m.azimuth_deg * kDeg;
    e = m.elevation_deg * kDeg;
  }
  return {Eigen::Vector3d::Zero(),
          {std::cos(e) * std::sin(a), std::cos(e) * std::cos(a), std::sin(e)}};
}

BeamRay BeamGeometry::robosense_ray(std::uint32_t column, std::uint16_t channel) const {
  // rs_driver's frame (x forward, y left, azimuth clockwise from x). A beam leaves from the lens
  // centre: RX out along the turned azimuth, before the horizontal calibration, RZ up.
  const double a = velodyne_laser_azimuth_deg(column, channel) * kDeg;
  const double e = model_.elevation_deg[channel] * kDeg;
  const double h = robosense_turned_azimuth_deg(column, channel) * kDeg;
  const RoboSenseTraits& rs = model_.robosense;
  return {{rs.lens_rx_m * std::cos(h), -rs.lens_rx_m * std::sin(h), rs.lens_rz_m},
          {std::cos(e) * std::cos(a), -std::cos(e) * std::sin(a), std::sin(e)}};
}

BeamRay BeamGeometry::velodyne_ray(std::uint32_t column, std::uint16_t channel) const {
  const double a = velodyne_laser_azimuth_deg(column, channel) * kDeg;
  const double e = model_.elevation_deg[channel] * kDeg;
  const Eigen::Vector3d direction{std::cos(e) * std::cos(a), -std::cos(e) * std::sin(a),
                                  std::sin(e)};
  if (model_.laser_corrections.empty()) return {Eigen::Vector3d::Zero(), direction};
  // A corrected laser leaves from its offsets: where a zero distance (after the distance
  // correction, before the two-point one) would put its point.
  const auto& c = model_.laser_corrections[channel];
  const double ca = std::cos(a), sa = std::sin(a);
  const Eigen::Vector3d origin =
      c.vert_offset_m * Eigen::Vector3d(-std::sin(e) * ca, std::sin(e) * sa, std::cos(e)) +
      c.horiz_offset_m * Eigen::Vector3d(sa, ca, 0.0);
  return {origin, direction};
}

BeamRay BeamGeometry::ouster_ray(std::uint32_t column, std::uint16_t channel) const {
  // The beam leaves its own origin; the SDK reports range from the lidar origin minus the
  // offset n, so a point at range r lies at o + (r - n) dir (FORMATS.md).
  const Eigen::Vector3d origin_mm =
      lidar_to_sensor_rotation_ * ouster_beam_origin_lidar_mm(column) +
      lidar_to_sensor_translation_mm_;
  return {origin_mm * 1e-3, lidar_to_sensor_rotation_ * ouster_direction_lidar(column, channel)};
}

double BeamGeometry::reported_range(const Eigen::Vector3d& point_in_sensor, std::uint32_t column,
                                    std::uint16_t channel) const {
  switch (model_.family) {
    case SensorFamily::kHesai:
    case SensorFamily::kLivox:
      return point_in_sensor.norm();
    case SensorFamily::kRoboSense:
      return (point_in_sensor - ray(column, channel).origin).norm();
    case SensorFamily::kVelodyne:
      return velodyne_reported_range(point_in_sensor, column, channel);
    case SensorFamily::kOuster:
      return ouster_reported_range(point_in_sensor, column);
  }
  std::abort();  // every enumerator is handled above
}

double BeamGeometry::velodyne_reported_range(const Eigen::Vector3d& point_in_sensor,
                                             std::uint32_t column, std::uint16_t channel) const {
  if (model_.laser_corrections.empty()) return point_in_sensor.norm();
  // Invert the corrections: start from the straight beam, then move the raw distance by what the
  // decoded point still misses along the beam (the two-point correction bends it by millimetres;
  // two steps converge).
  const BeamRay beam = ray(column, channel);
  const double azimuth =
      velodyne_laser_azimuth_deg(column, channel) + model_.azimuth_offset_deg[channel];
  double raw = (point_in_sensor - beam.origin).dot(beam.direction) -
               model_.laser_corrections[channel].dist_correction_m;
  for (int step = 0; step < 3; ++step) {
    const Eigen::Vector3d decoded = velodyne_point(model_, channel, azimuth, raw);
    raw += (point_in_sensor - decoded).dot(beam.direction);
  }
  return raw;
}

double BeamGeometry::ouster_reported_range(const Eigen::Vector3d& point_in_sensor,
                                           std::uint32_t column) const {
  const Eigen::Vector3d q = lidar_to_sensor_rotation_.transpose() *
                            (point_in_sensor * 1e3 - lidar_to_sensor_translation_mm_);
  const double along_beam_mm = (q - ouster_beam_origin_lidar_mm(column)).norm();
  return (along_beam_mm + model_.ouster.lidar_origin_to_beam_origin_mm) * 1e-3;
}

void BeamGeometry::range_offsets(std::uint32_t column, std::uint16_t first_channel,
                                 const simd::HitPlanes& points, const double* distance_m,
                                 const std::uint8_t* wanted, std::size_t count,
                                 float* offset_m) const {
  if (model_.family == SensorFamily::kOuster) {
    simd::OusterRange range;
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 3; ++k)
        range.lidar_from_sensor[i * 3 + k] = lidar_to_sensor_rotation_(k, i);
      range.translation_mm[i] = lidar_to_sensor_translation_mm_[i];
      range.beam_origin_mm[i] = beam_origins_lidar_mm_[column][i];
    }
    range.origin_to_beam_origin_mm = model_.ouster.lidar_origin_to_beam_origin_mm;
    simd::ouster_range_offsets(range, points, distance_m, count, offset_m);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!wanted[i]) continue;
    const std::size_t at = i * points.stride;
    const Eigen::Vector3d p(points.x[at], points.y[at], points.z[at]);
    offset_m[i] = static_cast<float>(
        reported_range(p, column, static_cast<std::uint16_t>(first_channel + i)) - distance_m[i]);
  }
}

#pragma GCC diagnostic pop

}  // namespace lidaremu::core
