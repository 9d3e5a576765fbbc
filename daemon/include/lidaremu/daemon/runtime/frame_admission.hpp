#pragma once
// Real-time admission by deadline. Under overload a frame that waits (in the socket's buffer,
// behind the frames before it, behind other sensors' physics) leaves late and makes every frame
// after it late. Before any work is spent on a frame, this predicts when its last packet would
// leave, from how long the physics has been taking (at its slow side: its running mean and twice
// its running mean deviation, as TCP's retransmission timer bounds a round trip: Jacobson,
// "Congestion Avoidance and Control", SIGCOMM 1988; under overload a frame's physics varies with
// what shares the cores, and a prediction from the mean alone let through frames that then left
// late) and where the sending thread's schedule stands, and lets it through only if that is
// within the bound of its input being complete (the time its last datagram reached the host); a
// frame that would leave later is dropped whole, and counted, so that the frames that do leave
// stay fresh and the CPU goes to them.
//
// The bound is three frame periods (the target the speed issue sets), or, when reading, physics
// and pacing alone take longer (a frame's physics near or over a period, a pacing margin set
// above one, a slow machine's input thread), what a frame processed the moment the input thread
// handed it on would take (its physics at the mean), plus a quarter of a period: then a frame is
// dropped only for having waited, never for the work being slow or varying, so a slow sensor
// still sends every frame it can. The input thread's reading counts as the frame's own work up
// to one period; more is a backlog (the socket's buffer filling), which counts as waiting. And a
// sensor that has sent nothing for thirty periods has its next frame let through whatever the
// prediction, so that no estimate, setting or machine can silence it.
//
// The prediction replays the sending thread's own rule (PacingSchedule) from where its schedule
// stands: on the schedule, a frame leaves a period after its first packet is due; late, it
// catches up; too late or jumped, its schedule starts afresh.
//
// Pure arithmetic on seconds of one monotonic clock, so that it is tested without threads.
#include <algorithm>
#include <optional>

#include "lidaremu/daemon/runtime/pacing_schedule.hpp"

namespace lidaremu::daemon {

class FrameAdmission {
 public:
  static constexpr double kFreshPeriods = 3.0;
  // How long a frame may have waited when its work alone fills the bound: a frame queued behind
  // another's physics is over. (Half a period let a frame whose physics took 0.6 of one leave
  // 3.1 periods after its input, by design: docs/performance.md, Overload.)
  static constexpr double kWaitPeriods = 0.25;
  // The input thread's reading of a frame, counted as its own work up to this many periods.
  static constexpr double kInputLagPeriods = 1.0;
  // A sensor silent this many periods has its next frame admitted (it re-measures the physics).
  static constexpr double kProbeAfterPeriods = 30.0;
  // How much earlier than predicted the sender may take a frame up (its wake-ups, its catch-ups).
  static constexpr double kTakeUpUncertaintyS = 0.005;
  // Weight of the newest physics time in the running estimate and its running deviation.
  static constexpr double kEstimateWeight = 0.3;
  // How many running deviations above the mean the prediction takes the physics to be.
  static constexpr double kSpreads = 2.0;

  // packet_gap_s: the sensor's data packet period (the sender's rule follows on by one).
  FrameAdmission(double frame_period_s, double pacing_margin_s, double packet_gap_s = 0)
      : rule_{.frame_period_s = frame_period_s,
              .margin_s = pacing_margin_s,
              .packet_gap_s = packet_gap_s} {}

  // When the last packet of a frame that becomes ready for the physics at now_s would leave.
  // first_packet_due_s: when the sender's schedule has the frame's first packet (none before the
  // sender has sent anything, or when its schedule is unknown).
  [[nodiscard]] double predicted_last_packet_s(double now_s,
                                               std::optional<double> first_packet_due_s) const;
  // Whether a frame whose input was complete at input_done_s, and which the input thread handed
  // on input_lag_s later, goes through the physics; a frame refused is the caller's to drop.
  bool admit(double now_s, double input_done_s, double input_lag_s,
             std::optional<double> first_packet_due_s);
  // Whether the last frame admitted was let through for the silence alone (predicted late).
  [[nodiscard]] bool last_was_probe() const { return last_was_probe_; }
  // An admitted frame judged again once complete and through its physics (physics_s: what
  // that took, counted as its own work like the estimate): whether its last packet, handed to
  // the sender at now_s, still leaves within the bound of its input. A frame admitted while
  // arriving was admitted on a prediction of its arrival; any frame's physics may have run past
  // its slow side. When not, it is the caller's to drop, its admission is undone (the silence
  // that lets a frame through counts on from before it), and the estimate learns its physics.
  bool still_in_time(double now_s, double input_done_s, double physics_s,
                     std::optional<double> first_packet_due_s);
  // An admitted frame was processed in `seconds` and its packets handed to the sender at now_s:
  // the estimate learns, and the sender is busy until the frame's last packet leaves.
  void processed(double seconds, double now_s, std::optional<double> first_packet_due_s);

  // Where the last processed frame's first packet is due in the replay, less the due it was given:
  // not 0 where the sender's schedule will start afresh for it (ScheduleOutlook).
  [[nodiscard]] double replay_shift_s() const { return replay_shift_s_; }
  [[nodiscard]] double processing_estimate_s() const { return estimate_s_; }
  // The running mean deviation of the physics times from the estimate.
  [[nodiscard]] double processing_spread_s() const { return spread_s_; }
  // How old a frame the input thread took input_lag_s to hand on may be when its last packet
  // leaves (it follows the physics estimate).
  [[nodiscard]] double budget_s(double input_lag_s = 0) const {
    const double own_work_s = std::clamp(input_lag_s, 0.0, kInputLagPeriods * rule_.frame_period_s);
    return std::max(
        kFreshPeriods * rule_.frame_period_s,
        own_work_s + estimate_s_ + rule_.margin_s + (1 + kWaitPeriods) * rule_.frame_period_s);
  }

 private:
  // When the first and the last packet of a frame ready at ready_s leave.
  struct Leaving {
    double first_s;
    double last_s;
  };
  [[nodiscard]] Leaving leaving(double ready_s, std::optional<double> first_packet_due_s) const;
  // The estimate and its spread follow a frame's physics time.
  void learn(double seconds);
  PacingSchedule::Rule rule_;
  double estimate_s_ = 0;
  double spread_s_ = 0;  // processing_spread_s()
  bool estimated_ = false;
  double sender_busy_until_s_ = 0;         // predicted time the last packet handed on leaves
  double replay_shift_s_ = 0;              // replay_shift_s()
  std::optional<double> silent_since_s_;   // the last admission, or the first frame offered
  std::optional<double> silent_before_s_;  // silent_since_s_ before the last admission
  bool last_was_probe_ = false;
};

}  // namespace lidaremu::daemon
