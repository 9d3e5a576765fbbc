#include "lidaremu/daemon/runtime/frame_admission.hpp"

#include <algorithm>

namespace lidaremu::daemon {

double FrameAdmission::last_packet_s(double ready_s,
                                     std::optional<double> first_packet_due_s) const {
  // The sender takes the frame's first packet once it is ready and the packets before it left.
  const double taken_s = std::max(ready_s, sender_busy_until_s_);
  if (first_packet_due_s) {
    const double due_s = *first_packet_due_s;
    const double lead_s = margin_s_ + period_s_;
    if (due_s >= taken_s - kResyncSlackS && due_s <= taken_s + lead_s) {
      return std::max(due_s, taken_s) + period_s_;  // on the schedule
    }
    // Jumped ahead while the sender was streaming on time: it follows the packets before.
    if (due_s > taken_s + lead_s && sender_busy_until_s_ >= ready_s - kResyncSlackS) {
      return taken_s + period_s_;
    }
  }
  return taken_s + margin_s_ + period_s_;  // a fresh schedule, the margin ahead
}

double FrameAdmission::predicted_last_packet_s(double now_s,
                                               std::optional<double> first_packet_due_s) const {
  return last_packet_s(now_s + estimate_s_, first_packet_due_s);
}

bool FrameAdmission::admit(double now_s, double input_done_s, double input_lag_s,
                           std::optional<double> first_packet_due_s) {
  const bool in_time =
      predicted_last_packet_s(now_s, first_packet_due_s) <= input_done_s + budget_s(input_lag_s);
  // Silence counts from the last admitted frame, or from the first frame offered (a sensor whose
  // very first frames are late must not wait for an admission that never comes).
  if (!silent_since_s_) silent_since_s_ = now_s;
  const bool silent_too_long = now_s - *silent_since_s_ >= kProbeAfterPeriods * period_s_;
  if (!in_time && !silent_too_long) return false;
  silent_before_s_ = silent_since_s_;
  silent_since_s_ = now_s;
  last_was_probe_ = !in_time;
  return true;
}

bool FrameAdmission::still_in_time(double now_s, double input_done_s, double physics_s,
                                   std::optional<double> first_packet_due_s) {
  const double own_work_s = std::max(estimate_s_, physics_s);
  const double bound_s =
      std::max(kFreshPeriods * period_s_, own_work_s + margin_s_ + (1 + kWaitPeriods) * period_s_);
  if (last_packet_s(now_s, first_packet_due_s) <= input_done_s + bound_s) return true;
  silent_since_s_ = silent_before_s_;
  return false;
}

void FrameAdmission::processed(double seconds, double now_s,
                               std::optional<double> first_packet_due_s) {
  estimate_s_ = estimated_ ? estimate_s_ + kEstimateWeight * (seconds - estimate_s_) : seconds;
  estimated_ = true;
  // The frame is ready now: where its last packet leaves is where the sender's next frame can
  // begin at the earliest.
  sender_busy_until_s_ = last_packet_s(now_s, first_packet_due_s);
}

}  // namespace lidaremu::daemon
