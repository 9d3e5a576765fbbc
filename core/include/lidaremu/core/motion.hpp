#pragma once
// What an IMU riding on the sensor reads, from the poses the engine gives the sensor: specific
// force (acceleration minus gravity) and angular rate, both in the sensor frame.
#include <Eigen/Geometry>
#include <array>

namespace lidaremu::core {

inline constexpr double kStandardGravity = 9.80665;  // m/s^2

struct ImuReading {
  std::array<float, 3> accel_g{0.0f, 0.0f, 1.0f};  // at rest, upright: one g upwards
  std::array<float, 3> gyro_deg_s{0.0f, 0.0f, 0.0f};
};

// Finite differences over the last three poses: velocity from consecutive ones, acceleration
// from their change, angular rate from the relative rotation. Until three poses have arrived the
// sensor reads as at rest in its current attitude.
class MotionEstimator {
 public:
  void add(double time_s, const Eigen::Isometry3d& world_from_sensor);
  [[nodiscard]] ImuReading reading() const;

 private:
  struct Sample {
    double time_s = 0;
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  };
  std::array<Sample, 3> samples_{};  // oldest first
  int count_ = 0;
};

}  // namespace lidaremu::core
