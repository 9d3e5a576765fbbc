#include "lidaremu/daemon/runtime/sensor_runtime.hpp"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "lidaremu/core/streaming_step.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"
#include "sensor_runtime_detail.hpp"

// A sensor's life: its buffers, its socket and threads, its counters, its stop. What it receives
// is in sensor_ingest.cpp, what it processes in sensor_processing.cpp, how it sends in
// sensor_emission.cpp.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using runtime_detail::resolve;
using runtime_detail::unix_now_s;

namespace {

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

// Packets in flight: the frame being sent, the next one waiting out the pacing margin (up to a
// frame period), the one after being encoded; plus telemetry.
int packet_slots(const SensorSettings& s, const core::Encoder& encoder) {
  const double packets_per_frame = s.pattern.frame_period_s / encoder.data_packet_period_s();
  return static_cast<int>(3 * packets_per_frame + 64);
}
// A slot holds the data packet, or any telemetry packet up to 512 bytes (the largest: Velodyne's
// position packet); anything larger is refused and counted (packets_too_large).
std::size_t packet_slot_bytes(const core::Encoder& encoder) {
  return std::max<std::size_t>(512, encoder.data_packet_size());
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
}  // namespace

namespace runtime_detail {
asio::io_context& handlerless_io() {
  static asio::io_context* const io = new asio::io_context;  // never destroyed: lanes outlive exit
  return *io;
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
}  // namespace runtime_detail

SensorRuntime::SensorRuntime(const SensorSettings& settings, const core::MaterialTable& materials,
                             Recorders recorders, KeptCounters kept)
    : settings_(settings),
      materials_(materials),
      hits_socket_(runtime_detail::handlerless_io()),
      receive_buffers_(std::size_t{kReceiveBatch} * (protocol::kMaxDatagram + 1)),
      pipeline_(settings.pattern, materials, settings.pipeline),
      encoder_(core::make_encoder(settings.pattern, settings.identity,
                                  settings.pipeline.return_mode, ouster_output(settings))),
      weather_(settings.pipeline.params.weather),
      shared_weather_(settings.pipeline.params.weather),
      admission_(settings.pattern.frame_period_s, settings.pacing_margin(),
                 encoder_ ? encoder_->data_packet_period_s() : 0.0),
      wall_clock_(settings.pattern.frame_period_s),
      share_(settings.pattern.frame_period_s),
      kept_(std::move(kept)),
      counters_(*kept_.sensor),
      recorders_(recorders) {
  if (!encoder_) {
    // Settings are checked before they get here; a path that missed it must not start a sensor
    // without an encoder (the old one stays, see EmulatedSensor::apply).
    throw std::runtime_error("the " + std::string(settings.model->name) +
                             "'s packets cannot carry this return mode");
  }
  const core::FrameShape shape{static_cast<std::uint32_t>(settings_.pattern.columns_per_frame),
                               static_cast<std::uint16_t>(settings_.model->channels)};
  free_frames_.set_capacity(settings_.frame_buffers);
  ready_frames_.set_capacity(settings_.frame_buffers + 1);  // + the stop marker
  for (int i = 0; i < settings_.frame_buffers; ++i) {
    frame_pool_.push_back(std::make_unique<StreamedFrame>());
    frame_pool_.back()->hits.reshape(shape, settings_.layout);
    if (settings_.hits_format == HitsFormat::kFramed) {
      frame_pool_.back()->pending.reserve(shape.columns,
                                          shape.channels * settings_.layout.hits_per_beam());
      batch_rows_.resize(shape.columns);  // a pending batch brings a column at least
    }
    free_frames_.push(frame_pool_.back().get());
  }
  stream_step_ = core::streaming_step_columns(shape);
  data_packet_period_s_ = encoder_->data_packet_period_s();
  const int slots = packet_slots(settings_, *encoder_);
  packets_.emplace(slots, packet_slot_bytes(*encoder_));
  // Capture lanes hold as many packets as the sending queue; received datagrams (--record) grow
  // their slots to the largest seen, once.
  const std::size_t packet_bytes = packets_->slot_bytes();
  if (recorders_.output) output_lane_ = recorders_.output->lane(slots, packet_bytes);
  if (recorders_.input) input_lane_ = recorders_.input->lane(256, 0);
  returns_.reshape(shape);
  if (recorders_.view) tap_ = recorders_.view->attach(settings_, kept_.view);
  // The counters may hold an earlier pipeline's drops: this one's share starts from its own.
  input_drops_recorded_ = counters_.frames_dropped.load() - counters_.frames_dropped_late.load();
  if (settings_.hits_format != HitsFormat::kFramed) {
    raw_.emplace(pipeline_.geometry(), settings_.hits_format == HitsFormat::kRaw7 ? 7 : 8,
                 settings_.layout, raw_datagrams_at_once(settings_), settings_.engine, materials_,
                 settings_.name);
  }
}

std::size_t SensorRuntime::estimated_bytes(const SensorSettings& s, const Recorders& recorders) {
  // What the constructor and warm_up allocate and fault in, item by item; the live view's frames
  // (only while a viewer watches) and the kernel's socket buffer are not the process's.
  const core::FrameShape shape{static_cast<std::uint32_t>(s.pattern.columns_per_frame),
                               static_cast<std::uint16_t>(s.model->channels)};
  std::size_t frame = core::FrameHits::bytes_for(shape, s.layout);
  if (s.hits_format == HitsFormat::kFramed) {
    frame += PendingBatches::bytes_for(shape.columns, shape.channels * s.layout.hits_per_beam());
  }
  const std::size_t raw_rows =
      s.hits_format == HitsFormat::kFramed
          ? 0
          : RawIngest::bytes_for(s.hits_format == HitsFormat::kRaw8 ? 8 : 7, s.layout,
                                 raw_datagrams_at_once(s));
  const auto encoder =
      core::make_encoder(s.pattern, s.identity, s.pipeline.return_mode, ouster_output(s));
  const std::size_t packets =
      encoder ? static_cast<std::size_t>(packet_slots(s, *encoder)) * packet_slot_bytes(*encoder)
              : 0;
  return static_cast<std::size_t>(s.frame_buffers) * frame +
         core::BeamWork::bytes_for(shape.beams()) + core::FrameReturns::bytes_for(shape) +
         packets * (recorders.output != nullptr ? 2 : 1) +
         (encoder ? encoder->working_bytes() : 0) + raw_rows +
         std::size_t{kReceiveBatch} * (protocol::kMaxDatagram + 1) + kThreadsAndTablesBytes;
}

std::size_t SensorRuntime::raw_datagrams_at_once(const SensorSettings& s) {
  const std::size_t beams = static_cast<std::size_t>(s.pattern.columns_per_frame) *
                            static_cast<std::size_t>(s.model->channels);
  return std::min<std::size_t>(kReceiveBatch,
                               protocol::RawRowAssembler::datagrams_per_turn(
                                   s.hits_format == HitsFormat::kRaw8 ? 8 : 7, s.layout, beams));
}

SensorRuntime::~SensorRuntime() {
  try {
    if (started_) drain_and_stop();
  } catch (const std::exception& e) {
    spdlog::error("sensor {}: stopping failed: {}", settings_.name, e.what());
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void SensorRuntime::set_weather(const core::Weather& weather) {
  const std::lock_guard lock(shared_weather_mutex_);
  shared_weather_ = weather;
  weather_version_.fetch_add(1, std::memory_order_release);
}

core::Weather SensorRuntime::weather() const {
  const std::lock_guard lock(shared_weather_mutex_);
  return shared_weather_;
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
  // Each datagram's arrival time, so that a frame's age counts its wait in the socket's buffer
  // too (sensor_ingest.cpp); without it (never seen on Linux) ages start when it is read.
  const int on = 1;
  if (::setsockopt(hits_socket_.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
    spdlog::warn(
        "sensor {}: no receive timestamps on the hit socket ({}): frame ages count from "
        "when datagrams are read",
        settings_.name, std::strerror(errno));
  }
  const auto local = hits_socket_.local_endpoint();
  hits_address_ = {local.address().is_v4() ? local.address().to_v4().to_uint() : 0x7F000001u,
                   local.port()};
  if (hits_address_.ip == 0) hits_address_.ip = 0x7F000001u;  // bound to any: loopback
  bound_hits_ = {local.address().to_string(), local.port()};
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    throw std::runtime_error(
        "sensor " + settings_.name +
        ": cannot create its input thread's wake-up eventfd: " + std::strerror(errno));
  }
  start_sending();  // before the processing thread, which queues the packets
  started_ = true;
  // A failed thread keeps its queues moving (frames back to the input, the end marker on to
  // the sender), so the stop the failure asks for drains instead of hanging.
  processor_ = std::thread([this] {
    leave_signals_to_the_main_thread();  // TBB's workers, started from here, inherit it
    name_this_thread(kProcessingThreadName);
    run_guarded(
        "sensor " + settings_.name + ": processing", [this] { process_loop(); },
        [this] {
          while (!frames_ended_) {
            StreamedFrame* frame = nullptr;
            ready_frames_.pop(frame);
            if (!frame) break;
            ++counters_.frames_dropped;
            free_frames_.push(frame);
          }
          packets_->end();
        });
  });
  // A failed input thread ends its input; the stop it asks for hands what it gathered on.
  receiver_ = std::thread([this] {
    leave_signals_to_the_main_thread();
    name_this_thread(kInputThreadName);
    run_guarded("sensor " + settings_.name + ": input", [this] { input_loop(); });
  });
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

std::size_t SensorRuntime::packets_queued() const { return packets_->queued(); }

Endpoint SensorRuntime::bound_hits() const { return bound_hits_; }

void SensorRuntime::drain_and_stop() {
  stop_input();
  join();
}

void SensorRuntime::stop_input() {
  if (!started_ || input_stopped_) return;
  input_stopped_ = true;
  kernel_drops_at_close_ = input_kernel_drops();
  // The input thread finishes the datagram in hand and ends; what it gathered is ours then.
  input_stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof one) != sizeof one) {
    spdlog::error("sensor {}: waking the input thread failed: {}", settings_.name,
                  std::strerror(errno));
  }
  receiver_.join();
  boost::system::error_code ignored;
  hits_socket_.close(ignored);
  submit_current();
  ready_frames_.push(nullptr);
}

void SensorRuntime::join() {
  if (!started_) return;
  stop_input();
  started_ = false;
  processor_.join();
  sending_lane_->wait_ended();
  sending_lane_.reset();
}

}  // namespace lidaremu::daemon
