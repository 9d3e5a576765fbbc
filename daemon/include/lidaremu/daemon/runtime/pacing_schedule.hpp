#pragma once
// When each packet leaves: one rule, followed by the sending thread packet by packet
// (sensor_emission.cpp) and replayed by the admission to predict when a frame would leave
// (frame_admission.cpp), so that the two cannot disagree.
//
// A packet is due at its sensor time on a schedule tied to the wall clock, and waits for it.
// - Late by more than kCatchUpAfterS (the sending thread held off the CPU, a frame's physics
//   finished late), the packets from it on leave kCatchUpRate times as fast as the sensor's
//   pace until they are back on the schedule. A stall then costs its own length once: a fresh
//   schedule a margin later (the rule before this one) aged every later frame by the stall plus
//   the margin, close to the admission's bound, which then dropped frames of a sensor that
//   merely lost the CPU for 60 ms. Catching up at twice the pace keeps a burst within what a
//   driver's socket buffer takes (a VLS-128 in dual mode: 12 packets a millisecond at most).
// - Late by more than kCatchUpPeriods frame periods, it is no longer worth catching up (the
//   frames would leave older than the admission's three periods): the schedule starts afresh,
//   the margin ahead, and the margin absorbs the physics' jitter from then on.
// - Due further ahead than the margin plus a frame period (its sensor time jumped: frames
//   dropped, a simulation clock skipping), it is not waited for: it follows the packet before at
//   once if that one left on time (as a sensor streams on), else the margin ahead.
// - After a gap in the stream (the packet before left over kStreamingSlackS ago: frames dropped,
//   the engine paused), due further ahead than the margin, it starts afresh the margin ahead. A
//   schedule that restarted while a frame was late keeps that lag; its frames then left a margin
//   and the lag after their input, over the admission's bound, so the admission dropped every
//   one and the sensor sent only what its silence let through (4 VLS-128 dual overloading 2
//   cores: 11 of 91 frames out, against 40 for each of the others).
//
// Pure arithmetic on seconds of one monotonic clock, so that it is tested without threads.
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

namespace lidaremu::daemon {

class PacingSchedule {
 public:
  static constexpr double kCatchUpAfterS = 0.002;
  static constexpr double kCatchUpRate = 2.0;
  static constexpr double kCatchUpPeriods = 1.5;
  // The packet before left "on time" when due no more than this before the one now taken.
  static constexpr double kStreamingSlackS = 0.050;

  struct Rule {
    double frame_period_s = 0.1;
    double margin_s = 0.1;      // how far ahead a fresh schedule starts
    double packet_gap_s = 0.0;  // the sensor's data packet period (following on after a jump)
  };
  enum class Step : std::uint8_t {
    kOnSchedule,     // waits for its time (or is late by less than kCatchUpAfterS)
    kCatchingUp,     // leaves on the catch-up line
    kCatchUpBegins,  // late: a catch-up begins with it
    kStarted,        // the first packet: the schedule starts the margin ahead
    kRestarted,      // the schedule starts afresh (too late to catch up, or jumped)
  };
  struct Due {
    double at_s;
    Step step;
  };

  explicit PacingSchedule(Rule rule) : rule_(rule) {}

  // When the packet of sensor time sensor_time_s, taken by the sender at now_s, leaves.
  Due next(double now_s, double sensor_time_s);
  // Wall time less sensor time on the schedule; none before the first packet.
  [[nodiscard]] std::optional<double> offset_s() const { return offset_s_; }
  // Takes up a schedule known from outside (the admission replaying the sender's): sensor time
  // s is due at s + offset_s, and the packet before left at previous_s.
  void follow(double offset_s, double previous_s) {
    offset_s_ = offset_s;
    previous_s_ = previous_s;
    catch_up_.reset();
  }

 private:
  Due restart(double at_s, double sensor_time_s, Step step);

  struct Line {
    double wall_s;
    double sensor_s;
  };
  Rule rule_;
  std::optional<double> offset_s_;
  std::optional<Line> catch_up_;
  double previous_s_ = -std::numeric_limits<double>::infinity();
};

// Where a sensor's schedule stands for the admission of its next frame. The sending thread
// publishes its schedule with the frame it is on; the admission's replay of each frame it lets
// through may move the schedule on (a frame due further ahead than the rule waits for starts it
// afresh), and until the sender takes that frame up, the replay's schedule is the truer one. Read
// from the sender alone, the admission of a sensor fed at twice real time predicted a fresh
// schedule for every frame queued behind another (the sender had not yet restarted for the one
// before), let them through, and the sender, restarted by then, held each for its due time:
// frames left 7-10 periods old where the bound is three.
class ScheduleOutlook {
 public:
  // Sending thread: it takes up a packet of frame `sequence`, its schedule at offset_s (wall
  // time less sensor time).
  void sender_at(std::uint64_t sequence, double offset_s) {
    sender_offset_s_.store(offset_s, std::memory_order_relaxed);
    sender_sequence_.store(sequence, std::memory_order_release);
  }
  // Processing thread: the replay of frame `sequence` leaves the schedule at offset_s.
  void planned(std::uint64_t sequence, double offset_s) {
    planned_sequence_ = sequence;
    planned_offset_s_ = offset_s;
  }
  // Processing thread: the offset the next frame's first packet will be due on; none before the
  // sender's first packet. (The sender's two values may be a packet apart: a prediction.)
  [[nodiscard]] std::optional<double> offset_s() const {
    const std::uint64_t sender_sequence = sender_sequence_.load(std::memory_order_acquire);
    if (sender_sequence == 0) return std::nullopt;
    if (planned_sequence_ > sender_sequence) return planned_offset_s_;
    return sender_offset_s_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t> sender_sequence_{0};  // frame sequences start at 1
  std::atomic<double> sender_offset_s_{0};
  std::uint64_t planned_sequence_ = 0;
  double planned_offset_s_ = 0;
};

}  // namespace lidaremu::daemon
