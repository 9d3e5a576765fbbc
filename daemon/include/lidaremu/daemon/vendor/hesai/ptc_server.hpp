#pragma once
// What an emulated Hesai unit answers on TCP 9347 (PTC, FORMATS-HESAI-ROBOSENSE.md): the
// inventory with the model byte nebula takes its sensor model from, the calibration CSV, config
// and status, and the set-commands nebula's setup_sensor sends, applied to the running unit.
// The logic (HesaiApi) apart from the socket (a RequestServer), as the other units' APIs.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/hesai/ptc.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/net/request_server.hpp"
#include "lidaremu/daemon/vendor/reconfigure.hpp"

namespace lidaremu::daemon {

class HesaiApi {
 public:
  HesaiApi(const SensorSettings& active, Reconfigure reconfigure);
  // One request's command and payload, from the client at `remote`; the whole response (header
  // and payload).
  std::vector<std::uint8_t> handle(std::uint8_t command, std::span<const std::uint8_t> payload,
                                   const std::string& remote = "127.0.0.1");
  [[nodiscard]] const SensorSettings& active() const { return active_; }

 private:
  [[nodiscard]] core::hesai::ptc::Config config() const;
  // Applies `next` to the running unit; the PTC return code.
  std::uint8_t apply(const SensorSettings& next, const std::string& remote);
  SensorSettings active_;
  Reconfigure reconfigure_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  // Accepted and reported back, not emulated (the unit keeps spinning and sending).
  std::uint8_t standby_ = 0;
  std::uint8_t clock_source_ = 0;
  std::uint8_t trigger_method_ = 0;
  std::uint8_t sync_ = 0;
  std::uint16_t sync_angle_ = 0;
  std::uint16_t start_angle_ = 0;
  std::uint16_t stop_angle_ = 3600;
  std::uint8_t ptp_lock_offset_ = core::hesai::ptc::kPtpLockOffset;
};

// A request's command, payload and client address; the whole response.
using PtcHandler = std::function<std::vector<std::uint8_t>(
    std::uint8_t, std::span<const std::uint8_t>, const std::string& remote)>;

// PTC on TCP (request_server.hpp): a request is its 8-byte header and the payload it announces
// (at most ptc::kMaxPayload, or the connection closes, as it does at a byte that is not PTC); an
// idle connection stays open (the Hesai SDK holds one from its start and asks only once data
// flows).
RequestFraming ptc_framing(PtcHandler handler);

}  // namespace lidaremu::daemon
