#include "lidaremu/clients/sensor_rig.hpp"

#include <cmath>
#include <stdexcept>

#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/scan_choice.hpp"

namespace lidaremu::clients {
namespace {

protocol::EngineConventions conventions_for(const std::string& engine) {
  const auto c = protocol::engine_conventions(engine);
  if (!c) throw std::runtime_error("unknown engine '" + engine + "' (ros, unreal, unity, godot)");
  return *c;
}

Eigen::Vector3d vec(const std::array<double, 3>& a) { return {a[0], a[1], a[2]}; }
std::array<double, 3> arr(const Eigen::Vector3d& v) { return {v.x(), v.y(), v.z()}; }

// A Livox model's mode is its scan table.
core::ScanPattern scan_for_rig(const std::string& model, int rpm, const std::string& mode) {
  const core::SensorModel* m = core::find_sensor_model(model);
  if (m != nullptr && core::scan_kind(*m) == core::ScanKind::kScanTable) {
    return scan_for(model, 0, "", mode);
  }
  return scan_for(model, rpm, mode);
}

}  // namespace

SensorRig::SensorRig(const std::string& model, int rpm, const std::string& mode,
                     const std::string& engine)
    : pattern_(scan_for_rig(model, rpm, mode)),
      geometry_(pattern_),
      conventions_(conventions_for(engine)),
      shape_columns_(static_cast<std::uint32_t>(pattern_.columns_per_frame)),
      channels_(static_cast<std::uint16_t>(pattern_.model->channels)),
      rows_(std::size_t{shape_columns_} * channels_ * 7, 0.0f),
      object_ids_(std::size_t{shape_columns_} * channels_, 0) {}

void SensorRig::set_pose(const std::array<double, 3>& position,
                         const std::array<double, 4>& orientation_xyzw) {
  const Eigen::Quaterniond q(orientation_xyzw[3], orientation_xyzw[0], orientation_xyzw[1],
                             orientation_xyzw[2]);
  world_from_sensor_ = conventions_.pose(vec(position), q);
}

EngineRay SensorRig::ray(std::uint32_t column, std::uint16_t channel) const {
  const core::BeamRay beam =
      geometry_.ray_in_frame(frame_, column % shape_columns_, channel % channels_);
  // Sensor frame -> ROS world -> the engine's axes and units.
  const Eigen::Vector3d start = world_from_sensor_ * beam.origin;
  const Eigen::Vector3d direction = world_from_sensor_.linear() * beam.direction;
  return {arr(conventions_.engine_point(start)),
          arr(conventions_.engine_direction(direction).normalized())};
}

bool SensorRig::set_hit(std::uint32_t column, std::uint16_t channel,
                        const std::array<double, 3>& point, const std::array<double, 3>& normal,
                        std::uint16_t material, std::uint32_t object_id) {
  if (column >= shape_columns_ || channel >= channels_) return false;
  const Eigen::Vector3d p = world_from_sensor_.inverse() * conventions_.point(vec(point));
  Eigen::Vector3d n = world_from_sensor_.linear().transpose() * conventions_.direction(vec(normal));
  if (!p.allFinite() || !n.allFinite() || n.norm() == 0) return false;
  n.normalize();
  float* r = &rows_[beam(column, channel) * 7];
  for (int k = 0; k < 3; ++k) {
    r[k] = static_cast<float>(p[k]);
    r[3 + k] = static_cast<float>(n[k]);
  }
  r[6] = static_cast<float>(material);
  object_ids_[beam(column, channel)] = object_id;
  return true;
}

bool SensorRig::set_miss(std::uint32_t column, std::uint16_t channel) {
  if (column >= shape_columns_ || channel >= channels_) return false;
  std::fill_n(rows_.begin() + static_cast<std::ptrdiff_t>(beam(column, channel) * 7), 7, 0.0f);
  object_ids_[beam(column, channel)] = 0;
  return true;
}

std::pair<std::uint32_t, std::uint32_t> SensorRig::columns_due(double from_s, double to_s) const {
  const double period = pattern_.column_period_s;
  const auto clamp_column = [&](double t) {
    return static_cast<std::uint32_t>(
        std::clamp(std::ceil(t / period - 1e-9), 0.0, static_cast<double>(shape_columns_)));
  };
  const std::uint32_t first = clamp_column(from_s);
  const std::uint32_t end = clamp_column(to_s);
  return {first, end > first ? end - first : 0};
}

std::vector<std::vector<std::uint8_t>> SensorRig::batches(std::uint32_t first, std::uint32_t count,
                                                          std::uint64_t frame_sim_time_ns,
                                                          std::uint16_t sensor_id) const {
  if (first >= shape_columns_ || count == 0) return {};
  count = std::min(count, shape_columns_ - first);
  BatchHeader h;
  h.sensor_id = sensor_id;
  h.frame = frame_;
  h.first_column = first;
  h.column_count = count;
  const auto column_ns = static_cast<std::uint64_t>(std::llround(pattern_.column_period_s * 1e9));
  h.sim_time_ns = frame_sim_time_ns ? frame_sim_time_ns + first * column_ns : 0;
  const std::size_t from = std::size_t{first} * channels_;
  const std::size_t beams = std::size_t{count} * channels_;
  return build_frame_batches(h, channels_, std::span(rows_).subspan(from * 7, beams * 7), column_ns,
                             65507, std::span(object_ids_).subspan(from, beams));
}

void SensorRig::next_frame() {
  ++frame_;
  std::fill(rows_.begin(), rows_.end(), 0.0f);
  std::fill(object_ids_.begin(), object_ids_.end(), 0u);
}

void SensorRig::tick(double dt_s) {
  if (std::isfinite(dt_s) && dt_s > 0) tick_until_s_ += dt_s;
}

bool SensorRig::next_slice(std::uint32_t& first, std::uint32_t& count) {
  const double period = pattern_.frame_period_s;
  if (frame_time_s_ >= tick_until_s_) return false;
  const double end = std::min(tick_until_s_, period);
  const auto [f, n] = columns_due(frame_time_s_, end);
  slice_first_ = first = f;
  slice_count_ = count = n;
  slice_ends_frame_ = end >= period;
  frame_time_s_ = end;
  return true;
}

std::vector<std::vector<std::uint8_t>> SensorRig::finish_slice(std::uint16_t sensor_id) {
  auto out = batches(slice_first_, slice_count_,
                     static_cast<std::uint64_t>(std::llround(frame_sim_time_s_ * 1e9)), sensor_id);
  if (slice_ends_frame_) {
    const double period = pattern_.frame_period_s;
    next_frame();
    frame_time_s_ = 0;
    tick_until_s_ -= period;
    frame_sim_time_s_ += period;
    slice_ends_frame_ = false;
  }
  slice_count_ = 0;
  return out;
}

std::pair<std::uint32_t, std::uint16_t> SensorRig::nearest_beam(
    const std::array<double, 3>& point_in_sensor) const {
  const core::BeamIndex b = geometry_.locate(vec(point_in_sensor));
  return {b.column, b.channel};
}

std::span<const float> SensorRig::row(std::uint32_t column, std::uint16_t channel) const {
  return std::span(rows_).subspan(beam(column % shape_columns_, channel % channels_) * 7, 7);
}

}  // namespace lidaremu::clients
