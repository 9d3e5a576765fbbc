#include "lidaremu/daemon/runtime/pacing_schedule.hpp"

#include <algorithm>

namespace lidaremu::daemon {

PacingSchedule::Due PacingSchedule::restart(double at_s, double sensor_time_s, Step step) {
  offset_s_ = at_s - sensor_time_s;
  catch_up_.reset();
  previous_s_ = at_s;
  return {at_s, step};
}

PacingSchedule::Due PacingSchedule::next(double now_s, double sensor_time_s) {
  if (!offset_s_) return restart(now_s + rule_.margin_s, sensor_time_s, Step::kStarted);
  const double scheduled_s = sensor_time_s + *offset_s_;
  const bool streaming = previous_s_ >= now_s - kStreamingSlackS;
  if (scheduled_s > now_s + rule_.margin_s + (streaming ? rule_.frame_period_s : 0.0)) {
    return restart(
        streaming ? std::max(now_s, previous_s_ + rule_.packet_gap_s) : now_s + rule_.margin_s,
        sensor_time_s, Step::kRestarted);
  }
  if (scheduled_s < now_s - kCatchUpPeriods * rule_.frame_period_s) {
    return restart(now_s + rule_.margin_s, sensor_time_s, Step::kRestarted);
  }
  if (catch_up_) {
    const double line_s = catch_up_->wall_s + (sensor_time_s - catch_up_->sensor_s) / kCatchUpRate;
    if (line_s > scheduled_s) {
      previous_s_ = line_s;
      return {line_s, Step::kCatchingUp};
    }
    catch_up_.reset();  // back on the schedule
  }
  if (scheduled_s < now_s - kCatchUpAfterS) {
    catch_up_ = Line{now_s, sensor_time_s};
    previous_s_ = now_s;
    return {now_s, Step::kCatchUpBegins};
  }
  previous_s_ = scheduled_s;
  return {scheduled_s, Step::kOnSchedule};
}

}  // namespace lidaremu::daemon
