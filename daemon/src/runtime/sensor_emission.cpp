#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "lidaremu/daemon/net/address.hpp"
#include "lidaremu/daemon/runtime/pacing_schedule.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "sensor_runtime_detail.hpp"

// Packets from the queue onto the wire at the sensor's pace, on the sending thread.
namespace lidaremu::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using runtime_detail::resolve;
using runtime_detail::steady_s;
using runtime_detail::unix_now_s;

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

}  // namespace

void SensorRuntime::emit_loop() {
  if (settings_.pace == Pace::kRealtime && !make_thread_punctual()) {
    spdlog::info(
        "sensor {}: pacing runs in the normal scheduling class (no permission for real-time "
        "priority): packets may leave up to milliseconds late when the CPU is saturated",
        settings_.name);
  }
  asio::io_context local_io;  // synchronous sends only; no handlers run here
  const std::uint16_t data_port =
      source_port_for(settings_.data_source_port, settings_.out.host, settings_.out.port);
  const std::uint16_t telemetry_port = source_port_for(
      settings_.telemetry_source_port, settings_.telemetry.host, settings_.telemetry.port);
  auto data_socket = open_sender(local_io, settings_, data_port);
  // Telemetry shares the data socket unless the family sends it from a port of its own.
  std::optional<asio::ip::udp::socket> own_telemetry_socket;
  if (telemetry_port != data_port) {
    own_telemetry_socket.emplace(open_sender(local_io, settings_, telemetry_port));
  }
  auto& telemetry_socket = own_telemetry_socket ? *own_telemetry_socket : data_socket;
  const core::UdpAddress data_source = source_of(data_socket);
  const core::UdpAddress telemetry_source = source_of(telemetry_socket);
  const auto data_to = resolve(settings_.out, "output address");
  const auto telemetry_to = resolve(settings_.telemetry, "telemetry address");
  boost::system::error_code ec;
  PacingSchedule schedule({.frame_period_s = settings_.pattern.frame_period_s,
                           .margin_s = settings_.pacing_margin(),
                           .packet_gap_s = data_packet_period_s_});
  // The frame whose packets are leaving, and when its latest one left: its age is known once
  // the next frame's first packet comes (or the stream ends).
  std::uint64_t frame_sequence = 0;
  std::int64_t frame_input_done_ns = 0;
  std::int64_t frame_last_queued_ns = 0;
  Clock::time_point frame_last_sent{};
  const auto observe_frame_age = [&] {
    if (frame_input_done_ns == 0) return;
    const Clock::time_point input_done{std::chrono::nanoseconds(frame_input_done_ns)};
    const Clock::time_point last_queued{std::chrono::nanoseconds(frame_last_queued_ns)};
    const auto seconds = [](Clock::duration d) {
      return std::max(0.0, std::chrono::duration<double>(d).count());
    };
    counters_.frame_age.observe(seconds(frame_last_sent - input_done));
    counters_.frame_queued.observe(seconds(last_queued - input_done));
    counters_.frame_sending.observe(seconds(frame_last_sent - last_queued));
  };
  std::uint64_t discarded = 0;  // after mute_output
  for (;;) {
    PacketSlot* slot = packets_->take();
    if (!slot) {
      slots_ended_ = true;
      observe_frame_age();
      break;
    }
    if (muted_.load(std::memory_order_acquire)) {
      ++discarded;
      packets_->give_back(slot);
      continue;
    }
    if (settings_.pace == Pace::kRealtime) {
      // The schedule's rule (pacing_schedule.hpp) is the one the admission replays.
      const PacingSchedule::Due due = schedule.next(steady_s(Clock::now()), slot->sensor_time_s);
      if (due.step == PacingSchedule::Step::kRestarted) ++counters_.pacing_resyncs;
      if (due.step == PacingSchedule::Step::kCatchUpBegins) ++counters_.pacing_catch_ups;
      if (due.step == PacingSchedule::Step::kStarted ||
          due.step == PacingSchedule::Step::kRestarted) {
        sender_clock_offset_s_.store(*schedule.offset_s(), std::memory_order_relaxed);
      }
      const Clock::time_point deadline{
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(due.at_s))};
      std::this_thread::sleep_until(deadline);
      const auto late_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(
          0,
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - deadline).count()));
      store_max(counters_.pacing_error_ns_max, late_ns);
      counters_.pacing_error.observe(static_cast<double>(late_ns) * 1e-9);
    }
    const bool data = slot->channel == core::PacketChannel::kData;
    const auto& to = data ? data_to : telemetry_to;
    // mute_output sets muted_ then waits while sending_: with both sequentially consistent, a
    // packet either left before it returned or never leaves.
    sending_.store(true, std::memory_order_seq_cst);
    if (muted_.load(std::memory_order_seq_cst)) {
      sending_.store(false, std::memory_order_release);
      ++discarded;
      packets_->give_back(slot);
      continue;
    }
    (data ? data_socket : telemetry_socket)
        .send_to(asio::buffer(slot->bytes.data(), slot->size), to, 0, ec);
    sending_.store(false, std::memory_order_release);
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
      frame_last_queued_ns = slot->queued_ns;
      frame_last_sent = Clock::now();
    } else {
      ++counters_.telemetry_packets_out;
    }
    packets_->give_back(slot);
  }
  // How much a reinitialisation cut short (a debug line: a storm of them would flood the log).
  if (discarded > 0) {
    spdlog::debug("sensor {}: {} packets of the configuration before discarded", settings_.name,
                  discarded);
  }
}

void SensorRuntime::mute_output() {
  muted_.store(true, std::memory_order_seq_cst);
  while (sending_.load(std::memory_order_seq_cst)) std::this_thread::yield();
}

}  // namespace lidaremu::daemon
