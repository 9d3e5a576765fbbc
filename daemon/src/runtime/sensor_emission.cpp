#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "lidaremu/daemon/net/address.hpp"
#include "lidaremu/daemon/runtime/paced_sender.hpp"
#include "lidaremu/daemon/runtime/pacing_schedule.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "sensor_runtime_detail.hpp"

// Packets from the queue onto the wire at the sensor's pace, on the shared sending thread.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using runtime_detail::resolve;
using runtime_detail::steady_s;
using runtime_detail::unix_now_s;

namespace {
// A socket packets leave from: the sensor's own address (the newest Ouster client drops any
// other), and `port` when the family's drivers check it (Livox), else any port.
asio::ip::udp::socket open_sender(const SensorSettings& settings, std::uint16_t port) {
  asio::ip::udp::socket socket(runtime_detail::handlerless_io());
  socket.open(asio::ip::udp::v4());
  socket.set_option(asio::socket_base::send_buffer_size(4 << 20));
  // Every sensor's packets leave from one thread: a full send buffer drops and counts this
  // sensor's packet (send_errors) instead of holding every sensor's sending.
  socket.non_blocking(true);
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

std::uint16_t data_port_of(const SensorSettings& s) {
  return source_port_for(s.data_source_port, s.out.host, s.out.port);
}
std::uint16_t telemetry_port_of(const SensorSettings& s) {
  return source_port_for(s.telemetry_source_port, s.telemetry.host, s.telemetry.port);
}

}  // namespace

// A sensor's packets as the shared sender (paced_sender.hpp) takes them: when each is due, by the
// sensor's pacing rule, and how it leaves, from the sensor's own sockets, counted.
class SensorRuntime::Emission final : public SendLane {
 public:
  explicit Emission(SensorRuntime& owner)
      : SendLane(*owner.packets_, "sensor " + owner.settings_.name + ": sending"),
        owner_(owner),
        data_socket_(open_sender(owner.settings_, data_port_of(owner.settings_))),
        data_to_(resolve(owner.settings_.out, "output address")),
        telemetry_to_(resolve(owner.settings_.telemetry, "telemetry address")),
        schedule_({.frame_period_s = owner.settings_.pattern.frame_period_s,
                   .margin_s = owner.settings_.pacing_margin(),
                   .packet_gap_s = owner.data_packet_period_s_}) {
    // Telemetry shares the data socket unless the family sends it from a port of its own.
    const auto& settings = owner.settings_;
    if (telemetry_port_of(settings) != data_port_of(settings)) {
      own_telemetry_socket_.emplace(open_sender(settings, telemetry_port_of(settings)));
    }
    data_source_ = source_of(data_socket_);
    telemetry_source_ = source_of(telemetry_socket());
  }

  double due_s(const PacketSlot& slot, double now_s) override {
    SensorRuntime& o = owner_;
    if (o.settings_.pace != Pace::kRealtime || o.muted_.load(std::memory_order_acquire)) {
      return now_s;
    }
    // The schedule's rule (pacing_schedule.hpp) is the one the admission replays.
    const PacingSchedule::Due due = schedule_.next(now_s, slot.sensor_time_s);
    if (due.step == PacingSchedule::Step::kRestarted) ++o.counters_.pacing_resyncs;
    if (due.step == PacingSchedule::Step::kCatchUpBegins) ++o.counters_.pacing_catch_ups;
    o.schedule_outlook_.sender_at(slot.frame_sequence, *schedule_.offset_s());
    return due.at_s;
  }

  void send(const PacketSlot& slot, double due_s) override {
    SensorRuntime& o = owner_;
    if (o.settings_.pace == Pace::kRealtime) {
      const double late_s = std::max(0.0, steady_s(Clock::now()) - due_s);
      store_max(o.counters_.pacing_error_ns_max, static_cast<std::uint64_t>(late_s * 1e9));
      o.counters_.pacing_error.observe(late_s);
    }
    const bool data = slot.channel == core::PacketChannel::kData;
    const auto& to = data ? data_to_ : telemetry_to_;
    // mute_output sets muted_ then waits while sending_: with both sequentially consistent, a
    // packet either left before it returned or never leaves.
    o.sending_.store(true, std::memory_order_seq_cst);
    if (o.muted_.load(std::memory_order_seq_cst)) {
      o.sending_.store(false, std::memory_order_release);
      ++discarded_;
      return;
    }
    boost::system::error_code ec;
    (data ? data_socket_ : telemetry_socket())
        .send_to(asio::buffer(slot.bytes.data(), slot.size), to, 0, ec);
    o.sending_.store(false, std::memory_order_release);
    if (!ec && o.output_lane_) {
      o.output_lane_->record(unix_now_s(), data ? data_source_ : telemetry_source_,
                             {to.address().to_v4().to_uint(), to.port()},
                             std::span(slot.bytes.data(), slot.size));
    }
    if (ec) {
      ++o.counters_.send_errors;
    } else if (data) {
      ++o.counters_.packets_out;
      o.counters_.bytes_out += slot.size;
      o.streaming_.store(true, std::memory_order_relaxed);
      if (slot.frame_sequence != frame_sequence_) {
        observe_frame_age();
        frame_sequence_ = slot.frame_sequence;
        frame_input_done_ns_ = 0;
      }
      // Packets encoded while the frame was still arriving do not know when it was complete.
      if (slot.frame_input_done_ns != 0) frame_input_done_ns_ = slot.frame_input_done_ns;
      frame_last_queued_ns_ = slot.queued_ns;
      frame_last_sent_ = Clock::now();
    } else {
      ++o.counters_.telemetry_packets_out;
    }
  }

  void ended() override {
    observe_frame_age();
    // How much a reinitialisation cut short (a debug line: a storm of them would flood the log).
    if (discarded_ > 0) {
      spdlog::debug("sensor {}: {} packets of the configuration before discarded",
                    owner_.settings_.name, discarded_);
    }
  }

 private:
  asio::ip::udp::socket& telemetry_socket() {
    return own_telemetry_socket_ ? *own_telemetry_socket_ : data_socket_;
  }
  // The frame whose packets are leaving: its age is known once the next frame's first packet
  // comes (or the stream ends).
  void observe_frame_age() {
    if (frame_input_done_ns_ == 0) return;
    const Clock::time_point input_done{std::chrono::nanoseconds(frame_input_done_ns_)};
    const Clock::time_point last_queued{std::chrono::nanoseconds(frame_last_queued_ns_)};
    const auto seconds = [](Clock::duration d) {
      return std::max(0.0, std::chrono::duration<double>(d).count());
    };
    auto& counters = owner_.counters_;
    counters.frame_age.observe(seconds(frame_last_sent_ - input_done));
    counters.frame_queued.observe(seconds(last_queued - input_done));
    counters.frame_sending.observe(seconds(frame_last_sent_ - last_queued));
  }

  SensorRuntime& owner_;
  asio::ip::udp::socket data_socket_;
  std::optional<asio::ip::udp::socket> own_telemetry_socket_;
  asio::ip::udp::endpoint data_to_;
  asio::ip::udp::endpoint telemetry_to_;
  core::UdpAddress data_source_;
  core::UdpAddress telemetry_source_;
  PacingSchedule schedule_;
  std::uint64_t frame_sequence_ = 0;
  std::int64_t frame_input_done_ns_ = 0;
  std::int64_t frame_last_queued_ns_ = 0;
  Clock::time_point frame_last_sent_{};
  std::uint64_t discarded_ = 0;  // after mute_output
};

void SensorRuntime::start_sending() {
  auto lane = std::make_shared<Emission>(*this);
  sending_lane_ = lane;
  PacedSender& sender = PacedSender::shared();
  if (settings_.pace == Pace::kRealtime && !sender.punctual()) {
    spdlog::info(
        "sensor {}: pacing runs in the normal scheduling class (no permission for real-time "
        "priority): packets may leave up to milliseconds late when the CPU is saturated",
        settings_.name);
  }
  sender.add(std::move(lane));
}

void SensorRuntime::mute_output() {
  muted_.store(true, std::memory_order_seq_cst);
  while (sending_.load(std::memory_order_seq_cst)) std::this_thread::yield();
}

}  // namespace lidaremu::daemon
