#include "lidaremu/daemon/sensor_runtime.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "lidaremu/daemon/frame_order.hpp"
#include "lidaremu/daemon/punctual_thread.hpp"
#include "lidaremu/daemon/thread_guard.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Per-datagram problems are logged at 1, 2, 3, 10, 100, 1000, ... occurrences, so a flood of
// bad input never floods the log but every kind is seen.
bool worth_logging(std::uint64_t count) {
  if (count <= 3) return true;
  while (count % 10 == 0) count /= 10;
  return count == 1;
}

// Room for two whole frames of input (an engine may send the next frame while this one is
// processed), within bounds: at least 16 MiB, at most 256 MiB.
int receive_buffer_bytes(const SensorSettings& s) {
  const double floats_per_row = s.layout.segments_per_path > 1 ? 8 : 7;
  const double frame_bytes = static_cast<double>(s.pattern.columns_per_frame) * s.model->channels *
                             static_cast<double>(s.layout.hits_per_beam()) * floats_per_row *
                             sizeof(float);
  return static_cast<int>(
      std::clamp(2.0 * frame_bytes * 1.01, 16.0 * (1 << 20), 256.0 * (1 << 20)));
}

// The emulated Ouster powers on with the daemon: its internal oscillator counts from then (in
// simulation time, from 0).
core::OusterOutput ouster_output(const SensorSettings& settings) {
  core::OusterOutput out = settings.ouster;
  out.power_on_time_s = settings.clock == ClockSource::kWall ? unix_now_s() : 0.0;
  return out;
}

// Engines send a frame in a burst; the kernel's default buffer (rmem_max) holds a fraction of
// one. Privileged processes may exceed rmem_max; others get what the kernel allows, said once.
void set_receive_buffer(asio::ip::udp::socket& socket, int bytes) {
  boost::system::error_code ec;
  socket.set_option(asio::socket_base::receive_buffer_size(bytes), ec);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
  asio::socket_base::receive_buffer_size granted;
  socket.get_option(granted, ec);
  if (!ec && granted.value() < bytes) {
    spdlog::warn(
        "receive buffer is {} KiB, not the {} KiB asked for: raise net.core.rmem_max "
        "if engines send whole frames in bursts",
        granted.value() / 1024, bytes / 1024);
  }
}

asio::ip::udp::endpoint resolve(const Endpoint& e, const std::string& what) {
  boost::system::error_code ec;
  // Settings resolved host names to addresses at load.
  const auto address = asio::ip::make_address(e.host, ec);
  if (ec)
    throw std::runtime_error(what + " " + e.to_string() + ": '" + e.host +
                             "' is not an IP address");
  return {address, e.port};
}

}  // namespace

class SensorRuntime::QueueSink final : public core::PacketSink {
 public:
  explicit QueueSink(SensorRuntime& owner) : owner_(owner) {}
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double sensor_time_s) override {
    PacketSlot* slot = nullptr;
    owner_.free_slots_.pop(slot);  // blocks while the emitter is behind: back-pressure
    std::copy(bytes.begin(), bytes.end(), slot->bytes.begin());
    slot->size = bytes.size();
    slot->sensor_time_s = sensor_time_s;
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

SensorRuntime::SensorRuntime(const SensorSettings& settings, const core::MaterialTable& materials,
                             asio::io_context& io, Recorders recorders)
    : settings_(settings),
      materials_(materials),
      hits_socket_(io),
      idle_timer_(io),
      pipeline_(settings.pattern, materials, settings.pipeline),
      encoder_(core::make_encoder(settings.pattern, settings.identity, settings.pipeline.echoes,
                                  ouster_output(settings))),
      weather_(settings.pipeline.params.weather),
      recorders_(recorders) {
  const core::FrameShape shape{static_cast<std::uint32_t>(settings_.pattern.columns_per_frame),
                               static_cast<std::uint16_t>(settings_.model->channels)};
  free_frames_.set_capacity(settings_.frame_buffers);
  ready_frames_.set_capacity(settings_.frame_buffers + 1);  // + the stop marker
  for (int i = 0; i < settings_.frame_buffers; ++i) {
    frame_pool_.push_back(std::make_unique<core::FrameHits>());
    frame_pool_.back()->reshape(shape, settings_.layout);
    free_frames_.push(frame_pool_.back().get());
  }
  // Packets in flight: the frame being sent, the next one waiting out the pacing margin (up to a
  // frame period), the one after being encoded; plus telemetry.
  const double packets_per_frame =
      settings_.pattern.frame_period_s / encoder_->data_packet_period_s();
  const auto slots = static_cast<int>(3 * packets_per_frame + 64);
  free_slots_.set_capacity(slots);
  ready_slots_.set_capacity(slots + 1);
  for (int i = 0; i < slots; ++i) {
    slot_pool_.push_back(std::make_unique<PacketSlot>());
    slot_pool_.back()->bytes.resize(
        encoder_->data_packet_size() < 512 ? 512 : encoder_->data_packet_size());
    free_slots_.push(slot_pool_.back().get());
  }
  // Capture lanes hold as many packets as the sending queue; received datagrams (--record) grow
  // their slots to the largest seen, once.
  const std::size_t packet_bytes = slot_pool_.back()->bytes.size();
  if (recorders_.output) output_lane_ = recorders_.output->lane(slots, packet_bytes);
  if (recorders_.input) input_lane_ = recorders_.input->lane(256, 0);
  returns_.reshape(shape);
  if (recorders_.view) tap_ = recorders_.view->attach(settings_);
  if (settings_.hits_format != HitsFormat::kFramed) {
    raw_.emplace(pipeline_.geometry(), settings_.hits_format == HitsFormat::kRaw7 ? 7 : 8,
                 settings_.layout);
  }
}

SensorRuntime::~SensorRuntime() {
  try {
    if (started_) drain_and_stop();
  } catch (const std::exception& e) {
    spdlog::error("sensor {}: stopping failed: {}", settings_.name, e.what());
  }
}

void SensorRuntime::start() {
  const auto endpoint = resolve(settings_.hits, "hits address");
  boost::system::error_code ec;
  hits_socket_.open(endpoint.protocol(), ec);
  if (!ec) set_receive_buffer(hits_socket_, receive_buffer_bytes(settings_));
  if (!ec) hits_socket_.bind(endpoint, ec);
  if (ec) {
    throw std::runtime_error("sensor " + settings_.name + ": cannot listen on " +
                             settings_.hits.to_string() + ": " + ec.message() +
                             (ec == asio::error::address_in_use
                                  ? " (another process uses that port; pick another with --hits)"
                                  : ""));
  }
  const auto local = hits_socket_.local_endpoint();
  hits_address_ = {local.address().is_v4() ? local.address().to_v4().to_uint() : 0x7F000001u,
                   local.port()};
  if (hits_address_.ip == 0) hits_address_.ip = 0x7F000001u;  // bound to any: loopback
  started_ = true;
  // A failed thread keeps its queues moving (frames back to the input, the end marker on to
  // the sender), so the stop the failure asks for drains instead of hanging.
  processor_ = std::thread([this] {
    leave_signals_to_the_main_thread();  // TBB's workers, started from here, inherit it
    run_guarded(
        "sensor " + settings_.name + ": processing", [this] { process_loop(); },
        [this] {
          while (!frames_ended_) {
            core::FrameHits* frame = nullptr;
            ready_frames_.pop(frame);
            if (!frame) break;
            ++counters_.frames_dropped;
            free_frames_.push(frame);
          }
          ready_slots_.push(nullptr);
        });
  });
  emitter_ = std::thread([this] {
    leave_signals_to_the_main_thread();
    run_guarded(
        "sensor " + settings_.name + ": sending", [this] { emit_loop(); },
        [this] {
          while (!slots_ended_) {
            PacketSlot* slot = nullptr;
            ready_slots_.pop(slot);
            if (!slot) break;
            free_slots_.push(slot);
          }
        });
  });
  receive_next();
}

std::size_t SensorRuntime::frames_queued() const {
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(ready_frames_.size(), 0));
}

std::uint64_t SensorRuntime::input_kernel_drops() const {
  boost::system::error_code ec;
  const auto local =
      hits_socket_.is_open() ? hits_socket_.local_endpoint(ec) : asio::ip::udp::endpoint{};
  if (!hits_socket_.is_open() || ec || !local.address().is_v4()) return kernel_drops_at_close_;
  // /proc prints the address as the network-order word in hex, the port in host order.
  const std::uint32_t ip = local.address().to_v4().to_uint();
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, "%08X:%04X", __builtin_bswap32(ip), local.port());
  std::ifstream table("/proc/net/udp");
  for (std::string line; std::getline(table, line);) {
    std::istringstream fields(line);
    std::string slot, address;
    fields >> slot >> address;
    if (address != wanted) continue;
    std::uint64_t drops = 0;
    for (std::string field; fields >> field;) drops = std::strtoull(field.c_str(), nullptr, 10);
    return drops;  // the last column
  }
  return kernel_drops_at_close_;
}

std::size_t SensorRuntime::packets_queued() const {
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(ready_slots_.size(), 0));
}

Endpoint SensorRuntime::bound_hits() const {
  const auto local = hits_socket_.local_endpoint();
  return {local.address().to_string(), local.port()};
}

void SensorRuntime::receive_next() {
  hits_socket_.async_receive_from(
      asio::buffer(receive_buffer_), sender_,
      [this](const boost::system::error_code& ec, std::size_t size) {
        if (ec == asio::error::operation_aborted || !hits_socket_.is_open()) return;
        if (!ec) on_datagram(size);
        receive_next();
      });
}

void SensorRuntime::on_datagram(std::size_t size) {
  ++counters_.datagrams_in;
  counters_.bytes_in += size;
  if (!settings_.allowed_senders.empty()) {
    const auto& allowed = settings_.allowed_senders;
    const bool known = sender_.address().is_v4() &&
                       std::find(allowed.begin(), allowed.end(),
                                 sender_.address().to_v4().to_uint()) != allowed.end();
    if (!known) {
      if (worth_logging(++counters_.datagrams_refused_sender)) {
        spdlog::warn("sensor {}: datagram from {} refused: not on the allow-list ({} so far)",
                     settings_.name, sender_.address().to_string(),
                     counters_.datagrams_refused_sender.load());
      }
      return;
    }
  }
  const std::span<const std::uint8_t> datagram(receive_buffer_.data(), size);
  if (recorders_.input && sender_.address().is_v4()) {
    // Everything that arrived, good or bad, with its arrival time: a replay reproduces the run.
    input_lane_->record(unix_now_s(), {sender_.address().to_v4().to_uint(), sender_.port()},
                        hits_address_, datagram.first(std::min(size, protocol::kMaxDatagram)));
  }
  if (size > protocol::kMaxDatagram) {
    log_rejection(protocol::BatchError::kOversized);
    return;
  }
  if (protocol::identify(datagram) == protocol::MessageKind::kControl) {
    on_control(datagram);
    return;
  }
  if (paused_) {
    ++counters_.batches_while_paused;
    return;
  }
  if (raw_)
    on_raw(datagram);
  else
    on_framed(datagram);
  arm_idle_timer();
}

void SensorRuntime::log_rejection(protocol::BatchError e) {
  counters_.reject(e);
  const auto count = counters_.rejected[static_cast<std::size_t>(e)].load();
  if (worth_logging(count)) {
    spdlog::warn("sensor {}: datagram from {}:{} rejected: {} ({} so far)", settings_.name,
                 sender_.address().to_string(), sender_.port(), protocol::to_string(e), count);
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
      current_ ? std::optional(current_->frame_number) : last_submitted_frame_;
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
  if (!current_) current_ = acquire_frame(batch.frame);
  if (!current_->has_sim_time) {
    const auto column_ns = static_cast<std::uint64_t>(
        std::llround(settings_.pattern.column_period_s * 1e9 * batch.first_column));
    current_->sim_time_ns = batch.sim_time_ns > column_ns ? batch.sim_time_ns - column_ns : 0;
    current_->has_sim_time = batch.sim_time_ns != 0;
  }
  stamp_frame();  // a Control message takes effect from the next batch on
  const auto rows = protocol::store_batch(batch, settings_.engine, materials_, *current_);
  counters_.add_rows(rows);
  if (rows.non_finite + rows.unknown_material + rows.out_of_range > 0) {
    const auto bad =
        counters_.rows_non_finite + counters_.rows_unknown_material + counters_.rows_out_of_range;
    if (worth_logging(bad)) {
      spdlog::warn(
          "sensor {}: frame {}: dropped rows: {} non-finite, {} unknown material, {} absurd ({} so "
          "far)",
          settings_.name, batch.frame, rows.non_finite, rows.unknown_material, rows.out_of_range,
          bad);
    }
  }
  if (current_->columns_received == current_->shape.columns) submit_current();
}

void SensorRuntime::on_raw(std::span<const std::uint8_t> datagram) {
  if (const auto error = raw_->check(datagram); error != protocol::BatchError::kNone) {
    log_rejection(error);
    return;
  }
  if (!current_) current_ = acquire_frame(raw_frame_counter_++);
  stamp_frame();
  const auto rows = raw_->store(datagram, settings_.engine, materials_, current_, [this] {
    submit_current();
    current_ = acquire_frame(raw_frame_counter_++);
    stamp_frame();
  });
  counters_.add_rows(rows);
}

void SensorRuntime::stamp_frame() {
  current_->weather = weather_;
  if (control_pose_ && !current_->has_pose) {
    current_->has_pose = true;
    current_->pose_column = 0;
    current_->world_from_sensor = *control_pose_;
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
  const core::Weather before = weather_;
  const bool was_paused = paused_;
  if (control.has_pose) {
    control_pose_ = settings_.engine.pose(control.pose_position, control.pose_orientation);
  }
  if (control.pause) paused_ = true;
  if (control.resume) paused_ = false;
  if (control.fog_visibility_m > 0) weather_.visibility_m = control.fog_visibility_m;
  if (control.rain_mm_per_h >= 0) weather_.rain_mm_per_h = control.rain_mm_per_h;
  if (control.sun_irradiance_w_per_m2 >= 0) {
    weather_.sun_irradiance_w_per_m2 = control.sun_irradiance_w_per_m2;
  }
  // Logged when the state changes, not per message: an engine may send its pose in a Control
  // message every tick.
  if (paused_ != was_paused || weather_.rain_mm_per_h != before.rain_mm_per_h ||
      weather_.visibility_m != before.visibility_m ||
      weather_.sun_irradiance_w_per_m2 != before.sun_irradiance_w_per_m2) {
    spdlog::info("sensor {}: control: paused={} rain={} mm/h visibility={} m sun={} W/m^2",
                 settings_.name, paused_, weather_.rain_mm_per_h, weather_.visibility_m,
                 weather_.sun_irradiance_w_per_m2);
  }
}

void SensorRuntime::arm_idle_timer() {
  idle_timer_.expires_after(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(settings_.idle_timeout_s)));
  idle_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !current_ || current_->columns_received == 0) return;
    submit_current();  // the engine went quiet: what arrived is the frame
    if (raw_) raw_->reset();
  });
}

core::FrameHits* SensorRuntime::acquire_frame(std::uint32_t frame_number) {
  // Never waits: of the frame buffers (at least 3), the processing thread holds at most one and
  // none is being filled here, so one is free or waiting. Only when the processing thread is
  // between returning one and taking the next can both queues look empty for an instant.
  core::FrameHits* frame = nullptr;
  while (!free_frames_.try_pop(frame)) {
    // Processing is behind: give up the oldest waiting frame, whole.
    if (ready_frames_.try_pop(frame) && frame) {
      ++counters_.frames_dropped;
      if (worth_logging(counters_.frames_dropped)) {
        spdlog::warn("sensor {}: input outruns processing; dropped frame {} ({} so far)",
                     settings_.name, frame->frame_number, counters_.frames_dropped.load());
      }
      break;
    }
    std::this_thread::yield();
  }
  frame->clear(frame_number);
  return frame;
}

void SensorRuntime::submit_current() {
  if (!current_) return;
  if (current_->columns_received == current_->shape.columns)
    ++counters_.frames_complete;
  else
    ++counters_.frames_incomplete;
  last_submitted_frame_ = current_->frame_number;
  ready_frames_.push(current_);
  current_ = nullptr;
}

double SensorRuntime::frame_start_time(const core::FrameHits& frame) {
  const double period = settings_.pattern.frame_period_s;
  double start = 0;
  if (settings_.clock == ClockSource::kSim) {
    start = frame.has_sim_time ? frame.sim_time_ns * 1e-9
                               : (last_frame_start_ ? *last_frame_start_ + period : 0.0);
  } else {
    // UNIX time; the Ouster encoder turns it into its timestamp mode's clock.
    const double now = unix_now_s();
    start = last_frame_start_ ? *last_frame_start_ + period : now;
    if (std::fabs(start - now) > 1.0) start = now;  // input paused or raced ahead: rejoin the clock
  }
  last_frame_start_ = start;
  return start;
}

void SensorRuntime::process_loop() {
  QueueSink sink(*this);
  for (;;) {
    core::FrameHits* frame = nullptr;
    ready_frames_.pop(frame);
    if (!frame) {
      frames_ended_ = true;
      break;
    }
    const auto begin = Clock::now();
    pipeline_.process(*frame, returns_);
    const double start = frame_start_time(*frame);
    if (frame->has_pose) {
      motion_.add(start + frame->pose_column * settings_.pattern.column_period_s,
                  frame->world_from_sensor);
      encoder_->set_motion(motion_.reading());
    }
    free_frames_.push(frame);
    // Physics time only: encoding below may wait for the paced emitter (back-pressure).
    const auto ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begin).count());
    store_max(counters_.processing_ns_max, ns);
    counters_.processing.observe(static_cast<double>(ns) * 1e-9);
    ++counters_.frames_processed;
    if (LiveFrame* live = tap_ ? tap_->begin_frame() : nullptr) {
      TeeSink tee(sink, *live);
      encoder_->encode_frame(returns_, start, tee);
      tap_->submit(live, returns_);
    } else {
      encoder_->encode_frame(returns_, start, sink);
    }
  }
  encoder_->flush(sink);
  ready_slots_.push(nullptr);
}

void SensorRuntime::emit_loop() {
  if (settings_.pace == Pace::kRealtime && !make_thread_punctual()) {
    spdlog::info(
        "sensor {}: pacing runs in the normal scheduling class (no permission for real-time "
        "priority): packets may leave up to milliseconds late when the CPU is saturated",
        settings_.name);
  }
  asio::io_context local_io;  // synchronous sends only; no handlers run here
  asio::ip::udp::socket socket(local_io);
  socket.open(asio::ip::udp::v4());
  socket.set_option(asio::socket_base::send_buffer_size(4 << 20));
  // Packets come from the sensor's own address: the newest Ouster client drops any other.
  boost::system::error_code ec;
  if (!settings_.sensor_ip.empty()) {
    socket.bind({asio::ip::make_address_v4(settings_.sensor_ip, ec), 0}, ec);
    if (ec) {
      spdlog::error("sensor {}: cannot send from {}: {}; packets leave from any address",
                    settings_.name, settings_.sensor_ip, ec.message());
    }
  }
  if (settings_.sensor_ip.empty() || ec) socket.bind({asio::ip::address_v4::any(), 0}, ec);
  const auto data_to = resolve(settings_.out, "output address");
  const auto telemetry_to = resolve(settings_.telemetry, "telemetry address");
  // What a capture shows as the source: the bound address, or loopback when bound to any.
  auto source = socket.local_endpoint(ec);
  if (source.address().is_unspecified()) source.address(asio::ip::address_v4::loopback());
  std::optional<std::pair<Clock::time_point, double>> anchor;  // (wall, sensor time)
  for (;;) {
    PacketSlot* slot = nullptr;
    ready_slots_.pop(slot);
    if (!slot) {
      slots_ended_ = true;
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
      // Out of step by more than a moment (input stalled, or time jumped): start afresh, the
      // margin ahead.
      if (!anchor || deadline < now - std::chrono::milliseconds(50) ||
          deadline > now + std::chrono::seconds(2)) {
        if (anchor) ++counters_.pacing_resyncs;
        deadline = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(settings_.pacing_margin_s));
        anchor.emplace(deadline, slot->sensor_time_s);
      }
      std::this_thread::sleep_until(deadline);
      const auto late_ns = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - deadline).count());
      store_max(counters_.pacing_error_ns_max, late_ns);
      counters_.pacing_error.observe(static_cast<double>(late_ns) * 1e-9);
    }
    const bool data = slot->channel == core::PacketChannel::kData;
    socket.send_to(asio::buffer(slot->bytes.data(), slot->size), data ? data_to : telemetry_to, 0,
                   ec);
    if (!ec && output_lane_) {
      const auto& to = data ? data_to : telemetry_to;
      output_lane_->record(unix_now_s(), {source.address().to_v4().to_uint(), source.port()},
                           {to.address().to_v4().to_uint(), to.port()},
                           std::span(slot->bytes.data(), slot->size));
    }
    if (ec) {
      ++counters_.send_errors;
    } else if (data) {
      ++counters_.packets_out;
      counters_.bytes_out += slot->size;
    } else {
      ++counters_.telemetry_packets_out;
    }
    free_slots_.push(slot);
  }
}

void SensorRuntime::drain_and_stop() {
  stop_input();
  join();
}

void SensorRuntime::stop_input() {
  if (!started_ || input_stopped_) return;
  input_stopped_ = true;
  // On the io thread (or after it stopped): no handler races with this.
  boost::system::error_code ignored;
  idle_timer_.cancel();
  kernel_drops_at_close_ = input_kernel_drops();
  hits_socket_.close(ignored);
  submit_current();
  ready_frames_.push(nullptr);
}

void SensorRuntime::join() {
  if (!started_) return;
  stop_input();
  started_ = false;
  processor_.join();
  emitter_.join();
}

}  // namespace lidaremu::daemon
