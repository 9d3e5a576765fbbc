#include "lidaremu/daemon/runtime/emulated_sensor.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <fstream>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/scan_choice.hpp"
#include "sensor_runtime_detail.hpp"

namespace lidaremu::daemon {
namespace {

void add(LivoxSdkCounts& to, const LivoxSdkCounts& more) {
  to.answered += more.answered;
  to.malformed += more.malformed;
  to.not_requests += more.not_requests;
  to.unknown += more.unknown;
  to.trailing_bytes += more.trailing_bytes;
  to.oversized += more.oversized;
  to.kernel_drops += more.kernel_drops;
}

void add(ConnectionCounts& to, const ConnectionCounts& more) {
  to.requests += more.requests;
  to.refused += more.refused;
  to.evicted += more.evicted;
  to.request_timeouts += more.request_timeouts;
  to.write_timeouts += more.write_timeouts;
  to.malformed += more.malformed;
}

// Port by port, matched by API name.
void add(std::vector<ApiPortCounts>& to, const std::vector<ApiPortCounts>& more) {
  for (const auto& port : more) {
    const auto same =
        std::find_if(to.begin(), to.end(), [&](const auto& p) { return p.api == port.api; });
    if (same == to.end()) {
      to.push_back(port);
    } else {
      add(same->counts, port.counts);
    }
  }
}

}  // namespace

EmulatedSensor::EmulatedSensor(const SensorSettings& settings, const SensorServices& services,
                               std::shared_ptr<SensorHistory> history)
    : services_(services),
      configured_(settings),
      rebuild_timer_(services.io),
      history_(history ? std::move(history) : std::make_shared<SensorHistory>()) {
  runtime_ = std::make_unique<SensorRuntime>(settings, services.materials, services.recorders,
                                             history_->counters);
}

EmulatedSensor::~EmulatedSensor() = default;

void EmulatedSensor::write_metadata(const SensorSettings& s) const {
  if (!s.calibration_out.empty()) {
    std::ofstream out(s.calibration_out);
    out << core::family_of(*s.model).calibration_file(*s.model);
    if (!out) {
      throw std::runtime_error("cannot write calibration to " + s.calibration_out.string());
    }
  }
  if (!s.firetimes_out.empty()) {
    std::ofstream out(s.firetimes_out);
    out << core::family_of(*s.model).firetimes_file(*s.model);
    if (!out) {
      throw std::runtime_error("cannot write firing times to " + s.firetimes_out.string());
    }
  }
  if (s.metadata_out.empty()) return;
  const core::ouster::MetadataSettings m{s.out.host, s.out.port, s.telemetry.port, s.ouster};
  std::ofstream out(s.metadata_out);
  out << core::ouster::metadata_json(s.pattern, s.identity, m) << '\n';
  if (!out) throw std::runtime_error("cannot write metadata to " + s.metadata_out.string());
}

void EmulatedSensor::start() {
  write_metadata(runtime_->settings());
  runtime_->warm_up();  // start-up and reloads: before the engine can send
  runtime_->start();
  start_api();
}

void EmulatedSensor::start_api() {
  const SensorSettings& s = runtime_->settings();
  if (s.sensor_ip.empty() || s.api_port == 0) return;
  const Reconfigure apply = [this, alive = std::weak_ptr<bool>(alive_)](
                                const SensorSettings& next,
                                const std::string& requester) -> ReconfigureResult {
    if (alive.expired()) return {"this sensor was removed by a reload"};
    return reconfigure(next, requester);
  };
  try {
    const auto initializing = [this, alive = std::weak_ptr<bool>(alive_)] {
      return !alive.expired() && this->initializing();
    };
    api_ = make_unit_api({s, services_.io, services_.browsers, apply, initializing});
    api_note_ = api_ ? api_->note() : "";
  } catch (const std::exception& e) {
    // Asked for explicitly: a failure is fatal. By default (port 80), the packets still flow.
    if (s.api_port_explicit) throw;
    spdlog::warn("sensor {}: no web API: {}", s.name, e.what());
    api_.reset();
    api_note_ = ", no API (" + std::string(e.what()) + ")";
  }
}

std::optional<ReconfigureResult> EmulatedSensor::refuse_destination(const SensorSettings& next,
                                                                    const std::string& requester) {
  const SensorSettings& now = pending_ ? *pending_ : runtime_->settings();
  if (next.out == now.out && next.telemetry == now.telemetry) return std::nullopt;
  const std::string& name = now.name;
  for (const Endpoint* to : {&next.out, &next.telemetry}) {
    const Endpoint& was = to == &next.out ? now.out : now.telemetry;
    if (to->host == was.host) continue;  // the operator's, or allowed when it was set
    if (std::string why = services_.destinations.refusal(to->host, requester); !why.empty()) {
      if (runtime_detail::worth_logging(++history_->destinations_refused)) {
        spdlog::warn("sensor {}: {} asked to send to {}: {} ({} refused so far)", name, requester,
                     to->to_string(), why, history_->destinations_refused);
      }
      return ReconfigureResult{why, true};
    }
  }
  if (runtime_detail::worth_logging(++history_->destinations_accepted)) {
    spdlog::info("sensor {}: data to {}, telemetry to {}, as {} asked ({} changes so far)", name,
                 next.out.to_string(), next.telemetry.to_string(), requester,
                 history_->destinations_accepted);
  }
  return std::nullopt;
}

ReconfigureResult EmulatedSensor::reconfigure(const SensorSettings& next,
                                              const std::string& requester) {
  if (auto refused = refuse_destination(next, requester)) return *refused;
  // An Ouster stops its stream at the command: what is queued in the old configuration (or the
  // one before, still waiting) never follows the answer, and it reports INITIALIZING until the
  // new one streams.
  if (core::family_of(*next.model).reinitialisation_stops_stream()) {
    runtime_->mute_output();
    stream_stopped_at_ = std::chrono::steady_clock::now();
  }
  if (!may_rebuild_now()) {
    // Applied as soon as the previous pipeline has sent its last frame (a few frame periods) and
    // the last build is kRebuildEvery old, as a real unit's reinitialisation takes its time.
    // Settings were checked by the API; a pipeline that then fails to start is logged and the
    // running one kept.
    pending_ = next;
    apply_pending_when_due();
    return {};
  }
  return {apply(next)};
}

void EmulatedSensor::retired() {
  retiring_ = false;
  apply_pending_when_due();
}

bool EmulatedSensor::may_rebuild_now() const {
  return !retiring_ && !rebuild_timer_armed_ &&
         std::chrono::steady_clock::now() >= last_build_ + kRebuildEvery;
}

void EmulatedSensor::apply_pending_when_due() {
  if (!pending_ || retiring_ || rebuild_timer_armed_) return;
  if (!may_rebuild_now()) {
    rebuild_timer_armed_ = true;
    rebuild_timer_.expires_at(last_build_ + kRebuildEvery);
    rebuild_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](auto) {
      if (alive.expired()) return;
      rebuild_timer_armed_ = false;
      apply_pending_when_due();
    });
    return;
  }
  const SensorSettings next = std::move(*pending_);
  pending_.reset();
  (void)apply(next);  // a failure is logged there
}

std::string EmulatedSensor::apply(const SensorSettings& next_settings) {
  SensorSettings next = next_settings;
  next.hits.port = runtime_->bound_hits().port;        // the engine keeps sending where it did
  next.pipeline.params.weather = runtime_->weather();  // and the weather stays as set
  const SensorSettings previous = runtime_->settings();
  // The old pipeline frees its port at once and finishes what it accepted on its own threads,
  // which the reaper waits for; the io thread goes on. Its handlers still queued see
  // operation_aborted, and it is destroyed after them.
  runtime_->stop_input();
  retiring_ = true;
  // Its socket's and capture's own counts go on in the history (the rest of its counters are
  // the new pipeline's too); what its capture drops while draining, once it has.
  history_->kernel_drops += runtime_->input_kernel_drops();
  const std::uint64_t capture_dropped_at_stop = runtime_->capture_dropped();
  history_->capture_dropped += capture_dropped_at_stop;
  // Both halves hold the old pipeline: the last reference goes with `done`, on the io thread.
  std::shared_ptr<SensorRuntime> old(std::move(runtime_));
  services_.reaper.retire([old] { old->join(); },
                          [old, alive = std::weak_ptr<bool>(alive_), history = history_,
                           capture_dropped_at_stop, &reaper = services_.reaper, this]() mutable {
                            history->capture_dropped +=
                                old->capture_dropped() - capture_dropped_at_stop;
                            old.reset();  // freed here; then its memory returned
                            reaper.return_freed_memory();
                            if (!alive.expired()) retired();
                          });
  const auto make = [&](const SensorSettings& s) {
    return std::make_unique<SensorRuntime>(s, services_.materials, services_.recorders,
                                           history_->counters);
  };
  std::string error;
  try {
    runtime_ = make(next);
    runtime_->start();
    write_metadata(next);
  } catch (const std::exception& e) {
    spdlog::error("sensor {}: reinitialisation failed ({}); back to the previous settings",
                  previous.name, e.what());
    runtime_ = make(previous);
    runtime_->start();
    error = e.what();
  }
  last_build_ = std::chrono::steady_clock::now();
  if (!error.empty()) return error;
  // A client may reinitialise in a loop: the line at the 1st, 2nd, 3rd, 10th, 100th... time, so
  // that the log (and a pipe nobody reads fast enough) never holds the io thread up.
  if (runtime_detail::worth_logging(++history_->reinitialisations)) {
    spdlog::info("sensor {}: reinitialised ({} so far): {}", next.name, history_->reinitialisations,
                 describe());
  }
  return {};
}

bool EmulatedSensor::initializing() const {
  // Until the new configuration's first packet; at most as long as a unit takes, so that an
  // engine which sends nothing yet (or the old mode's beams) leaves the host waiting no longer
  // than a real reinitialisation would.
  constexpr auto kAtMost = std::chrono::seconds(2);
  if (!stream_stopped_at_) return false;
  if (std::chrono::steady_clock::now() - *stream_stopped_at_ > kAtMost) return false;
  return pending_.has_value() || !runtime_->streaming();
}

void EmulatedSensor::drain_and_stop() { runtime_->drain_and_stop(); }
void EmulatedSensor::stop_input() {
  // Retired: a request still in flight on its APIs' open connections (their sessions outlive
  // the servers) is refused from now on, not applied to a pipeline whose input is gone.
  alive_.reset();
  runtime_->stop_input();
  // The APIs' ports too: a reload's sensors bind the same ones. Requests in flight finish.
  // Its counts go on in the history, for a reload's sensor of the same name.
  if (!counts_folded_) {
    counts_folded_ = true;
    history_->kernel_drops += runtime_->input_kernel_drops();
    capture_dropped_folded_ = runtime_->capture_dropped();
    history_->capture_dropped += capture_dropped_folded_;
    if (api_) {
      if (const auto livox = api_->livox_sdk_counts()) add(history_->livox_sdk, *livox);
      add(history_->api_ports, api_->port_counts());
    }
  }
  api_.reset();
}
void EmulatedSensor::join() { runtime_->join(); }

std::string EmulatedSensor::describe() const {
  const SensorSettings& st = runtime_->settings();
  std::string line =
      "sensor " + st.name + " (" + std::string(st.model->name) + ", " +
      std::to_string(st.pattern.columns_per_frame) + " columns at " +
      std::to_string(static_cast<int>(std::lround(1.0 / st.pattern.frame_period_s))) + " Hz";
  if (core::scan_kind(*st.model) == core::ScanKind::kLidarMode) {
    line += ", " + std::string(core::ouster::profile_name(st.ouster.profile));
  }
  // A side channel drivers wait for is named (RoboSense's DIFOP); the others are telemetry.
  const core::FamilyPorts ports = core::family_of(*st.model).default_ports();
  const std::string side = ports.telemetry_name == "DIFOP" ? "DIFOP" : "telemetry";
  line += ") hits " + runtime_->bound_hits().to_string() + " -> data " + st.out.to_string() + ", " +
          side + " " + st.telemetry.to_string();
  if (!st.sensor_ip.empty()) line += ", from " + st.sensor_ip;
  if (st.pattern.table) line += ", scan table " + st.pattern.table->source;
  line += ", about " + std::to_string(std::lround(memory_estimate_bytes() / 1048576.0)) + " MiB";
  return line + api_note_;
}

SensorSnapshot EmulatedSensor::snapshot() const {
  SensorSnapshot s = snapshot_of(*runtime_);
  const SensorHistory& h = *history_;
  s.reinitialisations = h.reinitialisations;
  s.destinations_accepted = h.destinations_accepted;
  s.destinations_refused = h.destinations_refused;
  if (counts_folded_) {  // the live pipeline's and API's counts are in the history already
    s.kernel_drops = 0;
    s.capture_dropped = runtime_->capture_dropped() - capture_dropped_folded_;
  }
  s.kernel_drops += h.kernel_drops;
  s.capture_dropped += h.capture_dropped;
  s.api_ports = h.api_ports;
  const auto livox = api_ ? api_->livox_sdk_counts() : std::nullopt;
  if (livox || h.livox_sdk != LivoxSdkCounts{}) {
    s.livox_sdk = h.livox_sdk;
    if (livox) add(*s.livox_sdk, *livox);
  }
  if (api_) add(s.api_ports, api_->port_counts());
  return s;
}

std::size_t EmulatedSensor::memory_estimate_bytes() const {
  return SensorRuntime::estimated_bytes(runtime_->settings(), services_.recorders);
}

void EmulatedSensor::drained() {
  // What its capture dropped while it drained, beyond what stop_input counted.
  if (counts_folded_) {
    history_->capture_dropped += runtime_->capture_dropped() - capture_dropped_folded_;
    capture_dropped_folded_ = runtime_->capture_dropped();
  }
}

}  // namespace lidaremu::daemon
