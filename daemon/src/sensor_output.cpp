#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "lidaremu/daemon/physics_gate.hpp"
#include "lidaremu/daemon/punctual_thread.hpp"
#include "lidaremu/daemon/sensor_runtime.hpp"
#include "sensor_runtime_detail.hpp"

// Frames through the physics and the encoder on the processing thread; packets onto the wire at
// the sensor's pace on the sending thread.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using runtime_detail::resolve;
using runtime_detail::unix_now_s;
using runtime_detail::worth_logging;

class SensorRuntime::QueueSink final : public core::PacketSink {
 public:
  explicit QueueSink(SensorRuntime& owner) : owner_(owner) {}
  // Of the frame being encoded: its sequence, and when its input was complete (0 until then).
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    PacketSlot* slot = nullptr;
    owner_.free_slots_.pop(slot);  // blocks while the emitter is behind: back-pressure
    std::copy(bytes.begin(), bytes.end(), slot->bytes.begin());
    slot->size = bytes.size();
    slot->sensor_time_s = sensor_time_s;
    slot->frame_sequence = frame_sequence;
    slot->frame_input_done_ns = frame_input_done_ns;
    slot->channel = channel;
    owner_.ready_slots_.push(slot);
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
  const double now = unix_now_s();
  const double start = last_frame_start_ ? *last_frame_start_ + period : now;
  return std::fabs(start - now) > 1.0 ? now : start;  // input paused or raced ahead: rejoin
}

double SensorRuntime::frame_start_time(const core::FrameHits& frame) {
  last_frame_start_ = next_frame_start(frame);
  return *last_frame_start_;
}

namespace {
// A socket packets leave from: the sensor's own address (the newest Ouster client drops any
// other), and `port` when the family's drivers check it (Livox), else any port.
asio::ip::udp::socket open_sender(asio::io_context& io, const SensorSettings& settings,
                                  std::uint16_t port) {
  asio::ip::udp::socket socket(io);
  socket.open(asio::ip::udp::v4());
  socket.set_option(asio::socket_base::send_buffer_size(4 << 20));
  boost::system::error_code ec;
  // A reload or reinitialisation starts the new pipeline while the old one still sends its last
  // frames from the same port: both may hold it (nothing is received on it).
  if (port != 0) socket.set_option(asio::socket_base::reuse_address(true), ec);
  if (!settings.sensor_ip.empty()) {
    socket.bind({asio::ip::make_address_v4(settings.sensor_ip, ec), port}, ec);
    if (ec) {
      spdlog::error("sensor {}: cannot send from {}:{}: {}; packets leave from any address",
                    settings.name, settings.sensor_ip, port, ec.message());
    }
  }
  if (settings.sensor_ip.empty() || ec) {
    socket.bind({asio::ip::address_v4::any(), port}, ec);
    if (ec && port != 0) {
      spdlog::error("sensor {}: cannot send from port {}: {}; packets leave from any port",
                    settings.name, port, ec.message());
      socket.bind({asio::ip::address_v4::any(), 0}, ec);
    }
  }
  return socket;
}

// What a capture shows as the source: the bound address, or loopback when bound to any.
core::UdpAddress source_of(const asio::ip::udp::socket& socket) {
  boost::system::error_code ec;
  auto source = socket.local_endpoint(ec);
  if (source.address().is_unspecified()) source.address(asio::ip::address_v4::loopback());
  return {source.address().to_v4().to_uint(), source.port()};
}

double steady_s(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
}  // namespace

std::optional<double> SensorRuntime::first_packet_due_s(double sensor_time_s) const {
  const double offset = sender_clock_offset_s_.load(std::memory_order_relaxed);
  if (std::isnan(offset)) return std::nullopt;
  return sensor_time_s + offset;
}

bool SensorRuntime::admit_in_time(const core::FrameHits& frame, bool complete,
                                  double work_ahead_s) {
  if (input_stopping_.load(std::memory_order_acquire)) return true;  // the stop: all accepted
  const auto seconds_of = [](std::int64_t ns) {
    return steady_s(Clock::time_point{std::chrono::nanoseconds(ns)});
  };
  // The physics can start once the frames admitted before it are through theirs (they go
  // first), and, for a frame still arriving, once its input is complete: its arrival takes as
  // long as the last complete frame's did (from its first datagram to its last).
  const double free_s = steady_s(Clock::now()) + work_ahead_s;
  const double now =
      complete ? free_s : std::max(free_s, seconds_of(frame.input_begun_ns) + arrival_estimate_s_);
  const double input_done = complete ? seconds_of(frame.input_done_ns) : now;
  const double input_lag = complete ? seconds_of(frame.handed_on_ns) - input_done : 0.0;
  const auto due = first_packet_due_s(next_frame_start(frame));
  if (admission_.admit(now, input_done, input_lag, due)) return true;
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
  if (admission_.still_in_time(now, input_done, static_cast<double>(physics_ns) * 1e-9, due)) {
    return true;
  }
  ++counters_.frames_dropped;
  ++counters_.frames_dropped_late;
  if (worth_logging(counters_.frames_dropped_late)) {
    spdlog::warn(
        "sensor {}: processing is behind real time; dropped frame {} before sending it: its "
        "input was complete {:.0f} ms ago and the sender is behind ({} so far)",
        settings_.name, frame.frame_number, (now - input_done) * 1e3,
        counters_.frames_dropped_late.load());
  }
  return false;
}

void SensorRuntime::warm_up() {
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
    // In real time a frame leaves only if it can still leave fresh: one that waited behind
    // others, or that the sender could not carry in time, is dropped whole before its physics.
    bool judge_when_complete = false;
    // The frame's place in line for the physics, kept through all its steps.
    PhysicsGate& gate = PhysicsGate::shared();
    PhysicsGate::Commitment commitment(gate, gate.draw_ticket());
    if (realtime) {
      PhysicsGate::Pass pass(gate, commitment.ticket());
      const bool complete = frame->progress().complete;
      if (!admit_in_time(frame->hits, complete, gate.work_ahead_s(commitment.ticket()))) {
        pass.release();
        free_frames_.push(frame);  // the input may still be filling it: it refills it after
        continue;
      }
      commitment.expect(admission_.processing_estimate_s());
      // A frame admitted on a prediction while it arrives is judged again once complete; one
      // let through for the sensor's silence (the probe) goes through whatever it predicts.
      judge_when_complete = !complete && !admission_.last_was_probe();
    }
    process_frame(*frame, sink, commitment, judge_when_complete);  // hands it back to the input
  }
  frames_ended_ = true;
  encoder_->flush(sink);
  ready_slots_.push(nullptr);
}

void SensorRuntime::process_frame(StreamedFrame& frame, QueueSink& sink,
                                  PhysicsGate::Commitment& commitment, bool judge_when_complete) {
  const core::FrameHits& hits = frame.hits;
  const std::uint32_t columns = hits.shape.columns;
  // What the input thread wrote before handing the frame on: its number, weather, pose and
  // simulation time (from its first batch).
  std::uint64_t physics_ns = 0;
  const auto timed_physics = [&](auto&& work) {
    PhysicsGate::Pass pass(PhysicsGate::shared(), commitment.ticket());
    const auto begin = Clock::now();
    work();
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
  std::uint32_t final_columns = 0;
  std::uint32_t encoded = 0;
  for (;;) {
    const StreamedFrame::Progress progress = frame.progress();
    const std::uint32_t ready = progress.complete ? columns : progress.ready;
    if (ready > taken && (progress.complete || ready >= taken + stream_step_)) {
      timed_physics([&] { final_columns = pipeline_.advance(hits, ready, returns_); });
      taken = ready;
    }
    const bool done = progress.complete && taken == columns;
    if (final_columns > encoded && encoded == 0) {
      // A frame admitted while arriving is judged again, now that its input is complete, if
      // nothing of it has left yet: the sender's schedule may have moved on meanwhile.
      if (done && judge_when_complete && !still_in_time(hits, physics_ns)) {
        free_frames_.push(&frame);
        return;
      }
      begin_output();
    }
    if (done) {
      sink.frame_input_done_ns = hits.input_done_ns;
      arrival_estimate_s_ = static_cast<double>(hits.input_done_ns - hits.input_begun_ns) * 1e-9;
      free_frames_.push(&frame);  // the input refills it at once: nothing below reads it
    }
    if (final_columns > encoded) {
      encoder_->encode_columns(returns_, start, final_columns, *out);
      encoded = final_columns;
    }
    if (done) break;
    if (!progress.complete) frame.wait_past(progress);
  }
  if (live) tap_->submit(live, returns_);
  store_max(counters_.processing_ns_max, physics_ns);
  counters_.processing.observe(static_cast<double>(physics_ns) * 1e-9);
  ++counters_.frames_processed;
  if (settings_.pace == Pace::kRealtime) {
    // Physics time only: the encoding's own share is small, and its waits for the sender
    // are the sender's schedule, which the admission follows separately.
    admission_.processed(static_cast<double>(physics_ns) * 1e-9, steady_s(Clock::now()),
                         first_packet_due_s(start));
  }
}

void SensorRuntime::emit_loop() {
  if (settings_.pace == Pace::kRealtime && !make_thread_punctual()) {
    spdlog::info(
        "sensor {}: pacing runs in the normal scheduling class (no permission for real-time "
        "priority): packets may leave up to milliseconds late when the CPU is saturated",
        settings_.name);
  }
  asio::io_context local_io;  // synchronous sends only; no handlers run here
  auto data_socket = open_sender(local_io, settings_, settings_.data_source_port);
  // Telemetry shares the data socket unless the family sends it from a port of its own.
  std::optional<asio::ip::udp::socket> own_telemetry_socket;
  if (settings_.telemetry_source_port != settings_.data_source_port) {
    own_telemetry_socket.emplace(open_sender(local_io, settings_, settings_.telemetry_source_port));
  }
  auto& telemetry_socket = own_telemetry_socket ? *own_telemetry_socket : data_socket;
  const core::UdpAddress data_source = source_of(data_socket);
  const core::UdpAddress telemetry_source = source_of(telemetry_socket);
  const auto data_to = resolve(settings_.out, "output address");
  const auto telemetry_to = resolve(settings_.telemetry, "telemetry address");
  boost::system::error_code ec;
  std::optional<std::pair<Clock::time_point, double>> anchor;  // (wall, sensor time)
  Clock::time_point previous_deadline{};                       // of the packet before
  constexpr auto kResyncSlack = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(FrameAdmission::kResyncSlackS));
  const auto packet_gap = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(data_packet_period_s_));
  const auto max_lead = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(settings_.pacing_margin() + settings_.pattern.frame_period_s));
  // The frame whose packets are leaving, and when its latest one left: its age is known once
  // the next frame's first packet comes (or the stream ends).
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
  Clock::time_point frame_last_sent{};
  const auto observe_frame_age = [&] {
    if (frame_input_done_ns == 0) return;
    const Clock::time_point input_done{std::chrono::nanoseconds(frame_input_done_ns)};
    counters_.frame_age.observe(
        std::chrono::duration<double>(frame_last_sent - input_done).count());
  };
  for (;;) {
    PacketSlot* slot = nullptr;
    ready_slots_.pop(slot);
    if (!slot) {
      slots_ended_ = true;
      observe_frame_age();
      break;
    }
    if (settings_.pace == Pace::kRealtime) {
      const auto now = Clock::now();
      auto deadline = now;
      if (anchor) {
        deadline = anchor->first +
                   std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(slot->sensor_time_s - anchor->second));
      }
      // Out of step by more than a moment (input stalled, or time jumped): start afresh. In
      // step, a packet is never due further ahead than the margin plus its frame's own span;
      // further means the sensor clock jumped forward (a frame start caught up with the wall
      // clock after a lag, a simulation clock skipping, frames dropped): waiting for it would
      // hold the frame back for nothing, and age everything after it. If the packets before
      // were leaving on time, it follows them at once, as a sensor streams on (FrameAdmission
      // predicts this rule); after a stall, and at the first packet, the margin ahead absorbs
      // the physics' jitter from then on.
      const bool behind = deadline < now - kResyncSlack;
      const bool jumped = deadline > now + max_lead;
      if (!anchor || behind || jumped) {
        if (anchor) ++counters_.pacing_resyncs;
        const bool streaming = anchor && jumped && previous_deadline >= now - kResyncSlack;
        deadline = streaming ? std::max(now, previous_deadline + packet_gap)
                             : now + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(settings_.pacing_margin()));
        anchor.emplace(deadline, slot->sensor_time_s);
        sender_clock_offset_s_.store(steady_s(deadline) - slot->sensor_time_s,
                                     std::memory_order_relaxed);
      }
      previous_deadline = deadline;
      std::this_thread::sleep_until(deadline);
      const auto late_ns = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - deadline).count());
      store_max(counters_.pacing_error_ns_max, late_ns);
      counters_.pacing_error.observe(static_cast<double>(late_ns) * 1e-9);
    }
    const bool data = slot->channel == core::PacketChannel::kData;
    const auto& to = data ? data_to : telemetry_to;
    (data ? data_socket : telemetry_socket)
        .send_to(asio::buffer(slot->bytes.data(), slot->size), to, 0, ec);
    if (!ec && output_lane_) {
      output_lane_->record(unix_now_s(), data ? data_source : telemetry_source,
                           {to.address().to_v4().to_uint(), to.port()},
                           std::span(slot->bytes.data(), slot->size));
    }
    if (ec) {
      ++counters_.send_errors;
    } else if (data) {
      ++counters_.packets_out;
      counters_.bytes_out += slot->size;
      if (slot->frame_sequence != frame_sequence) {
        observe_frame_age();
        frame_sequence = slot->frame_sequence;
        frame_input_done_ns = 0;
      }
      // Packets encoded while the frame was still arriving do not know when it was complete.
      if (slot->frame_input_done_ns != 0) frame_input_done_ns = slot->frame_input_done_ns;
      frame_last_sent = Clock::now();
    } else {
      ++counters_.telemetry_packets_out;
    }
    free_slots_.push(slot);
  }
}

}  // namespace lidaremu::daemon
