#include "lidaremu/core/motion.hpp"

#include <numbers>

namespace lidaremu::core {

void MotionEstimator::add(double time_s, const Eigen::Isometry3d& world_from_sensor) {
  // A pose at the same time (or earlier: input reordered) replaces the newest one.
  if (count_ > 0 && time_s <= samples_[2].time_s) {
    samples_[2] = {time_s, world_from_sensor};
    return;
  }
  samples_[0] = samples_[1];
  samples_[1] = samples_[2];
  samples_[2] = {time_s, world_from_sensor};
  if (count_ < 3) ++count_;
}

ImuReading MotionEstimator::reading() const {
  ImuReading r;
  if (count_ == 0) return r;
  const Sample& now = samples_[2];
  const Eigen::Matrix3d sensor_from_world = now.pose.linear().transpose();
  Eigen::Vector3d acceleration = Eigen::Vector3d::Zero();
  if (count_ == 3) {
    const Sample& a = samples_[0];
    const Sample& b = samples_[1];
    const double dt1 = b.time_s - a.time_s;
    const double dt2 = now.time_s - b.time_s;
    const Eigen::Vector3d v1 = (b.pose.translation() - a.pose.translation()) / dt1;
    const Eigen::Vector3d v2 = (now.pose.translation() - b.pose.translation()) / dt2;
    acceleration = 2.0 * (v2 - v1) / (dt1 + dt2);
  }
  // An accelerometer feels the specific force: acceleration plus the support against gravity.
  const Eigen::Vector3d specific_force =
      sensor_from_world * (acceleration + Eigen::Vector3d(0, 0, kStandardGravity));
  for (int i = 0; i < 3; ++i)
    r.accel_g[i] = static_cast<float>(specific_force[i] / kStandardGravity);
  if (count_ >= 2) {
    const Sample& before = samples_[1];
    const Eigen::AngleAxisd turn(before.pose.linear().transpose() * now.pose.linear());
    const Eigen::Vector3d rate =
        turn.axis() * turn.angle() / (now.time_s - before.time_s) * 180.0 / std::numbers::pi;
    for (int i = 0; i < 3; ++i) r.gyro_deg_s[i] = static_cast<float>(rate[i]);
  }
  return r;
}

}  // namespace lidaremu::core
