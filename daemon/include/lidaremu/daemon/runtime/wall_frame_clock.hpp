#pragma once
// When a frame starts on the wall clock (clock = "wall"): where the sensor's rotation is when
// the frame is sent.
//
// A real sensor spins on whether or not anyone reads it. When frames are not sent (dropped by
// the real-time admission under overload, never sent by an engine that paused or runs slower
// than the sensor), the next frame sent starts as many periods after the last one as its input
// began after that one's: the periods between are the frames the sensor scanned meanwhile.
// Chained one period per frame sent, as it was, a sensor that sent one frame in three stamped
// its frames ever further behind the wall clock (a period per frame dropped), its pacing saw
// every frame late and started its schedule afresh, and at a second behind the stamps jumped.
// Input arriving faster than the sensor spins (an engine ahead of real time) still moves a
// period a frame, and a start over a second from the wall clock (input paused, raced ahead)
// rejoins it.
//
// Pure arithmetic, so that it is tested without a daemon.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace lidaremu::daemon {

class WallFrameClock {
 public:
  static constexpr double kRejoinAfterS = 1.0;

  explicit WallFrameClock(double frame_period_s) : period_s_(frame_period_s) {}

  // The start (UNIX seconds) of a frame whose input began at input_begun_ns (steady clock),
  // sent at now_unix_s.
  [[nodiscard]] double next_start(double now_unix_s, std::int64_t input_begun_ns) const {
    if (!last_) return now_unix_s;
    const double since_s = static_cast<double>(input_begun_ns - last_->input_begun_ns) * 1e-9;
    const double periods = std::max(1.0, std::round(since_s / period_s_));
    const double start = last_->start_s + periods * period_s_;
    return std::fabs(start - now_unix_s) > kRejoinAfterS ? now_unix_s : start;
  }
  // The frame is sent, starting at start_s.
  void started(double start_s, std::int64_t input_begun_ns) {
    last_ = Last{start_s, input_begun_ns};
  }

 private:
  struct Last {
    double start_s;
    std::int64_t input_begun_ns;
  };
  double period_s_;
  std::optional<Last> last_;
};

}  // namespace lidaremu::daemon
