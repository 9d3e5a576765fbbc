#pragma once
// The daemon's own HTTP endpoint (--http, default 127.0.0.1:9880): health, Prometheus metrics,
// a JSON API to read the sensors and to read and set their weather, and each sensor's beam
// table. Requests that change state are PUTs with a JSON body, from a tool or an allowed page
// (browser_guard.hpp), with the token when one is configured (Authorization: Bearer TOKEN).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lidaremu/daemon/net/browser_guard.hpp"
#include "lidaremu/daemon/net/http_server.hpp"
#include "lidaremu/daemon/runtime/emulated_sensor.hpp"
#include "lidaremu/daemon/view/live_view.hpp"

namespace lidaremu::daemon {

class ControlApi {
 public:
  // view: the live view whose page (/view/) and counters this endpoint serves (may be null);
  // captures: the --pcap and --record files, whose failures /healthz and /metrics show.
  ControlApi(std::vector<std::unique_ptr<EmulatedSensor>>& sensors, std::string token,
             const LiveView* view = nullptr, BrowserPolicy browsers = {},
             std::vector<const CaptureFile*> captures = {});
  // Runs on the io_context thread, as every sensor's input does.
  HttpResponse handle(const HttpRequest& request);

 private:
  [[nodiscard]] std::string metrics() const;
  [[nodiscard]] EmulatedSensor* find(const std::string& name) const;
  HttpResponse weather(EmulatedSensor& sensor, const HttpRequest& request);
  HttpResponse beams(const EmulatedSensor& sensor, const HttpRequest& request);
  [[nodiscard]] HttpResponse view_page(const HttpRequest& request) const;

  // A sensor's beam table as last served, kept while its scan and conventions stay: an OS1-128
  // 2048x10's is 6 MiB and takes the io thread tens of milliseconds to compute.
  struct BeamTable {
    core::ScanPattern pattern;
    protocol::EngineConventions engine;
    std::shared_ptr<const std::string> body;
  };

  std::vector<std::unique_ptr<EmulatedSensor>>& sensors_;
  std::string token_;
  const LiveView* view_;
  BrowserPolicy browsers_;
  std::vector<const CaptureFile*> captures_;
  std::map<std::string, BeamTable> beam_tables_;  // by sensor name
};

}  // namespace lidaremu::daemon
