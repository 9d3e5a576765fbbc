#pragma once
// The shortfall shared, when the machine cannot carry every sensor's frames. The physics gate
// serves the frame due first (PhysicsGate), and admission by deadline (FrameAdmission) drops a
// frame that cannot leave in time; under overload, what cannot leave in time is what comes last
// in line, and sensors whose frames arrive at the same moments of every period keep their place
// in it: the same sensors lost nearly all their frames while the others lost few (22 VLP-16 at
// real time on 2 cores: 8 to 192 of 211 frames out; 4 VLS-128 dual: 18, 15, 6 and 4 of 91).
//
// Each sensor keeps the share of its frames that left (a running average of its frames'
// outcomes), and its frames take their place in line earlier than their deadline by
// lead_s(): kLeadPeriods of its frame periods times -ln(share), nothing while every frame
// leaves. A sensor served worse moves ahead of one served better until the shares meet: two
// sensors whose frames arrive a whole period apart settle where their shares differ by a factor
// e^(1/kLeadPeriods), 5 %. The cores are never left idle for fairness' sake: only the order
// changes, and the frames that then cannot leave in time are dropped by the admission, before
// their physics, and counted as late.
// Only the sensor's own processing thread reads and writes its share: no lock.
#include <cstdint>

namespace lidaremu::daemon {

class FairShare {
 public:
  // Weight of a frame's outcome in its sensor's running share: about the last 32 frames.
  static constexpr double kWeight = 1.0 / 32;
  // How far ahead in line (frame periods) a sensor's frames move per e-fold its share falls.
  static constexpr double kLeadPeriods = 20.0;
  // Shares below this count as this (the lead stays finite: 138 periods).
  static constexpr double kFloor = 1e-3;

  explicit FairShare(double frame_period_s) : period_s_(frame_period_s) {}

  // Frames of this sensor that left (delivered) or were dropped, for any reason.
  void record(bool delivered, std::uint64_t frames = 1);
  // The share of its frames that left, lately (1 at the start).
  [[nodiscard]] double share() const { return share_; }
  // How much earlier than its deadline the sensor's frames take their place in line.
  [[nodiscard]] double lead_s() const;

 private:
  double period_s_;
  double share_ = 1.0;
};

}  // namespace lidaremu::daemon
