#pragma once
// One emulated unit as the network sees it: its packet pipeline (SensorRuntime) and what it
// answers on its own address (its family's UnitApi: unit_api.hpp).
// A reinitialisation through the API replaces the pipeline with one built from the new settings,
// keeping the input port, so the engine keeps sending where it did.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "lidaremu/core/materials.hpp"
#include "lidaremu/daemon/net/browser_guard.hpp"
#include "lidaremu/daemon/net/destination_policy.hpp"
#include "lidaremu/daemon/ops/capture.hpp"
#include "lidaremu/daemon/ops/metrics.hpp"
#include "lidaremu/daemon/ops/reaper.hpp"
#include "lidaremu/daemon/runtime/sensor_runtime.hpp"
#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"
#include "lidaremu/daemon/vendor/unit_api.hpp"

namespace lidaremu::daemon {

// What every sensor is started with besides its own settings; the daemon's, for its whole life.
struct SensorServices {
  const core::MaterialTable& materials;
  boost::asio::io_context& io;
  Recorders recorders;
  BrowserPolicy browsers;          // who may change the unit's settings through its APIs
  Reaper& reaper;                  // waits for retired pipelines off the io thread
  DestinationPolicy destinations;  // where the units' APIs may point the streams
};

// What /metrics shows of a sensor beyond its live pipeline, kept under its name: its pipelines'
// counters, and the counts of pipelines, sockets and ports that are gone (those objects count
// their own: a socket's drops, a capture lane's, an API port's connections). An API's
// reinitialisation or a reload's sensor of the same name carries it on, so that every counter
// only goes up while a sensor of that name exists (a removed sensor's goes with it).
struct SensorHistory {
  KeptCounters counters;
  // io thread: the gone objects' counts, added to the live ones.
  std::uint64_t kernel_drops = 0;
  std::uint64_t capture_dropped = 0;
  std::uint64_t reinitialisations = 0;
  std::uint64_t destinations_accepted = 0;  // a stream's destination changed by an API's client
  std::uint64_t destinations_refused = 0;   // ... and refused (destination_policy.hpp)
  LivoxSdkCounts livox_sdk;
  std::vector<ApiPortCounts> api_ports;
};

class EmulatedSensor {
 public:
  // `history`: the counters of an earlier sensor of this name (a reload), or none: fresh ones.
  EmulatedSensor(const SensorSettings& settings, const SensorServices& services,
                 std::shared_ptr<SensorHistory> history = nullptr);
  ~EmulatedSensor();
  EmulatedSensor(const EmulatedSensor&) = delete;
  EmulatedSensor& operator=(const EmulatedSensor&) = delete;

  // Starts the pipeline and the APIs; throws with an actionable message.
  void start();
  void drain_and_stop();
  // drain_and_stop in two halves (SensorRuntime's): input off on the io thread, then the wait.
  void stop_input();
  void join();
  [[nodiscard]] const SensorRuntime& runtime() const { return *runtime_; }
  [[nodiscard]] SensorRuntime& runtime() { return *runtime_; }
  // The settings it was started with, before its API's clients changed any: a reload keeps the
  // sensor running, as it is, while the file still says the same.
  [[nodiscard]] const SensorSettings& configured() const { return configured_; }
  // One line for the start-up log: model, scan, where hits arrive and packets go, the API.
  [[nodiscard]] std::string describe() const;
  // What /metrics shows of it: its pipeline's counters, and its side channels' own.
  [[nodiscard]] SensorSnapshot snapshot() const;
  [[nodiscard]] const std::shared_ptr<SensorHistory>& history() const { return history_; }
  // What its pipeline holds once started (SensorRuntime::estimated_bytes), in bytes.
  [[nodiscard]] std::size_t memory_estimate_bytes() const;
  // The reaper's call once this sensor, stopped, has drained: its last counts into the history.
  void drained();

 private:
  ReconfigureResult reconfigure(const SensorSettings& next, const std::string& requester);
  // A change of a stream's host that the destination policy refuses (counted and logged either
  // way, with who asked); nothing when it may go ahead.
  std::optional<ReconfigureResult> refuse_destination(const SensorSettings& next,
                                                      const std::string& requester);
  [[nodiscard]] bool initializing() const;
  std::string apply(const SensorSettings& next);
  void retired();
  void apply_pending_when_due();
  // No pipeline retiring, no rebuild waiting, the last one kRebuildEvery ago.
  [[nodiscard]] bool may_rebuild_now() const;
  void write_metadata(const SensorSettings& s) const;
  void start_api();

  SensorServices services_;
  const SensorSettings configured_;
  // Pipelines are built on the io thread, and a client asking in a loop made it build 1,200 a
  // second (an OS1-64's): the churn of their memory starved a neighbouring sensor's physics on
  // two cores (test_daemon_hostile's storm). A real unit takes seconds to reinitialise: a build
  // starts at least kRebuildEvery after the last one ended, the latest settings winning, so the
  // io thread has that long for everyone else between builds however long one takes (an
  // OS1-64's: 600 ms under ThreadSanitizer, where the storm's client got 10 answers in 6 s).
  static constexpr std::chrono::milliseconds kRebuildEvery{100};
  boost::asio::steady_timer rebuild_timer_;
  bool rebuild_timer_armed_ = false;
  std::chrono::steady_clock::time_point last_build_{};  // when the last build ended
  std::unique_ptr<SensorRuntime> runtime_;
  // A previous pipeline still sending what it accepted (or the last build too recent): a
  // reinitialisation asked meanwhile waits in `pending_` (the latest one wins), so a storm of
  // them costs the io thread little and holds at most two pipelines per sensor.
  bool retiring_ = false;
  std::optional<SensorSettings> pending_;
  // A reinitialisation that stopped the stream at the command (an Ouster's): when.
  std::optional<std::chrono::steady_clock::time_point> stream_stopped_at_;
  // `alive_` tells a late request on the unit's API (its sessions may outlive this sensor, a
  // reload) that the sensor it would reconfigure is gone, or retired (stop_input resets it).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<UnitApi> api_;  // null: none (the family's units serve none, or no address)
  std::shared_ptr<SensorHistory> history_;
  // Its input stopped: the live pipeline's and API's counts are in history_ (stop_input).
  bool counts_folded_ = false;
  std::uint64_t capture_dropped_folded_ = 0;  // of the live pipeline, at stop_input
  std::string api_note_;
};

}  // namespace lidaremu::daemon
