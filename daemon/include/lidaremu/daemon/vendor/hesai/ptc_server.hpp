#pragma once
// What an emulated Hesai unit answers on TCP 9347 (PTC, FORMATS-HESAI-ROBOSENSE.md): the
// inventory with the model byte nebula takes its sensor model from, the calibration CSV, config
// and status, and the set-commands nebula's setup_sensor sends, applied to the running unit.
// The logic (HesaiApi) apart from the socket (PtcServer), as the other units' APIs.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lidaremu/core/hesai/ptc.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/net/http_server.hpp"
#include "lidaremu/daemon/vendor/reconfigure.hpp"

namespace lidaremu::daemon {

class HesaiApi {
 public:
  HesaiApi(const SensorSettings& active, Reconfigure reconfigure);
  // One request's command and payload; the whole response (header and payload).
  std::vector<std::uint8_t> handle(std::uint8_t command, std::span<const std::uint8_t> payload);
  [[nodiscard]] const SensorSettings& active() const { return active_; }

 private:
  [[nodiscard]] core::hesai::ptc::Config config() const;
  // Applies `next` to the running unit; the PTC return code.
  std::uint8_t apply(const SensorSettings& next);
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

// TCP server of PTC requests: each connection reads header and payload (at most
// ptc::kMaxPayload, or it closes), answers, and reads the next. An idle connection stays open
// (the Hesai SDK holds one from its start and asks only once data flows); a request begun must
// be complete within the request timeout; when the connection table is full, an idle connection
// gives way to a newcomer.
class PtcServer {
 public:
  using Handler =
      std::function<std::vector<std::uint8_t>(std::uint8_t, std::span<const std::uint8_t>)>;
  PtcServer(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
            Handler handler, ServerLimits limits = {});
  ~PtcServer();
  PtcServer(const PtcServer&) = delete;
  PtcServer& operator=(const PtcServer&) = delete;
  [[nodiscard]] std::uint16_t port() const;

 private:
  void accept_next();
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<Handler> handler_;
  ServerLimits limits_;
  std::shared_ptr<ConnectionTable> connections_;
};

}  // namespace lidaremu::daemon
