#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <array>
#include <boost/asio/ip/address_v4.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "lidaremu/daemon/runtime/frame_order.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "sensor_runtime_detail.hpp"

// What the engine sends, on the sensor's input thread: datagrams received in batches, checked,
// counted and gathered into frames.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using runtime_detail::passes_log_mark;
using runtime_detail::unix_now_s;
using runtime_detail::worth_logging;

namespace {
std::int64_t ns_of(const timespec& t) {
  return std::int64_t{t.tv_sec} * 1'000'000'000 + std::int64_t{t.tv_nsec};
}

// The kernel stamps datagrams on the real-time clock; frames age on the steady clock. One
// reading of both per batch relates them (a wall-clock step between the datagram and the
// reading would misdate it by the step: the result is kept no later than now).
class ArrivalClock {
 public:
  ArrivalClock() {
    timespec steady{}, real{};
    ::clock_gettime(CLOCK_MONOTONIC, &steady);
    ::clock_gettime(CLOCK_REALTIME, &real);
    steady_now_ns_ = ns_of(steady);
    real_minus_steady_ns_ = ns_of(real) - steady_now_ns_;
  }
  // The datagram's arrival on the steady clock; now when the kernel gave no timestamp.
  [[nodiscard]] std::int64_t steady_ns(msghdr& header) const {
    for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
      timespec stamp{};
      std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
      return std::min(ns_of(stamp) - real_minus_steady_ns_, steady_now_ns_);
    }
    return steady_now_ns_;
  }

 private:
  std::int64_t steady_now_ns_ = 0;
  std::int64_t real_minus_steady_ns_ = 0;
};
}  // namespace

void SensorRuntime::input_loop() {
  const int fd = hits_socket_.native_handle();
  constexpr std::size_t kSlot = protocol::kMaxDatagram + 1;
  std::array<mmsghdr, kReceiveBatch> messages{};
  std::array<iovec, kReceiveBatch> vectors{};
  std::array<sockaddr_in, kReceiveBatch> senders{};
  // The kernel's receive timestamp of each datagram (SO_TIMESTAMPNS, set in start()).
  struct alignas(cmsghdr) ControlBuffer {
    std::array<char, CMSG_SPACE(sizeof(timespec))> bytes;
  };
  std::array<ControlBuffer, kReceiveBatch> controls{};
  for (int i = 0; i < kReceiveBatch; ++i) {
    vectors[i] = {&receive_buffers_[i * kSlot], kSlot};
    messages[i].msg_hdr.msg_iov = &vectors[i];
    messages[i].msg_hdr.msg_iovlen = 1;
    messages[i].msg_hdr.msg_name = &senders[i];
  }
  const auto idle = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(settings_.idle_timeout_s));
  std::array<pollfd, 2> watch{{{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}}};
  while (!input_stopping_.load(std::memory_order_acquire)) {
    // Asleep until a datagram, the stop, or (with a frame partly filled) the idle timeout.
    int timeout_ms = -1;
    if (current_ && current_->hits.columns_received > 0) {
      const auto left = last_batch_at_ + idle - Clock::now();
      timeout_ms = static_cast<int>(
          std::max<std::int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    }
    // Raw rows being located: receive more meanwhile if there are any, else store them first.
    const bool locating = raw_ && raw_->in_flight();
    if (locating) timeout_ms = 0;
    const int ready = ::poll(watch.data(), watch.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll on the hit socket: ") + std::strerror(errno));
    }
    if (locating && ready == 0) {
      flush_raw();
      continue;
    }
    // The engine went quiet (no batch for the idle timeout, whatever else arrives: an engine
    // may go on sending Control poses): what arrived is the frame. Never with raw rows still
    // being located: they arrived since, and may belong to the frame.
    if (!locating && current_ && current_->hits.columns_received > 0 &&
        Clock::now() - last_batch_at_ >= idle) {
      submit_current();
      if (raw_) raw_->assembler().reset();
    }
    // POLLERR too: reading takes a queued socket error off, or poll would report it forever.
    if (ready <= 0 || !(watch[0].revents & (POLLIN | POLLERR))) continue;
    for (int i = 0; i < kReceiveBatch; ++i) {
      messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      messages[i].msg_hdr.msg_control = controls[i].bytes.data();
      messages[i].msg_hdr.msg_controllen = controls[i].bytes.size();
    }
    const int received = ::recvmmsg(fd, messages.data(), kReceiveBatch, MSG_DONTWAIT, nullptr);
    // Nothing after all, a signal, or a queued socket error (ICMP), which the read took off.
    if (received < 0) continue;
    const ArrivalClock arrivals;
    for (int i = 0; i < received; ++i) {
      sender_ = {ntohl(senders[i].sin_addr.s_addr), ntohs(senders[i].sin_port)};
      datagram_arrival_ns_ = arrivals.steady_ns(messages[i].msg_hdr);
      on_datagram({&receive_buffers_[i * kSlot], messages[i].msg_len});
    }
    // The receive's raw rows on to the locating thread; the set before them stored.
    if (raw_) hand_over_raw();
    datagram_arrival_ns_ = 0;
  }
  if (raw_) flush_raw();  // everything taken is in before the stop submits the frame
}

std::string SensorRuntime::sender_text() const {
  return asio::ip::address_v4(sender_.ip).to_string() + ":" + std::to_string(sender_.port);
}

void SensorRuntime::on_datagram(std::span<const std::uint8_t> datagram) {
  const std::size_t size = datagram.size();
  ++counters_.datagrams_in;
  counters_.bytes_in += size;
  if (!settings_.allowed_senders.empty()) {
    const auto& allowed = settings_.allowed_senders;
    if (std::find(allowed.begin(), allowed.end(), sender_.ip) == allowed.end()) {
      if (worth_logging(++counters_.datagrams_refused_sender)) {
        spdlog::warn("sensor {}: datagram from {} refused: not on the allow-list ({} so far)",
                     settings_.name, asio::ip::address_v4(sender_.ip).to_string(),
                     counters_.datagrams_refused_sender.load());
      }
      return;
    }
  }
  if (recorders_.input) {
    // Everything that arrived, good or bad, with its arrival time: a replay reproduces the run.
    input_lane_->record(unix_now_s(), sender_, hits_address_,
                        datagram.first(std::min(size, protocol::kMaxDatagram)));
  }
  if (size > protocol::kMaxDatagram) {
    log_rejection(protocol::BatchError::kOversized);
    return;
  }
  if (protocol::identify(datagram) == protocol::MessageKind::kControl) {
    if (raw_) flush_raw();  // the rows before it go into the frames they would have
    on_control(datagram);
    return;
  }
  if (paused_.load(std::memory_order_relaxed)) {
    ++counters_.batches_while_paused;
    return;
  }
  if (raw_)
    on_raw(datagram);
  else
    on_framed(datagram);
  last_batch_at_ = Clock::now();
}

void SensorRuntime::log_rejection(protocol::BatchError e) {
  counters_.reject(e);
  const auto count = counters_.rejected[static_cast<std::size_t>(e)].load();
  if (worth_logging(count)) {
    spdlog::warn("sensor {}: datagram from {} rejected: {} ({} so far)", settings_.name,
                 sender_text(), protocol::to_string(e), count);
  }
}

void SensorRuntime::account_rows(const protocol::RowCounts& rows, std::uint32_t frame_number) {
  const auto rejected = [&] {
    return counters_.rows_non_finite.load() + counters_.rows_unknown_material.load() +
           counters_.rows_out_of_range.load();
  };
  const std::uint64_t before = rejected();
  counters_.add_rows(rows);
  if (rows.non_finite + rows.unknown_material + rows.out_of_range == 0) return;
  // Many rows at once: logged when the count passes 1, 2, 3, 10, 100, ...
  if (const std::uint64_t bad = rejected(); passes_log_mark(before, bad)) {
    spdlog::warn(
        "sensor {}: frame {}: dropped rows: {} non-finite, {} unknown material, {} absurd ({} so "
        "far)",
        settings_.name, frame_number, rows.non_finite, rows.unknown_material, rows.out_of_range,
        bad);
  }
}

void SensorRuntime::on_framed(std::span<const std::uint8_t> datagram) {
  protocol::BatchView batch;
  auto error = protocol::decode_hit_batch(datagram, batch);
  if (error == protocol::BatchError::kNone && batch.sensor_id != settings_.sensor_id) {
    error = protocol::BatchError::kUnknownSensor;
  }
  if (error == protocol::BatchError::kNone) {
    error = protocol::check_batch_shape(batch, settings_.pattern.columns_per_frame,
                                        static_cast<std::uint16_t>(settings_.model->channels));
  }
  if (error != protocol::BatchError::kNone) {
    log_rejection(error);
    return;
  }
  const std::optional<std::uint32_t> reference =
      current_ ? std::optional(current_->hits.frame_number) : last_submitted_frame_;
  if (reference) {
    const FrameOrder order = frame_order(batch.frame, *reference);
    if (order == FrameOrder::kStale || (order == FrameOrder::kSame && !current_)) {
      ++counters_.batches_stale;
      return;
    }
    if (order == FrameOrder::kResequence) {
      const auto count = ++counters_.frames_resequenced;
      if (worth_logging(count)) {
        spdlog::warn(
            "sensor {}: frame {} after frame {}: the engine renumbered its frames (or a "
            "stray batch); a new sequence starts ({} so far)",
            settings_.name, batch.frame, *reference, count);
      }
    }
    if (current_ && order != FrameOrder::kSame) submit_current();
  }
  if (!current_) {
    current_ = acquire_frame(batch.frame);
    // What the frame's physics and timestamps depend on comes with its first batch: the
    // processing thread starts on the frame then.
    const auto column_ns = static_cast<std::uint64_t>(
        std::llround(settings_.pattern.column_period_s * 1e9 * batch.first_column));
    current_->hits.sim_time_ns = batch.sim_time_ns > column_ns ? batch.sim_time_ns - column_ns : 0;
    current_->hits.has_sim_time = batch.sim_time_ns != 0;
  } else if (batch.first_column < current_ready_) {
    // Columns the physics has taken already: sent again (a retransmission, a duplicate).
    if (worth_logging(++counters_.batches_repeated)) {
      spdlog::warn(
          "sensor {}: frame {}: a batch repeats columns {}..{}, which the physics already took; "
          "ignored ({} so far)",
          settings_.name, batch.frame, batch.first_column,
          batch.first_column + batch.column_count - 1, counters_.batches_repeated.load());
    }
    return;
  }
  auto& frame = *current_;
  const std::uint32_t end_column = batch.first_column + batch.column_count;
  bool brings_new = false;
  for (std::uint32_t c = batch.first_column; c < end_column && !brings_new; ++c) {
    brings_new = frame.hits.column_received[c] == 0;
  }
  if (!brings_new) {
    // Every column of it is in already: the first copy stays (it may be converting now).
    if (worth_logging(++counters_.batches_repeated)) {
      spdlog::warn(
          "sensor {}: frame {}: a batch repeats columns {}..{}, which an earlier batch brought; "
          "ignored ({} so far)",
          settings_.name, batch.frame, batch.first_column, end_column - 1,
          counters_.batches_repeated.load());
    }
    return;
  }
  protocol::take_batch_frame_facts(batch, settings_.engine, frame.hits);
  // The rows are the processing thread's to convert, many batches at once; a batch the frame's
  // room cannot hold is converted here.
  if (!frame.pending.append(datagram, batch.first_column, batch.column_count)) {
    frame.pending.claim_converted(batch.first_column, batch.column_count);
    account_rows(protocol::store_batch_rows(
                     batch, settings_.engine, materials_, frame.hits,
                     {frame.pending.first_copy_of(), PendingBatches::kConvertedAtOnce}),
                 batch.frame);
  }
  const auto& hits = current_->hits;
  while (current_ready_ < hits.shape.columns && hits.column_received[current_ready_]) {
    ++current_ready_;
  }
  publish_current();
  if (current_->hits.columns_received == current_->hits.shape.columns) submit_current();
}

void SensorRuntime::publish_current() {
  if (!current_handed_on_) {
    ready_frames_.push(current_);
    current_handed_on_ = true;
  }
  current_->publish(current_ready_, stream_step_);
}

void SensorRuntime::on_raw(std::span<const std::uint8_t> datagram) {
  if (const auto error = raw_->check(datagram); error != protocol::BatchError::kNone) {
    log_rejection(error);
    return;
  }
  if (raw_->take(datagram, datagram_arrival_ns_)) hand_over_raw();
}

void SensorRuntime::hand_over_raw() {
  raw_->hand_over(
      [this](std::size_t slot, std::int64_t arrival_ns) { store_raw(slot, arrival_ns); });
}

void SensorRuntime::flush_raw() {
  raw_->flush([this](std::size_t slot, std::int64_t arrival_ns) { store_raw(slot, arrival_ns); });
}

void SensorRuntime::store_raw(std::size_t slot, std::int64_t arrival_ns) {
  // A frame this datagram completes or begins is dated by its own arrival.
  const std::int64_t arrival_now = std::exchange(datagram_arrival_ns_, arrival_ns);
  if (!current_) current_ = acquire_frame(raw_frame_counter_++);
  core::FrameHits* hits = &current_->hits;
  auto& assembler = raw_->assembler();
  const auto rows = assembler.store_located(slot, hits, [&] {
    submit_current();
    current_ = acquire_frame(raw_frame_counter_++);
    hits = &current_->hits;
  });
  counters_.add_rows(rows);
  if (rows.late > 0 && worth_logging(counters_.rows_late)) {
    spdlog::warn(
        "sensor {}: frame {}: {} raw rows of beams more than {} columns behind the turn's "
        "furthest refused: the physics may have taken their columns (engines send a turn's "
        "beams in column order) ({} so far)",
        settings_.name, current_->hits.frame_number, rows.late,
        protocol::RawRowAssembler::kOpenColumns, counters_.rows_late.load());
  }
  // Raw rows carry no column: a column is in once the engine is a few columns further on.
  current_ready_ = std::max(current_ready_, assembler.complete_columns());
  assembler.seal_below(current_ready_);
  if (current_->hits.columns_received > 0) publish_current();
  datagram_arrival_ns_ = arrival_now;
  // The frame got input now, not when the datagram was taken: the set may have waited for the
  // locating thread longer than the idle timeout, which would otherwise end the frame it is
  // still filling.
  last_batch_at_ = Clock::now();
}

void SensorRuntime::refresh_weather() {
  const std::uint64_t version = weather_version_.load(std::memory_order_acquire);
  if (version == weather_seen_) return;  // the common case: no lock
  const std::lock_guard lock(shared_weather_mutex_);
  weather_ = shared_weather_;
  weather_seen_ = weather_version_.load(std::memory_order_relaxed);
}

void SensorRuntime::stamp_frame() {
  refresh_weather();
  auto& hits = current_->hits;
  hits.weather = weather_;
  if (control_pose_ && !hits.has_pose) {
    hits.has_pose = true;
    hits.pose_column = 0;
    hits.world_from_sensor = *control_pose_;
  }
}

void SensorRuntime::on_control(std::span<const std::uint8_t> datagram) {
  protocol::ControlView control;
  const auto error = protocol::decode_control(datagram, control);
  if (error == protocol::BatchError::kNone && control.sensor_id != settings_.sensor_id) {
    log_rejection(protocol::BatchError::kUnknownSensor);
    return;
  }
  if (error != protocol::BatchError::kNone) {
    log_rejection(error);
    return;
  }
  ++counters_.control_messages;
  refresh_weather();
  const core::Weather before = weather_;
  const bool was_paused = paused_.load(std::memory_order_relaxed);
  if (control.has_pose) {
    control_pose_ = settings_.engine.pose(control.pose_position, control.pose_orientation);
  }
  if (control.pause) paused_.store(true, std::memory_order_relaxed);
  if (control.resume) paused_.store(false, std::memory_order_relaxed);
  const bool paused = paused_.load(std::memory_order_relaxed);
  core::Weather after = before;
  if (control.fog_visibility_m > 0) after.visibility_m = control.fog_visibility_m;
  if (control.rain_mm_per_h >= 0) after.rain_mm_per_h = control.rain_mm_per_h;
  if (control.sun_irradiance_w_per_m2 >= 0) {
    after.sun_irradiance_w_per_m2 = control.sun_irradiance_w_per_m2;
  }
  const bool weather_changed = after.rain_mm_per_h != before.rain_mm_per_h ||
                               after.visibility_m != before.visibility_m ||
                               after.sun_irradiance_w_per_m2 != before.sun_irradiance_w_per_m2;
  if (weather_changed) {
    // Only the fields the message sets: a weather the API set in between keeps the others.
    const std::lock_guard lock(shared_weather_mutex_);
    if (control.fog_visibility_m > 0) shared_weather_.visibility_m = control.fog_visibility_m;
    if (control.rain_mm_per_h >= 0) shared_weather_.rain_mm_per_h = control.rain_mm_per_h;
    if (control.sun_irradiance_w_per_m2 >= 0) {
      shared_weather_.sun_irradiance_w_per_m2 = control.sun_irradiance_w_per_m2;
    }
    weather_version_.fetch_add(1, std::memory_order_release);
  }
  refresh_weather();
  // Logged when the state changes, not per message: an engine may send its pose in a Control
  // message every tick.
  if (paused != was_paused || weather_changed) {
    spdlog::info("sensor {}: control: paused={} rain={} mm/h visibility={} m sun={} W/m^2",
                 settings_.name, paused, weather_.rain_mm_per_h, weather_.visibility_m,
                 weather_.sun_irradiance_w_per_m2);
  }
}

StreamedFrame* SensorRuntime::acquire_frame(std::uint32_t frame_number) {
  // Never waits: of the frame buffers (at least 3), the processing thread holds at most one and
  // none is being filled here, so one is free or waiting. Only when the processing thread is
  // between returning one and taking the next can both queues look empty for an instant.
  StreamedFrame* frame = nullptr;
  while (!free_frames_.try_pop(frame)) {
    // Processing is behind: give up the oldest waiting frame, whole (complete: the frame being
    // filled is current_, and there is none now).
    if (ready_frames_.try_pop(frame) && frame) {
      ++counters_.frames_dropped;
      if (worth_logging(counters_.frames_dropped)) {
        spdlog::warn("sensor {}: input outruns processing; dropped frame {} ({} so far)",
                     settings_.name, frame->hits.frame_number, counters_.frames_dropped.load());
      }
      break;
    }
    std::this_thread::yield();
  }
  frame->hits.clear(frame_number);
  frame->pending.clear();
  frame->hits.input_begun_ns =
      datagram_arrival_ns_ != 0
          ? datagram_arrival_ns_
          : std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
                .count();
  frame->restart();
  current_ = frame;
  current_handed_on_ = false;
  current_ready_ = 0;
  stamp_frame();  // a Control message takes effect from the next frame on
  return frame;
}

void SensorRuntime::submit_current() {
  if (!current_) return;
  auto& hits = current_->hits;
  if (hits.columns_received == hits.shape.columns)
    ++counters_.frames_complete;
  else
    ++counters_.frames_incomplete;
  last_submitted_frame_ = hits.frame_number;
  // Complete when the datagram that completed it (or began the next frame) reached the host;
  // ended by the idle timeout or the stop: now.
  const std::int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  hits.handed_on_ns = now_ns;
  hits.input_done_ns = datagram_arrival_ns_ != 0 ? std::min(datagram_arrival_ns_, now_ns) : now_ns;
  current_->complete();
  if (!current_handed_on_) ready_frames_.push(current_);
  current_ = nullptr;
}

}  // namespace lidaremu::daemon
