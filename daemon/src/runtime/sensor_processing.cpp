#include <spdlog/spdlog.h>
#include <tbb/blocked_range.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

#include "lidaremu/core/parallel_blocks.hpp"
#include "lidaremu/daemon/runtime/physics_gate.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "sensor_runtime_detail.hpp"

// Frames through the physics and the encoder on the processing thread, into the packet queue.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using runtime_detail::steady_s;
using runtime_detail::unix_now_s;
using runtime_detail::worth_logging;

namespace {
// CPU time of the calling thread: the encoding's own work, without its waits for the sender.
std::int64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

std::uint64_t elapsed_ns(Clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count());
}
}  // namespace

class SensorRuntime::QueueSink final : public core::PacketSink {
 public:
  explicit QueueSink(SensorRuntime& owner) : owner_(owner) {}
  // Of the frame being encoded: its sequence, and when its input was complete (0 until then).
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    // Muted (a reinitialisation): nothing more is queued, so the sender has nothing to wake for.
    if (owner_.muted_.load(std::memory_order_acquire)) return;
    const PacketTag tag{channel, sensor_time_s, frame_sequence, frame_input_done_ns};
    if (!owner_.packets_->put(bytes, tag)) {
      if (worth_logging(++owner_.counters_.packets_too_large)) {
        spdlog::error(
            "sensor {}: a {}-byte packet does not fit the {}-byte packet slots; "
            "dropped ({} so far): please report this",
            owner_.settings_.name, bytes.size(), owner_.packets_->slot_bytes(),
            owner_.counters_.packets_too_large.load());
      }
    }
  }

 private:
  SensorRuntime& owner_;
};

// Packets to the emitter, and the data packets also into a live-view frame.
class SensorRuntime::TeeSink final : public core::PacketSink {
 public:
  TeeSink(core::PacketSink& next, LiveFrame& frame) : next_(next), frame_(frame) {}
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    if (channel == core::PacketChannel::kData) {
      frame_.bytes.insert(frame_.bytes.end(), bytes.begin(), bytes.end());
      frame_.packet_ends.push_back(frame_.bytes.size());
    }
    next_.on_packet(channel, bytes, sensor_time_s);
  }

 private:
  core::PacketSink& next_;
  LiveFrame& frame_;
};

double SensorRuntime::next_frame_start(const core::FrameHits& frame) const {
  const double period = settings_.pattern.frame_period_s;
  if (settings_.clock == ClockSource::kSim) {
    return frame.has_sim_time ? frame.sim_time_ns * 1e-9
                              : (last_frame_start_ ? *last_frame_start_ + period : 0.0);
  }
  // UNIX time; the Ouster encoder turns it into its timestamp mode's clock.
  return wall_clock_.next_start(unix_now_s(), frame.input_begun_ns);
}

double SensorRuntime::frame_start_time(const core::FrameHits& frame) {
  last_frame_start_ = next_frame_start(frame);
  wall_clock_.started(*last_frame_start_, frame.input_begun_ns);
  return *last_frame_start_;
}

std::optional<double> SensorRuntime::first_packet_due_s(double sensor_time_s) const {
  const std::optional<double> offset = schedule_outlook_.offset_s();
  if (!offset) return std::nullopt;
  return sensor_time_s + *offset;
}

namespace {
double seconds_of(std::int64_t steady_ns) {
  return steady_s(Clock::time_point{std::chrono::nanoseconds(steady_ns)});
}
}  // namespace

double SensorRuntime::frame_deadline_s(const core::FrameHits& frame, bool complete) const {
  // Before a first complete frame, one arriving is taken to span its period, as an engine at
  // real time sends it: a new sensor's frames (a reinitialisation storm makes one a millisecond)
  // must not all look due a period early and go before everyone's.
  const double arrival_s =
      arrival_estimate_s_ > 0 ? arrival_estimate_s_ : settings_.pattern.frame_period_s;
  const double input_done =
      complete ? seconds_of(frame.input_done_ns) : seconds_of(frame.input_begun_ns) + arrival_s;
  const double input_lag = complete ? seconds_of(frame.handed_on_ns) - input_done : 0.0;
  return input_done + admission_.budget_s(input_lag);
}

void SensorRuntime::record_outcome(bool delivered, std::uint64_t frames) {
  share_.record(delivered, frames);
  counters_.frame_share_permille.store(
      static_cast<std::uint64_t>(std::lround(share_.share() * 1e3)), std::memory_order_relaxed);
}

void SensorRuntime::record_input_drops() {
  // The input thread counts only frames_dropped; the late ones are this thread's own.
  const std::uint64_t dropped_by_input =
      counters_.frames_dropped.load() - counters_.frames_dropped_late.load();
  if (dropped_by_input > input_drops_recorded_) {
    record_outcome(false, dropped_by_input - input_drops_recorded_);
    input_drops_recorded_ = dropped_by_input;
  }
}

bool SensorRuntime::admit_in_time(const core::FrameHits& frame, bool complete,
                                  const PhysicsGate::Commitment& commitment) {
  if (input_stopping_.load(std::memory_order_acquire)) return true;  // the stop: all accepted
  // The physics can start once the frames admitted before it are through theirs (they go
  // first), and, for a frame still arriving, once its input is complete: its arrival takes as
  // long as the last complete frame's did (from its first datagram to its last).
  const double steady_now = steady_s(Clock::now());
  const auto ready_s = [&](double free_s) {
    return complete ? free_s
                    : std::max(free_s, seconds_of(frame.input_begun_ns) + arrival_estimate_s_);
  };
  const double now = ready_s(steady_now + PhysicsGate::shared().work_ahead_s(commitment.ticket()));
  const double input_done = complete ? seconds_of(frame.input_done_ns) : now;
  const double input_lag = complete ? seconds_of(frame.handed_on_ns) - input_done : 0.0;
  const auto due = first_packet_due_s(next_frame_start(frame));
  if (admission_.admit(now, input_done, input_lag, due)) return true;
  record_outcome(false);
  ++counters_.frames_dropped;
  ++counters_.frames_dropped_late;
  if (worth_logging(counters_.frames_dropped_late)) {
    spdlog::warn(
        "sensor {}: processing is behind real time; dropped frame {} before its physics: it "
        "would leave {:.0f} ms after its input, over the {:.0f} ms a frame may age ({} so far)",
        settings_.name, frame.frame_number,
        (admission_.predicted_last_packet_s(now, due) - input_done) * 1e3,
        admission_.budget_s(input_lag) * 1e3, counters_.frames_dropped_late.load());
  }
  return false;
}

bool SensorRuntime::still_in_time(const core::FrameHits& frame, std::uint64_t physics_ns) {
  if (input_stopping_.load(std::memory_order_acquire)) return true;  // the stop: all accepted
  const double now = steady_s(Clock::now());
  const double input_done =
      steady_s(Clock::time_point{std::chrono::nanoseconds(frame.input_done_ns)});
  const auto due = first_packet_due_s(next_frame_start(frame));
  const double predicted_physics_ms =
      (admission_.processing_estimate_s() +
       FrameAdmission::kSpreads * admission_.processing_spread_s()) *
      1e3;
  if (admission_.still_in_time(now, input_done, static_cast<double>(physics_ns) * 1e-9, due)) {
    return true;
  }
  ++counters_.frames_dropped;
  ++counters_.frames_dropped_late;
  ++counters_.frames_dropped_stale;
  record_outcome(false);
  if (worth_logging(counters_.frames_dropped_late)) {
    spdlog::warn(
        "sensor {}: processing is behind real time; dropped frame {} after its physics ({:.0f} "
        "ms, {:.0f} ms predicted): its input was complete {:.0f} ms ago, and its last packet "
        "would leave over the bound a frame may age ({} so far)",
        settings_.name, frame.frame_number, static_cast<double>(physics_ns) * 1e-6,
        predicted_physics_ms, (now - input_done) * 1e3, counters_.frames_dropped_late.load());
  }
  return false;
}

void SensorRuntime::warm_up() {
  // Outside the physics arena: a reload warms the new pipelines while the running ones hold the
  // gate, and the arena keeps a single slot for a thread from outside (the gate's holder).
  pipeline_.warm_up({static_cast<std::uint32_t>(settings_.pattern.columns_per_frame),
                     static_cast<std::uint16_t>(settings_.model->channels)});
}

void SensorRuntime::process_loop() {
  warm_up();  // at once if start-up did it
  QueueSink sink(*this);
  const bool realtime = settings_.pace == Pace::kRealtime;
  for (;;) {
    StreamedFrame* frame = nullptr;
    ready_frames_.pop(frame);
    if (!frame) break;
    // Muted: its packets would be discarded; no physics for them either.
    if (muted_.load(std::memory_order_acquire)) {
      free_frames_.push(frame);
      continue;
    }
    // In real time a frame leaves only if it can still leave fresh: one that waited behind
    // others, or that the sender could not carry in time, is dropped whole before its physics.
    bool judge_after_physics = false;
    // The frame's place in line for the physics, by its deadline, kept through all its steps.
    record_input_drops();
    PhysicsGate& gate = PhysicsGate::shared();
    PhysicsGate::Commitment commitment(
        gate, gate.draw_ticket(frame_deadline_s(frame->hits, frame->progress().complete) -
                               share_.lead_s()));
    gate_wait_ns_ = 0;
    // An admitted frame goes on into its physics under the pass it was admitted with: released
    // in between, a frame admitted after it could take the gate while its thread was off the
    // CPU for a moment, and run its whole step first (under overload, 50-80 ms a time).
    std::optional<PhysicsGate::Pass> held;
    if (realtime) {
      const auto asked = Clock::now();
      held.emplace(gate, commitment.ticket());
      gate_wait_ns_ += elapsed_ns(asked);
      const bool complete = frame->progress().complete;
      if (!admit_in_time(frame->hits, complete, commitment)) {
        held.reset();
        free_frames_.push(frame);  // the input may still be filling it: it refills it after
        continue;
      }
      commitment.admit(admission_.processing_estimate_s());
      // Every admitted frame is judged again once complete and through its physics: one
      // admitted while arriving was admitted on a prediction of its arrival, and any frame's
      // physics may run past its slow side (other sensors' input and the engine's senders share
      // the cores). One let through for the sensor's silence (the probe) goes through whatever
      // it predicts.
      judge_after_physics = !admission_.last_was_probe();
    }
    process_frame(*frame, sink, commitment, held, judge_after_physics);  // hands it back
  }
  frames_ended_ = true;
  // What the encoder held for the next frame leaves now, as a frame of its own: the last frame's
  // age is not the time the stream took to stop.
  sink.frame_sequence = ++frames_begun_;
  sink.frame_input_done_ns = 0;
  encoder_->flush(sink);
  packets_->end();
}

void SensorRuntime::convert_pending(StreamedFrame& frame, std::uint32_t& converted) {
  const PendingBatches& pending = frame.pending;
  const std::uint32_t appended = pending.count();
  if (appended == converted) return;
  // Each batch writes only the beams of the columns it brought first, and its own row counts:
  // batches convert at once without touching each other's, and the hits are the same whichever
  // thread converts.
  core::parallel_blocks(
      tbb::blocked_range<std::uint32_t>(converted, appended, 1), &frame,
      [&](const tbb::blocked_range<std::uint32_t>& range) {
        for (std::uint32_t b = range.begin(); b != range.end(); ++b) {
          protocol::BatchView batch;
          // Checked whole when it arrived: decoding it again finds its parts.
          const bool intact =
              protocol::decode_hit_batch(pending.batch(b), batch) == protocol::BatchError::kNone;
          batch_rows_[b] =
              intact ? protocol::store_batch_rows(batch, settings_.engine, materials_, frame.hits,
                                                  {pending.first_copy_of(), b})
                     : protocol::RowCounts{};
        }
      });
  protocol::RowCounts rows;
  for (std::uint32_t b = converted; b < appended; ++b) rows += batch_rows_[b];
  account_rows(rows, frame.hits.frame_number);
  converted = appended;
}

void SensorRuntime::process_frame(StreamedFrame& frame, QueueSink& sink,
                                  PhysicsGate::Commitment& commitment,
                                  std::optional<PhysicsGate::Pass>& held,
                                  bool judge_after_physics) {
  const core::FrameHits& hits = frame.hits;
  const std::uint32_t columns = hits.shape.columns;
  // What the input thread wrote before handing the frame on: its number, weather, pose and
  // simulation time (from its first batch).
  std::uint64_t physics_ns = 0;
  // The physics under the gate, held from one step to the next until the thread leaves the
  // physics (to encode, to wait for columns, done): its steps are not interleaved with a later
  // frame's.
  const auto timed_physics = [&](auto&& work) {
    if (!held) {
      const auto asked = Clock::now();
      held.emplace(PhysicsGate::shared(), commitment.ticket());
      gate_wait_ns_ += elapsed_ns(asked);
    }
    const auto begin = Clock::now();
    core::execute_in(physics_arena(), &returns_, work);
    const auto step_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begin);
    physics_ns += static_cast<std::uint64_t>(step_ns.count());
    commitment.spend(std::chrono::duration<double>(step_ns).count());
  };
  timed_physics([&] { pipeline_.begin_frame(hits, returns_); });
  // The output starts with the first final columns: with blooming in the chain, once the frame
  // is complete (its clock reading then, as a frame processed whole would take it).
  double start = 0;
  LiveFrame* live = nullptr;
  std::optional<TeeSink> tee;
  core::PacketSink* out = &sink;
  const auto begin_output = [&] {
    start = frame_start_time(hits);
    if (hits.has_pose) {
      motion_.add(start + hits.pose_column * settings_.pattern.column_period_s,
                  hits.world_from_sensor);
      encoder_->set_motion(motion_.reading());
    }
    sink.frame_sequence = ++frames_begun_;
    sink.frame_input_done_ns = 0;
    live = tap_ ? tap_->begin_frame() : nullptr;
    if (live) out = &tee.emplace(sink, *live);
  };
  // Columns through the physics as they are published, a step of stream_step_ columns at a
  // time (or whatever is left once the frame is complete); packets out as their columns are
  // final.
  std::uint32_t taken = 0;
  std::uint32_t converted = 0;  // the frame's pending batches turned into hits
  std::uint32_t final_columns = 0;
  std::uint32_t encoded = 0;
  for (;;) {
    const StreamedFrame::Progress progress = frame.progress();
    const std::uint32_t ready = progress.complete ? columns : progress.ready;
    if (ready > taken && (progress.complete || ready >= taken + stream_step_)) {
      timed_physics([&] {
        convert_pending(frame, converted);
        final_columns = pipeline_.advance(hits, ready, returns_);
      });
      taken = ready;
    }
    const bool done = progress.complete && taken == columns;
    if (final_columns > encoded && encoded == 0) {
      // Judged again, now that its input is complete and its physics done, if nothing of it
      // has left yet: the physics may have run past its prediction, and the sender's schedule
      // may have moved on meanwhile.
      if (done && judge_after_physics && !still_in_time(hits, physics_ns)) {
        free_frames_.push(&frame);
        return;
      }
      begin_output();
    }
    if (done) {
      sink.frame_input_done_ns = hits.input_done_ns;
      counters_.frame_input.observe(static_cast<double>(hits.input_done_ns - hits.input_begun_ns) *
                                    1e-9);
      arrival_estimate_s_ = static_cast<double>(hits.input_done_ns - hits.input_begun_ns) * 1e-9;
      free_frames_.push(&frame);  // the input refills it at once: nothing below reads it
    }
    if (final_columns > encoded) {
      held.reset();  // the encoder may wait for the sender
      const std::int64_t cpu_before_ns = thread_cpu_ns();
      const PacketQueue::WakeBatch one_wake(*packets_);
      encoder_->encode_columns(returns_, start, final_columns, *out);
      counters_.encoding_cpu_ns += static_cast<std::uint64_t>(thread_cpu_ns() - cpu_before_ns);
      encoded = final_columns;
    }
    if (done) break;
    held.reset();
    if (!progress.complete) frame.wait_past(progress);
  }
  held.reset();
  if (live) tap_->submit(live, returns_);
  counters_.frame_gate_wait.observe(static_cast<double>(gate_wait_ns_) * 1e-9);
  store_max(counters_.processing_ns_max, physics_ns);
  counters_.processing.observe(static_cast<double>(physics_ns) * 1e-9);
  ++counters_.frames_processed;
  record_outcome(true);
  if (settings_.pace == Pace::kRealtime) {
    // Physics time only: the encoding's own share is small, and its waits for the sender
    // are the sender's schedule, which the admission follows separately.
    const std::optional<double> due = first_packet_due_s(start);
    admission_.processed(static_cast<double>(physics_ns) * 1e-9, steady_s(Clock::now()), due);
    if (due) {
      schedule_outlook_.planned(sink.frame_sequence, *due - start + admission_.replay_shift_s());
    }
  }
}

}  // namespace lidaremu::daemon
