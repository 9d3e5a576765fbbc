// The Hesai unit's PTC answers (ptc_server.hpp) and the TCP server that carries them.
#include "lidaremu/daemon/vendor/hesai/ptc_server.hpp"

#include <cmath>

#include "lidaremu/core/hesai.hpp"

namespace lidaremu::daemon {
namespace ptc = core::hesai::ptc;
namespace {

std::array<std::uint8_t, 4> ipv4_bytes(const std::string& text) {
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address_v4(text, ec);
  return ec ? std::array<std::uint8_t, 4>{} : a.to_bytes();
}

std::uint16_t be16(std::span<const std::uint8_t> p, std::size_t at) {
  return static_cast<std::uint16_t>((p[at] << 8) | p[at + 1]);
}

}  // namespace

HesaiApi::HesaiApi(const SensorSettings& active, Reconfigure reconfigure)
    : active_(active), reconfigure_(std::move(reconfigure)) {}

ptc::Config HesaiApi::config() const {
  ptc::Config c;
  c.ip = ipv4_bytes(active_.sensor_ip);
  c.mask = {255, 255, 255, 0};
  c.destination_ip = ipv4_bytes(active_.out.host);
  c.destination_port = active_.out.port;
  c.gps_port = active_.telemetry.port;
  c.spin_rate = static_cast<std::uint16_t>(std::lround(active_.pattern.rpm));
  c.sync = sync_;
  c.sync_angle = sync_angle_;
  c.start_angle = start_angle_;
  c.stop_angle = stop_angle_;
  c.clock_source = clock_source_;
  c.trigger_method = trigger_method_;
  const auto* mode = active_.model->hesai.return_mode(active_.pipeline.return_mode);
  c.return_mode = mode != nullptr ? mode->ptc_code : ptc::kPtcLastStrongest;
  c.standby = standby_;
  return c;
}

std::uint8_t HesaiApi::apply(const SensorSettings& next, const std::string& remote) {
  // A unit acknowledges the value it already has at once. nebula sets an AT128's spin rate at
  // every start: rebuilding for it would cost each start a reinitialisation and the frames the
  // engine sends meanwhile.
  if (next == active_) return ptc::kOk;
  if (!reconfigure_(next, remote).ok()) return ptc::kInvalidData;
  active_ = next;
  return ptc::kOk;
}

std::vector<std::uint8_t> HesaiApi::handle(std::uint8_t command,
                                           std::span<const std::uint8_t> payload,
                                           const std::string& remote) {
  const auto reply = [command](std::uint8_t code, std::span<const std::uint8_t> body = {}) {
    return ptc::frame(command, code, body);
  };
  const auto needs = [&](std::size_t bytes) { return payload.size() >= bytes; };
  const core::SensorModel& model = *active_.model;
  switch (command) {
    case ptc::kGetInventory: {
      const auto serial = std::to_string(active_.identity.serial_number);
      const std::uint64_t sn = active_.identity.serial_number;
      return reply(ptc::kOk,
                   ptc::inventory_payload(
                       {.serial = serial,
                        .date_of_manufacture = "2024-01-01",
                        .mac = {0x00, 0x1C, 0x79, static_cast<std::uint8_t>(sn >> 16),
                                static_cast<std::uint8_t>(sn >> 8), static_cast<std::uint8_t>(sn)},
                        .software_version = "lidaremu",
                        .hardware_version = model.hesai.product_name,
                        .control_firmware = "lidaremu",
                        .sensor_firmware = "lidaremu",
                        .model = model.hesai.ptc_model,
                        .lines = static_cast<std::uint8_t>(model.channels),
                        .size = model.hesai.ptc_inventory_bytes}));
    }
    case ptc::kGetCalibration: {
      // The CSV, or the AT128's binary correction byte for byte (nebula and the SDK parse it
      // from its EE FF).
      const std::string file = core::hesai::calibration_file(model);
      const std::vector<std::uint8_t> bytes(file.begin(), file.end());
      return reply(ptc::kOk, bytes);
    }
    case ptc::kGetFiretimes: {
      // The firetime file, as --firetimes-out writes it; a model without one does not know the
      // command (the Hesai SDK then keeps the file it was given, or none).
      const std::string file = core::hesai::firetimes_file(model);
      if (file.empty()) return reply(ptc::kUnsupportedCommand);
      const std::vector<std::uint8_t> bytes(file.begin(), file.end());
      return reply(ptc::kOk, bytes);
    }
    case ptc::kGetConfig:
      return reply(ptc::kOk, ptc::config_payload(config()));
    case ptc::kGetStatus: {
      const auto up = std::chrono::steady_clock::now() - started_;
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(up).count();
      return reply(ptc::kOk, ptc::status_payload(
                                 {.uptime_s = static_cast<std::uint32_t>(seconds),
                                  .motor_rpm = static_cast<std::uint16_t>(
                                      standby_ ? 0 : std::lround(active_.pattern.rpm)),
                                  .operating_minutes = static_cast<std::uint32_t>(seconds / 60),
                                  .size = model.hesai.ptc_status_bytes}));
    }
    case ptc::kGetLidarRange: {
      const std::array<std::uint8_t, 5> range{
          0, static_cast<std::uint8_t>(start_angle_ >> 8), static_cast<std::uint8_t>(start_angle_),
          static_cast<std::uint8_t>(stop_angle_ >> 8), static_cast<std::uint8_t>(stop_angle_)};
      return reply(ptc::kOk, range);
    }
    case ptc::kGetPtpConfig: {
      if (model.hesai.ptp_automotive) {
        // Status 0, automotive, domain 0, L2, TSN switch: what nebula configures an OT128 to,
        // so it sends no set command.
        const std::array<std::uint8_t, 5> config{0, ptc::kPtpProfileAutomotive, 0,
                                                 ptc::kPtpNetworkL2, ptc::kPtpSwitchTsn};
        return reply(ptc::kOk, config);
      }
      // Status 0 (enabled), 1588v2, domain 0, UDP/IP, intervals 1, 1, 0 (2^n seconds).
      const std::array<std::uint8_t, 7> config{0, 0, 0, 0, 1, 1, 0};
      return reply(ptc::kOk, config);
    }
    case ptc::kGetPtpLockOffset: {
      const std::array<std::uint8_t, 1> offset{ptp_lock_offset_};
      return reply(ptc::kOk, offset);
    }
    case ptc::kSetPtpLockOffset:
      if (!needs(1)) return reply(ptc::kInvalidParameter);
      ptp_lock_offset_ = payload[0];
      return reply(ptc::kOk);
    case ptc::kGetHighResolution: {
      // Exactly one byte, as nebula requires: 0, the standard resolution every packet states.
      const std::array<std::uint8_t, 1> off{0};
      return reply(ptc::kOk, off);
    }
    case ptc::kSetHighResolution:
      // Accepted, not emulated: the packets keep stating standard resolution (operational
      // state 2), which is what nebula decodes by; refusing would end nebula's default start
      // (hires_mode: true), which treats any error here as fatal.
      if (!needs(1) || payload[0] > 1) return reply(ptc::kInvalidParameter);
      return reply(ptc::kOk);
    case ptc::kGetUpCloseBlockage: {
      const std::array<std::uint8_t, 1> off{0};  // detection off: no blockage codes sent
      return reply(ptc::kOk, off);
    }
    case ptc::kSetUpCloseBlockage:
      if (!needs(1)) return reply(ptc::kInvalidParameter);
      return reply(ptc::kOk);  // accepted, not emulated (no distance codes 1-3 are sent)
    case ptc::kGetLidarMonitor: {
      // Input current, voltage, power and phase offset: not emulated, reported as zeros.
      const std::array<std::uint8_t, ptc::kLidarMonitorSize> monitor{};
      return reply(ptc::kOk, monitor);
    }
    case ptc::kSetSpinRate: {
      if (!needs(2)) return reply(ptc::kInvalidParameter);
      SensorSettings next = active_;
      const auto r = core::make_rpm_scan(model, be16(payload, 0));
      if (!r.pattern) return reply(ptc::kInvalidParameter);
      next.pattern = *r.pattern;
      return reply(apply(next, remote));
    }
    case ptc::kSetReturnMode: {
      if (!needs(1)) return reply(ptc::kInvalidParameter);
      const auto* mode = model.hesai.return_mode_of_ptc(payload[0]);
      if (mode == nullptr) return reply(ptc::kInvalidParameter);
      SensorSettings next = active_;
      next.pipeline.return_mode = mode->return_mode;
      return reply(apply(next, remote));
    }
    case ptc::kSetDestination: {
      // Destination address, point-cloud port, GPS port.
      if (!needs(8)) return reply(ptc::kInvalidParameter);
      const auto port = be16(payload, 4);
      const auto gps_port = be16(payload, 6);
      if (port == 0 || gps_port == 0) return reply(ptc::kInvalidParameter);
      SensorSettings next = active_;
      const std::string host = std::to_string(payload[0]) + "." + std::to_string(payload[1]) + "." +
                               std::to_string(payload[2]) + "." + std::to_string(payload[3]);
      next.out = {host, port};
      next.telemetry = {host, gps_port};
      return reply(apply(next, remote));
    }
    case ptc::kSetStandbyMode:
      if (!needs(1) || payload[0] > 1) return reply(ptc::kInvalidParameter);
      standby_ = payload[0];
      return reply(ptc::kOk);
    case ptc::kSetClockSource:
      if (!needs(1)) return reply(ptc::kInvalidParameter);
      clock_source_ = payload[0];
      return reply(ptc::kOk);
    case ptc::kSetTriggerMethod:
      if (!needs(1)) return reply(ptc::kInvalidParameter);
      trigger_method_ = payload[0];
      return reply(ptc::kOk);
    case ptc::kSetSyncAngle:
      if (!needs(3)) return reply(ptc::kInvalidParameter);
      sync_ = payload[0];
      sync_angle_ = be16(payload, 1);
      return reply(ptc::kOk);
    case ptc::kSetLidarRange:
      // Method 0: one range for every channel, start and stop in 0.1 degree.
      if (!needs(5) || payload[0] != 0) return reply(ptc::kInvalidParameter);
      start_angle_ = be16(payload, 1);
      stop_angle_ = be16(payload, 3);
      return reply(ptc::kOk);
    case ptc::kSetPtpConfig:
    case ptc::kSetControlPort:
    case ptc::kSetRotateDirection:
    case ptc::kReset:
      return reply(ptc::kOk);  // accepted; the emulated unit has no PTP, one port, one direction
    default:
      return reply(ptc::kUnsupportedCommand);
  }
}

RequestFraming ptc_framing(PtcHandler handler) {
  RequestFraming f;
  f.name = "Hesai PTC";
  f.max_request_bytes = ptc::kHeaderSize + ptc::kMaxPayload;
  f.idle_closes = false;  // the Hesai SDK holds its connection from start (request_server.hpp)
  f.request_size = [](std::span<const std::uint8_t> buffered) -> std::optional<std::size_t> {
    if (buffered.size() < ptc::kHeaderSize) {
      // Not PTC (a browser, a stray client): the connection ends at its first wrong byte.
      const bool magic = (buffered.empty() || buffered[0] == ptc::kMagic0) &&
                         (buffered.size() < 2 || buffered[1] == ptc::kMagic1);
      return magic ? std::optional<std::size_t>(0) : std::nullopt;
    }
    const auto header = ptc::parse_header(buffered.first(ptc::kHeaderSize));
    // More than a request can be: the connection ends.
    if (!header || header->payload_size > ptc::kMaxPayload) return std::nullopt;
    const std::size_t whole = ptc::kHeaderSize + header->payload_size;
    return buffered.size() >= whole ? whole : 0;
  };
  f.answer = [handler = std::move(handler)](
                 std::span<const std::uint8_t> request,
                 const std::string& remote) -> std::optional<std::string> {
    const auto header = ptc::parse_header(request.first(ptc::kHeaderSize));
    const auto reply = handler(header->command, request.subspan(ptc::kHeaderSize), remote);
    return std::string(reply.begin(), reply.end());
  };
  return f;
}

}  // namespace lidaremu::daemon
