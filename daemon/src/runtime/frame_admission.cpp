#include "lidaremu/daemon/runtime/frame_admission.hpp"

#include <algorithm>
#include <cmath>

namespace lidaremu::daemon {

FrameAdmission::Leaving FrameAdmission::leaving(double ready_s,
                                                std::optional<double> first_packet_due_s) const {
  // The sender takes the frame's first packet once it is ready and the packets before it left,
  // and paces the frame by its rule: replayed here from where its schedule stands. The frame is
  // taken to span a period of sensor time: its end is when the sender is free for the next.
  const auto replay = [&](double taken_s) -> Leaving {
    PacingSchedule sender(rule_);
    if (first_packet_due_s) sender.follow(*first_packet_due_s, sender_busy_until_s_);
    const PacingSchedule::Due first = sender.next(taken_s, 0.0);
    return {first.at_s, sender.next(first.at_s, rule_.frame_period_s).at_s};
  };
  // When the packets before leave is known to a few milliseconds; where the rule turns within
  // them (a frame due just at the limit of what the sender waits for rather than starting
  // afresh), the later outcome: predicted fresh by a hair, such frames waited a period and left
  // 4-7 periods old.
  Leaving worst = replay(std::max(ready_s, sender_busy_until_s_));
  for (const double off_s : {-kTakeUpUncertaintyS, kTakeUpUncertaintyS}) {
    const Leaving other = replay(std::max(ready_s, sender_busy_until_s_ + off_s));
    if (other.last_s > worst.last_s) worst = other;
  }
  return worst;
}

double FrameAdmission::predicted_last_packet_s(double now_s,
                                               std::optional<double> first_packet_due_s) const {
  // The physics at its mean and two deviations: the slow side of what it has been taking.
  return leaving(now_s + estimate_s_ + kSpreads * spread_s_, first_packet_due_s).last_s;
}

bool FrameAdmission::admit(double now_s, double input_done_s, double input_lag_s,
                           std::optional<double> first_packet_due_s) {
  // Fresh (three periods) even at the physics' slow side; or, where the frame's own work at its
  // mean fills that bound (a slow sensor), within its own bound at the mean: such a frame is
  // dropped for having waited, never for its physics being slow or varying (at the slow side a
  // slow sensor whose physics varied by a tenth of a period would have had no frame admitted).
  const double fresh_s = kFreshPeriods * rule_.frame_period_s;
  const double budget = budget_s(input_lag_s);
  const bool in_time =
      predicted_last_packet_s(now_s, first_packet_due_s) <= input_done_s + fresh_s ||
      (budget > fresh_s &&
       leaving(now_s + estimate_s_, first_packet_due_s).last_s <= input_done_s + budget);
  // Silence counts from the last admitted frame, or from the first frame offered (a sensor whose
  // very first frames are late must not wait for an admission that never comes).
  if (!silent_since_s_) silent_since_s_ = now_s;
  const bool silent_too_long =
      now_s - *silent_since_s_ >= kProbeAfterPeriods * rule_.frame_period_s;
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
      std::max(kFreshPeriods * rule_.frame_period_s,
               own_work_s + rule_.margin_s + (1 + kWaitPeriods) * rule_.frame_period_s);
  if (leaving(now_s, first_packet_due_s).last_s <= input_done_s + bound_s) return true;
  silent_since_s_ = silent_before_s_;
  // Its physics ran: a frame dropped for having taken longer than predicted must teach the
  // estimate so, or the next frames are admitted on the same hope.
  learn(physics_s);
  return false;
}

void FrameAdmission::learn(double seconds) {
  if (estimated_) spread_s_ += kEstimateWeight * (std::abs(seconds - estimate_s_) - spread_s_);
  estimate_s_ = estimated_ ? estimate_s_ + kEstimateWeight * (seconds - estimate_s_) : seconds;
  estimated_ = true;
}

void FrameAdmission::processed(double seconds, double now_s,
                               std::optional<double> first_packet_due_s) {
  learn(seconds);
  // The frame is ready now: where its last packet leaves is where the sender's next frame can
  // begin at the earliest.
  const Leaving frame = leaving(now_s, first_packet_due_s);
  sender_busy_until_s_ = frame.last_s;
  replay_shift_s_ = first_packet_due_s ? frame.first_s - *first_packet_due_s : 0.0;
}

}  // namespace lidaremu::daemon
